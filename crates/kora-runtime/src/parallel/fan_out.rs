//! `parallel for`: fan-out on the branch pool (`parallel_pool`), one fresh interpreter per branch, results folded back in input order.
//!
//! The caller copies what branches need into `Portable` form once (the items,
//! the frame slots the body reads, module variables, the mock stack); each
//! branch rebuilds its inputs in its own heap, runs the body, and hands back
//! its answer as `Portable`. Items are taken in input order from one atomic
//! counter, so "later items are never started" holds for `first` and `break`.
//! Output is buffered per branch and written in input order afterwards.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use kora_check::hir::{self, Program};

use crate::agents::mock::Mock;
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::{Flow, Interp, ModState};
use crate::observe::span_buffer::SpanBuffer;
use crate::observe::trace::SpanKind;
use crate::parallel::record::{fan_out_effect, FanOutRecord};
use crate::value::portable::Portable;
use crate::value::Value;

/// Each module's variables as copies; one that cannot be copied keeps the error for its first reader.
type ModuleCopies = Vec<Vec<Result<Portable, Box<RtError>>>>;

/// Module variables of the caller, copied into a worker's heap the first time they are read.
pub(crate) struct LazyGlobals {
    snap: Arc<ModuleCopies>,
    loaded: Vec<Vec<bool>>,
}

impl LazyGlobals {
    fn new(snap: Arc<ModuleCopies>) -> LazyGlobals {
        let loaded = snap.iter().map(|m| vec![false; m.len()]).collect();
        LazyGlobals { snap, loaded }
    }

    #[inline]
    pub(crate) fn load(&mut self, globals: &mut [Vec<Value>], m: usize, g: usize) -> RtResult<()> {
        if self.loaded[m][g] {
            return Ok(());
        }
        self.loaded[m][g] = true;
        globals[m][g] = match &self.snap[m][g] {
            Ok(p) => p.to_value(),
            Err(e) => return Err(e.clone()),
        };
        Ok(())
    }

    /// A worker assigned the variable itself: its own value wins over the caller's.
    pub(crate) fn mark(&mut self, m: usize, g: usize) {
        self.loaded[m][g] = true;
    }
}

/// A `with mock` crossing into a branch: its answer, where it is, and the external member it mocks.
type PortableMock = (Portable, String, Option<(kora_check::hir::ExtId, String)>);

/// What every worker starts from: plain data, shared by reference across threads.
pub(crate) struct Seed {
    prog: Arc<Program>,
    globals: Arc<ModuleCopies>,
    mod_state: Vec<ModState>,
    mocks: Vec<PortableMock>,
    models: Option<crate::agents::analyze::SharedModels>,
    /// The enclosing `with model(...)` / agent choices: a branch's calls use the same model.
    model_scope: Vec<String>,
    /// The enclosing budget: every branch spends from the same atomic meters.
    budget: crate::agents::budget::BudgetChain,
    /// The caller's run, continued in each branch's standard library.
    run: BranchRun,
    /// The caller is traced: each branch records its spans for the caller to adopt.
    pub(crate) traced: bool,
    externals: Option<Arc<crate::external::Registry>>,
    /// The caller's own cancellation (it is a branch of a `first` race): its branches'
    /// tokens are children of it, so cancelling the caller reaches their calls.
    cancel: Option<kora_models::Cancel>,
}

/// What a branch's standard library continues from its caller: the run id, the arguments,
/// and the observers that follow the run into branches (a durable run's journal).
struct BranchRun {
    run_id: String,
    args: Vec<String>,
    branches: Vec<Arc<dyn crate::durable::effect::ForBranch>>,
    durable: bool,
    /// `p3.`: the caller's fourth fan-out; branch `i` is named `p3.i|`.
    prefix: String,
}

impl Seed {
    /// A fresh interpreter writing to `out`, with the caller's modules, mocks and models.
    pub(crate) fn interp<'o>(&self, out: &'o mut Vec<u8>, index: usize) -> Interp<'o> {
        let mut w = Interp::new(self.prog.clone(), out);
        let prefix = format!("{}{index}|", self.run.prefix);
        w.pending_run = Some(crate::stdlib::RunSettings {
            run_id: Some(self.run.run_id.clone()),
            args: self.run.args.clone(),
            observers: self
                .run
                .branches
                .iter()
                .map(|b| b.for_branch(&prefix))
                .collect(),
            branches: self.run.branches.clone(),
            prefix,
            durable: self.run.durable,
        });
        w.lazy = Some(Box::new(LazyGlobals::new(self.globals.clone())));
        w.mod_state = self.mod_state.clone();
        w.models = self.models.clone();
        w.externals = self.externals.clone();
        w.model_scope = self.model_scope.clone();
        // The mock stack crosses the boundary: a test that fans out stays mocked.
        w.mocks = self
            .mocks
            .iter()
            .map(|(v, at, member)| Mock {
                value: v.to_value(),
                at: at.clone(),
                member: member.clone(),
            })
            .collect();
        if !self.budget.is_unbudgeted() {
            w.adopt_budget(self.budget.clone());
        }
        // An isolated agent run from a branch that loses its race stops with it.
        w.cancel = self.cancel.clone();
        w
    }
}

/// How one branch ended.
enum Ended {
    Answer(Portable),
    NoAnswer,
    Break(Option<Portable>),
    Stopped,
    Raised(Box<RtError>),
}

struct BranchOut {
    ended: Ended,
    out: Vec<u8>,
    /// The branch's spans, when the caller is traced.
    spans: Option<SpanBuffer>,
}

/// The enclosing frame as a branch sees it: its function and the slots the body reads.
struct Frame0 {
    func: Arc<hir::Function>,
    cur_mod: usize,
    reads: Vec<(u32, Portable)>,
}

impl Interp<'_> {
    /// Copies what a worker needs from this interpreter (not the frame: see `exec_parallel`).
    pub(crate) fn seed(&mut self) -> RtResult<Seed> {
        let host = self.host();
        host.fanouts += 1;
        let run = BranchRun {
            run_id: host.run_id.clone(),
            args: host.args.clone(),
            branches: host.branches.clone(),
            durable: host.durable,
            prefix: format!("{}p{}.", host.prefix, host.fanouts - 1),
        };
        let mut globals = Vec::with_capacity(self.globals.len());
        for (m, vals) in self.globals.iter().enumerate() {
            let loaded = self.lazy.as_ref();
            let mut copies = Vec::with_capacity(vals.len());
            for (g, v) in vals.iter().enumerate() {
                // A worker seeding a nested fan-out copies only what it has itself.
                let copy = match loaded {
                    Some(l) if !l.loaded[m][g] => l.snap[m][g].clone(),
                    _ => Portable::of(v),
                };
                copies.push(copy);
            }
            globals.push(copies);
        }
        let mut mocks = Vec::with_capacity(self.mocks.len());
        for m in &self.mocks {
            mocks.push((Portable::of(&m.value)?, m.at.clone(), m.member.clone()));
        }
        Ok(Seed {
            prog: self.prog.clone(),
            globals: Arc::new(globals),
            mod_state: self.mod_state.clone(),
            mocks,
            models: self.models.clone(),
            model_scope: self.model_scope.clone(),
            budget: self.budget_chain(),
            run,
            traced: self.tracing.is_some(),
            externals: self.externals.clone(),
            cancel: self.cancel.clone(),
        })
    }

    pub(crate) fn exec_parallel(&mut self, p: &hir::ParallelFor) -> RtResult<Flow> {
        let iterable = self.eval(&p.iter)?;
        let items = crate::value::iter::collect(&iterable)?;
        let inputs = items
            .iter()
            .map(Portable::of)
            .collect::<RtResult<Vec<_>>>()?;
        drop(items);
        let Some(func) = self.frames().last().map(|f| f.closure.def.clone()) else {
            return Err(RtError::new(
                codes::IO,
                "a `parallel for` ran outside any frame",
            ));
        };
        let mut reads = Vec::with_capacity(p.reads.len());
        for &s in &p.reads {
            reads.push((s, Portable::of(&self.stack[self.base + s as usize])?));
        }
        let frame = Frame0 {
            func,
            cur_mod: self.cur_mod,
            reads,
        };
        let seed = self.seed()?;
        let op = format!("p{}", self.host().fanouts - 1);
        let effect = fan_out_effect(&op);
        let _ = self.flush_out();
        let replay = self.begin_fan_out(&effect)?;
        let span = self.span_open(SpanKind::FanOut, "parallel for");
        let mut outs = fan_out(
            &seed,
            &frame,
            p,
            &inputs,
            replay.as_ref().map(|r| &r.ran[..]),
        );
        let n = inputs.len();
        if span.is_some() {
            let mut buffers = Vec::new();
            let (mut finished, mut raised) = (0, false);
            for (i, o) in outs.iter_mut().enumerate() {
                let Some(o) = o else { continue };
                match o.ended {
                    Ended::Raised(_) => raised = true,
                    Ended::Stopped => {}
                    _ => finished += 1,
                }
                buffers.extend(o.spans.take().map(|b| (i, b)));
            }
            self.close_fan_out_span(buffers, n, finished, raised);
        }
        let (ran, winner) = finished_and_winner(&outs, p.first);
        let mut shown = String::new();
        for o in outs.iter().flatten() {
            shown.push_str(&String::from_utf8_lossy(&o.out));
        }
        let raised = outs
            .iter()
            .flatten()
            .any(|o| matches!(o.ended, Ended::Raised(_)));
        match &replay {
            Some(r) if !raised => {
                self.check_fan_out(&effect, r, &ran, winner)?;
                shown = r.shown.clone();
            }
            Some(_) => {}
            // Recorded (and synced) before anything is shown, so a kill in between replays it.
            None => {
                let record = match raised {
                    false => Ok(FanOutRecord {
                        ran,
                        winner,
                        shown: shown.clone(),
                    }),
                    true => Err("a branch raised".to_string()),
                };
                self.host().pipeline.finish(&effect, &record);
            }
        }
        // Output first, in input order, so a failure still shows what the branches printed.
        self.write(&shown)?;
        let finished = outs
            .iter()
            .flatten()
            .filter(|o| {
                matches!(
                    o.ended,
                    Ended::Answer(_) | Ended::NoAnswer | Ended::Break(_)
                )
            })
            .count();
        if let Some((i, e)) = outs.iter().enumerate().find_map(|(i, o)| match o {
            Some(BranchOut {
                ended: Ended::Raised(e),
                ..
            }) => Some((i, e)),
            _ => None,
        }) {
            let mut e = e.clone();
            e.message = format!(
                "branch {} of {n} raised ({finished} of {n} had finished): {}",
                i + 1,
                e.message
            );
            return Err(e);
        }
        let value = if p.first {
            winner
                .and_then(|i| outs[i].as_ref())
                .and_then(|o| match &o.ended {
                    Ended::Answer(v) | Ended::Break(Some(v)) => Some(v.to_value()),
                    _ => None,
                })
                .unwrap_or(Value::None)
        } else {
            let mut results = Vec::with_capacity(n);
            for o in outs.iter().flatten() {
                match &o.ended {
                    Ended::Answer(v) | Ended::Break(Some(v)) => results.push(v.to_value()),
                    Ended::NoAnswer => results.push(Value::None),
                    Ended::Break(None) | Ended::Stopped | Ended::Raised(_) => {}
                }
            }
            Value::list(results)
        };
        if let Some((t, ty)) = &p.into {
            if ty.is_known() && !crate::value::conform::conforms(&self.prog, &value, ty) {
                return Err(RtError::new(
                    codes::TYPE,
                    format!(
                        "the `parallel for` results must be `{ty}`, got {}",
                        crate::value::conform::describe(&self.prog, &value)
                    ),
                ));
            }
            self.assign(t, value)?;
        }
        Ok(Flow::Normal)
    }
}

/// Which branches finished (in input order), and the `first` winner: the earliest that answered.
fn finished_and_winner(outs: &[Option<BranchOut>], first: bool) -> (Vec<usize>, Option<usize>) {
    let mut ran = Vec::new();
    let mut winner = None;
    for (i, o) in outs.iter().enumerate() {
        let Some(o) = o else { continue };
        match o.ended {
            Ended::Answer(_) | Ended::Break(Some(_)) if first && winner.is_none() => {
                winner = Some(i);
                ran.push(i);
            }
            Ended::Answer(_) | Ended::NoAnswer | Ended::Break(_) => ran.push(i),
            Ended::Stopped | Ended::Raised(_) => {}
        }
    }
    (ran, winner)
}

/// Runs every branch on the branch pool; slot `i` holds branch `i`, `None` if it never started.
/// `only` (a resume) runs exactly the branches a journal says finished, with no stop flag
/// or winner racing them.
fn fan_out(
    seed: &Seed,
    frame: &Frame0,
    p: &hir::ParallelFor,
    inputs: &[Portable],
    only: Option<&[usize]>,
) -> Vec<Option<BranchOut>> {
    let n = inputs.len();
    let next = AtomicUsize::new(0);
    // A stop the killed process saw: `first` starts as if that branch had won, `break` as if it
    // had stopped the loop once reached.
    let seen = match only {
        None => seed
            .run
            .branches
            .iter()
            .filter_map(|b| b.stopped_at(&seed.run.prefix))
            .min(),
        Some(_) => None,
    };
    let limit = if p.first {
        usize::MAX
    } else {
        seen.unwrap_or(usize::MAX)
    };
    let winner = Arc::new(AtomicUsize::new(if p.first {
        seen.unwrap_or(usize::MAX)
    } else {
        usize::MAX
    }));
    let stop = Arc::new(AtomicBool::new(false));
    let calm = Arc::new(AtomicBool::new(false));
    // The tokens of branches running a live race (or inside a cancellable caller), by index.
    let running: Mutex<Vec<(usize, kora_models::Cancel)>> = Mutex::new(Vec::new());
    let cancellable = only.is_none() && (p.first || seed.cancel.is_some());
    let slots: Vec<Mutex<Option<BranchOut>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let width = match crate::parallel::pool::pool() {
        Some(pool) => pool.current_num_threads(),
        None => rayon::current_num_threads(),
    };
    let workers = width.clamp(1, only.map_or(n, <[usize]>::len).max(1));
    let work = || loop {
        if only.is_none() && stop.load(Ordering::Relaxed) {
            break;
        }
        let k = next.fetch_add(1, Ordering::Relaxed);
        let i = match only {
            Some(o) => match o.get(k) {
                Some(&i) if i < n => i,
                _ => break,
            },
            None => k,
        };
        // `first`: an earlier item already answered, so this one and every later one stay unstarted.
        if i >= n || i > limit || (only.is_none() && p.first && i > winner.load(Ordering::Acquire))
        {
            break;
        }
        let flag = if only.is_some() { &calm } else { &stop };
        // A resume replays recorded branches whole (`calm`), so only a live race stops losers.
        let race = (only.is_none() && p.first).then_some(&winner);
        let cancel = cancellable.then(|| {
            let token = seed
                .cancel
                .as_ref()
                .map_or_else(kora_models::Cancel::new, |c| c.child());
            lock(&running).push((i, token.clone()));
            // Registered first, then checked: a winner decided in between is seen here, and
            // one decided later sweeps this token.
            if p.first && winner.load(Ordering::Acquire) < i {
                token.cancel();
            }
            token
        });
        let out = run_branch(seed, frame, p, (i, &inputs[i]), flag, race, cancel);
        if cancellable {
            lock(&running).retain(|(k, _)| *k != i);
        }
        match out.ended {
            Ended::Answer(_) if p.first => {
                let best = winner.fetch_min(i, Ordering::AcqRel).min(i);
                // Every branch after the winner so far can no longer win: its calls in flight
                // are abandoned now rather than left to run out their timeouts and retries.
                for (k, token) in lock(&running).iter() {
                    if *k > best {
                        token.cancel();
                    }
                }
            }
            Ended::Break(_) | Ended::Raised(_) => stop.store(true, Ordering::Relaxed),
            _ => {}
        }
        if let Ok(mut slot) = slots[i].lock() {
            *slot = Some(out);
        }
    };
    let work = &work;
    // From inside a branch this scopes on the pool the branch already runs on: no new threads.
    match crate::parallel::pool::pool() {
        Some(pool) => pool.scope(|sc| (0..workers).for_each(|_| sc.spawn(|_| work()))),
        None => rayon::scope(|sc| (0..workers).for_each(|_| sc.spawn(|_| work()))),
    }
    slots
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect()
}

/// One branch, start to end, in a fresh interpreter on the current (worker) thread.
fn run_branch(
    seed: &Seed,
    frame: &Frame0,
    p: &hir::ParallelFor,
    (index, item): (usize, &Portable),
    stop: &Arc<AtomicBool>,
    race: Option<&Arc<AtomicUsize>>,
    cancel: Option<kora_models::Cancel>,
) -> BranchOut {
    let mut out = Vec::new();
    let mut buf = SpanBuffer::default();
    let mut spent = None;
    let ended = {
        let mut w = seed.interp(&mut out, index);
        if seed.traced {
            w.trace_into(&mut buf);
        }
        w.stop = Some(stop.clone());
        w.race = race.map(|r| (r.clone(), index));
        w.cancel = cancel;
        w.watched = true;
        let f = &frame.func;
        w.stack.resize(f.nlocals as usize, Value::None);
        // Boxes for captured slots are the branch's own, like a fresh call's.
        for &s in &f.cell_slots {
            w.stack[s as usize] = Value::Cell(Default::default());
        }
        for &(s, _) in &f.free_slots {
            w.stack[s as usize] = Value::Cell(Default::default());
        }
        for (s, v) in &frame.reads {
            w.stack[*s as usize] = v.to_value();
        }
        w.base = 0;
        w.cur_mod = frame.cur_mod;
        w.depth = 1;
        // Captures live in the branch's own cells (made above), so the frame's closure
        // needs only the definition.
        let closure = std::rc::Rc::new(crate::value::Function {
            def: f.clone(),
            captures: Vec::new(),
            defaults: Vec::new(),
        });
        w.push_frame(&closure, 0, f.span);
        let r = w
            .assign(&p.target, item.to_value())
            .and_then(|_| w.exec_block(&p.body));
        let mut ended = match r {
            Ok(Flow::Return) => answer(&std::mem::take(&mut w.flow_value), Ended::Answer),
            Ok(Flow::Normal | Flow::Continue) => Ended::NoAnswer,
            Ok(Flow::Break) => Ended::Break(None),
            Ok(Flow::BreakWith) => answer(&std::mem::take(&mut w.flow_value), |p| {
                Ended::Break(Some(p))
            }),
            Err(e) if e.code == codes::STOPPED => Ended::Stopped,
            Err(e) => Ended::Raised(e),
        };
        let stops = match ended {
            Ended::Break(_) => Some("break"),
            Ended::Answer(_) if p.first => Some("first"),
            _ => None,
        };
        if let (Some(why), true) = (stops, seed.run.durable) {
            if let Err(e) = w.record_stop(why) {
                ended = Ended::Raised(e);
            }
        }
        let _ = w.flush_out();
        if seed.traced {
            spent = Some(w.worker_spend());
        }
        ended
    };
    let spans = spent.map(|s| {
        buf.spent = s;
        buf
    });
    BranchOut { ended, out, spans }
}

/// Locks the race's registry; a branch that panicked holding it left the list whole.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn answer(v: &Value, wrap: impl FnOnce(Portable) -> Ended) -> Ended {
    match Portable::of(v) {
        Ok(p) => wrap(p),
        Err(e) => Ended::Raised(e),
    }
}
