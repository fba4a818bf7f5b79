//! The interpreter's state and its call machinery: frames, argument binding, module initialisation.
//!
//! Locals of every active call live in one `stack` vector; a frame is a
//! window `[base, base + nlocals)` into it, so a call allocates nothing but
//! the slots it needs. `frames` mirrors the call chain for the debugger and
//! for stack traces.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use kora_check::hir::{self, ModId, Program, Sym};
use kora_syntax::ast::FuncKind;

use crate::error::{codes, RtError, RtResult, TraceEntry};
use crate::eval::frames::Frame;
use crate::observe::debug::Debugger;
use crate::value::caller::Caller;
use crate::value::{Function, Value};

/// Calls nested deeper than this are a language error, not a host stack overflow.
pub const MAX_DEPTH: u32 = 1000;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ModState {
    NotRun,
    Running,
    Done,
}

/// The names of keyword arguments whose values follow the positional ones on the stack.
#[derive(Clone, Copy)]
pub(crate) enum KwNames<'a> {
    /// Straight from the call expression, so a call site allocates nothing for them.
    Hir(&'a [(Sym, hir::Expr)]),
    Plain(&'a [Sym]),
}

impl KwNames<'_> {
    pub(crate) const NONE: KwNames<'static> = KwNames::Plain(&[]);

    #[inline]
    pub(crate) fn len(&self) -> usize {
        match self {
            KwNames::Hir(k) => k.len(),
            KwNames::Plain(k) => k.len(),
        }
    }

    pub(crate) fn get(&self, i: usize) -> Sym {
        match self {
            KwNames::Hir(k) => k[i].0,
            KwNames::Plain(k) => k[i],
        }
    }
}

/// How a statement finished.
///
/// The value of `Return` and `BreakWith` waits in `Interp::flow_value`, so a `Flow` is one
/// byte and `RtResult<Flow>` comes back in two registers; carrying the value here made
/// it 32 bytes, written to memory and reloaded on every statement and call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Flow {
    Normal,
    Break,
    /// `break value` in a `parallel for` body (the checker allows it nowhere else).
    BreakWith,
    Continue,
    Return,
}

// Pinned: an error pointer and a one-byte flow, returned in registers.
const _: () = assert!(std::mem::size_of::<RtResult<Flow>>() == 16);

pub struct Interp<'io> {
    pub(crate) prog: std::sync::Arc<Program>,
    pub(crate) consts: Vec<Value>,
    pub(crate) globals: Vec<Vec<Value>>,
    pub(crate) mod_state: Vec<ModState>,
    pub(crate) stack: Vec<Value>,
    pub(crate) base: usize,
    pub(crate) cur_mod: usize,
    /// The active calls are `frame_slots[..live_frames]`. Slots above stay allocated and
    /// are overwritten field by field on the next call: building a whole `Frame` and
    /// pushing it went through a stack copy whose reload stalled on every call.
    pub(crate) frame_slots: Vec<Frame>,
    pub(crate) live_frames: usize,
    /// The value of the `return` or `break value` being unwound (see `Flow`).
    pub(crate) flow_value: Value,
    pub(crate) depth: u32,
    pub(crate) out: &'io mut dyn Write,
    /// What the tools of the tool loop in flight printed: its journal record keeps it, so a
    /// resume that replays the loop without its tools prints the same bytes.
    pub(crate) loop_output: Option<String>,
    pub(crate) models: Option<crate::agents::analyze::SharedModels>,
    /// `with model(...)` blocks and `model(...)` agents being run, innermost last.
    pub(crate) model_scope: Vec<String>,
    /// How many `case ... if` guards are being evaluated: a model call there is refused.
    pub(crate) guard_depth: u32,
    /// The model a running tool loop answers to (the name the call gave, the entry it
    /// resolved to): a tool's result is checked against it before it is sent.
    pub(crate) model_sink: Option<(Option<String>, kora_models::ModelEntry, String)>,
    /// The label origin of each call site's answers: described and interned once a site,
    /// not once a call (interning takes a lock every thread shares).
    pub(crate) answer_origins: std::collections::HashMap<String, u32, rustc_hash::FxBuildHasher>,
    pub(crate) input: Option<&'io mut dyn std::io::BufRead>,
    pub(crate) debugger: Option<Box<dyn Debugger + 'io>>,
    /// The standard library's run state, made at the first standard-library call.
    pub(crate) host: Option<Box<crate::stdlib::Host>>,
    /// Settings for the standard library, applied when it is first used (branches set these).
    pub(crate) pending_run: Option<crate::stdlib::RunSettings>,
    /// Active `with mock` blocks, innermost last (see `agents/mock.rs`).
    pub(crate) mocks: Vec<crate::agents::mock::Mock>,
    /// Where spans go, when a tracer is attached (see `observe/trace.rs`).
    pub(crate) tracing: Option<crate::observe::trace::Tracing<'io>>,
    /// In a worker: module variables copied in from the caller on first use (see `parallel/fan_out.rs`).
    pub(crate) lazy: Option<Box<crate::parallel::fan_out::LazyGlobals>>,
    /// In a `parallel for` branch: set when a sibling broke or raised.
    pub(crate) stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
    /// In a `first` branch: the race's winner so far, and this branch's index. A branch
    /// behind the winner cannot win, so it stops at its next statement.
    pub(crate) race: Option<(std::sync::Arc<std::sync::atomic::AtomicUsize>, usize)>,
    /// In a `first` race's branch (or anything nested in one): cancelled once the branch
    /// cannot win, which ends its model calls in flight (see `parallel/fan_out.rs`).
    pub(crate) cancel: Option<kora_models::Cancel>,
    /// A debugger or a stop flag wants to see every statement: one test per statement for both.
    pub(crate) watched: bool,
    /// Set by Ctrl-C in `kora repl`: the running entry stops at its next statement.
    pub(crate) interrupt: Option<&'static std::sync::atomic::AtomicBool>,
    /// The next call of an isolated agent is the one this worker was made for: run it here.
    pub(crate) enter_isolated: bool,
    /// Active `with context(...)` blocks, innermost last (see `agents/context_fence.rs`).
    pub(crate) fences: Vec<crate::agents::context_fence::Fence>,
    /// The budget scope in force, shared with the budget's observer; `None` until the run
    /// first enters a `budget` block or adopts a chain (see `agents/budget_scope.rs`).
    pub(crate) budget: Option<crate::agents::budget::CurrentBudget>,
    /// The providers of `use mcp` / `use python` modules, set by the embedder (see `external/`).
    pub(crate) externals: Option<std::sync::Arc<crate::external::Registry>>,
}

impl<'io> Interp<'io> {
    pub fn new(prog: std::sync::Arc<Program>, out: &'io mut dyn Write) -> Interp<'io> {
        let consts = prog
            .strings
            .iter()
            .map(|s| Value::str(s.as_str()))
            .collect();
        let globals = prog
            .modules
            .iter()
            .map(|m| vec![Value::None; m.globals.len()])
            .collect();
        let n = prog.modules.len();
        Interp {
            prog,
            consts,
            globals,
            mod_state: vec![ModState::NotRun; n],
            stack: Vec::with_capacity(1024),
            base: 0,
            cur_mod: 0,
            frame_slots: Vec::with_capacity(64),
            live_frames: 0,
            flow_value: Value::None,
            loop_output: None,
            model_scope: Vec::new(),
            depth: 0,
            out,
            models: None,
            guard_depth: 0,
            model_sink: None,
            answer_origins: Default::default(),
            input: None,
            debugger: None,
            host: None,
            pending_run: None,
            mocks: Vec::new(),
            tracing: None,
            lazy: None,
            stop: None,
            race: None,
            cancel: None,
            watched: false,
            interrupt: None,
            enter_isolated: false,
            fences: Vec::new(),
            budget: None,
            externals: None,
        }
    }

    /// The providers `use mcp` / `use python` modules are called through.
    pub fn set_externals(&mut self, r: std::sync::Arc<crate::external::Registry>) {
        self.externals = Some(r);
    }

    /// Where `input()` reads from; without one it reports end of input.
    pub fn set_input(&mut self, input: &'io mut dyn std::io::BufRead) {
        self.input = Some(input);
    }

    pub(crate) fn flush_out(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }

    /// Attaches a debugger: from now on every statement asks it whether to stop.
    pub fn attach(&mut self, d: Box<dyn Debugger + 'io>) {
        self.debugger = Some(d);
        self.watched = true;
    }

    pub fn program(&self) -> &std::sync::Arc<Program> {
        &self.prog
    }

    /// Runs the entry module (and, through `use`, every module it reaches).
    pub fn run_main(&mut self) -> RtResult<()> {
        let entry = self.prog.entry;
        let r = self.init_module(entry);
        let _ = self.out.flush();
        r
    }

    pub(crate) fn init_module(&mut self, m: ModId) -> RtResult<()> {
        let i = m.0 as usize;
        if self.mod_state[i] != ModState::NotRun {
            return Ok(());
        }
        self.mod_state[i] = ModState::Running;
        let body = self.prog.modules[i].body.clone();
        let closure = Rc::new(Function {
            def: body,
            captures: Vec::new(),
            defaults: Vec::new(),
        });
        let base = self.stack.len();
        self.invoke(&closure, base, 0, KwNames::NONE)?;
        self.mod_state[i] = ModState::Done;
        Ok(())
    }

    /// Calls any callable value with already-evaluated arguments.
    pub fn call_value_kw(
        &mut self,
        f: &Value,
        args: Vec<Value>,
        kwargs: Vec<(Sym, Value)>,
    ) -> RtResult<Value> {
        match f {
            Value::Func(c) => {
                let base = self.stack.len();
                let n = args.len();
                self.stack.extend(args);
                let names: Vec<Sym> = kwargs.iter().map(|(k, _)| *k).collect();
                self.stack.extend(kwargs.into_iter().map(|(_, v)| v));
                self.invoke(c, base, n, KwNames::Plain(&names))
            }
            Value::Builtin(b) => crate::eval::builtins::call_builtin(self, *b, args, kwargs),
            Value::Method(m) => {
                let (recv, name) = (&m.0, m.1);
                self.call_method(recv, name, args, kwargs)
            }
            Value::Type(t) => self.construct(*t, args, kwargs),
            Value::Labeled(l) => {
                let r = self.call_value_kw(&l.value, args, kwargs)?;
                Ok(crate::labels::label::wrap(r, l.tag()))
            }
            other => Err(RtError::new(
                codes::TYPE,
                format!("'{}' object is not callable", other.type_name()),
            )),
        }
    }

    /// Invokes a closure whose `npos` positional arguments are already on the stack at `base`.
    pub(crate) fn invoke(
        &mut self,
        c: &Rc<Function>,
        base: usize,
        npos: usize,
        kw: KwNames<'_>,
    ) -> RtResult<Value> {
        // An isolated agent's own worker runs its body: the caller already opened its span.
        if self.tracing.is_some() && c.def.kind == FuncKind::Agent && !self.enter_isolated {
            return self.invoke_traced_agent(c, base, npos, kw);
        }
        self.invoke_plain(c, base, npos, kw)
    }

    /// `invoke` without an agent's span.
    pub(crate) fn invoke_plain(
        &mut self,
        c: &Rc<Function>,
        base: usize,
        npos: usize,
        kw: KwNames<'_>,
    ) -> RtResult<Value> {
        let def = &c.def;
        if def.isolated && !std::mem::take(&mut self.enter_isolated) {
            return self.call_isolated(c, base, npos, kw);
        }
        if self.depth >= MAX_DEPTH {
            self.stack.truncate(base);
            return Err(too_deep(def));
        }
        let nparams = def.params.len();
        if npos == nparams && kw.len() == 0 && def.star.is_none() {
            let locals = base + def.nlocals as usize;
            // Not `resize`: its generic fill is an out-of-line call per frame.
            self.stack.reserve(locals.saturating_sub(self.stack.len()));
            while self.stack.len() < locals {
                self.stack.push(Value::None);
            }
        } else if let Err(e) = self.bind_args(c, base, npos, kw) {
            self.stack.truncate(base);
            return Err(e);
        }
        for p in &def.params {
            let v = &self.stack[base + p.slot as usize];
            if !crate::value::conform::conforms_quick(p.quick, v, &p.ty) {
                let e = self.bad_argument(def, p, base);
                self.stack.truncate(base);
                return Err(e);
            }
        }
        if !def.no_boxes {
            self.fill_boxes(c, base);
        }
        let saved_base = self.base;
        let saved_mod = self.cur_mod;
        self.base = base;
        self.cur_mod = def.module.0 as usize;
        self.depth += 1;
        self.push_frame(c, base, def.span);
        // An agent's `model("name")` holds for the calls it makes, and those of what it calls.
        let chose = match &def.model {
            Some(m) => {
                self.model_scope.push(m.clone());
                true
            }
            None => false,
        };
        let r = self.exec_block(&def.body);
        if chose {
            self.model_scope.pop();
        }
        if let (Err(e), true) = (&r, self.debugger.is_some()) {
            self.debug_error(e);
        }
        self.live_frames -= 1;
        self.depth -= 1;
        self.base = saved_base;
        self.cur_mod = saved_mod;
        // Not `truncate`: it calls the drop function for every slot, numbers included.
        while self.stack.len() > base {
            if let Some(v) = self.stack.pop() {
                crate::value::discard(v);
            }
        }
        match r {
            Ok(Flow::Return) => {
                let v = std::mem::take(&mut self.flow_value);
                if !crate::value::conform::conforms_quick(def.ret_quick, &v, &def.ret) {
                    return Err(self.trace_out(
                        def,
                        RtError::new(
                            codes::TYPE,
                            format!(
                                "`{}` must return `{}`, but returned {}",
                                def.name,
                                def.ret,
                                crate::value::conform::describe(&self.prog, &v)
                            ),
                        ),
                    ));
                }
                Ok(v)
            }
            Ok(_) => Ok(Value::None),
            Err(e) => Err(self.trace_out(def, e)),
        }
    }

    /// Records the frame being left in the error's stack trace.
    fn trace_out(&self, def: &hir::Function, mut e: Box<RtError>) -> Box<RtError> {
        let span = e.pending.take().unwrap_or(def.span);
        e.trace.push(TraceEntry {
            func: def.name.clone(),
            module: def.module,
            span,
        });
        e
    }

    /// Builds a record from constructor arguments, filling defaults and checking field types.
    pub(crate) fn construct(
        &mut self,
        t: hir::TypeId,
        args: Vec<Value>,
        kwargs: Vec<(Sym, Value)>,
    ) -> RtResult<Value> {
        let prog = self.prog.clone();
        let rec = prog.record(t);
        let n = rec.fields.len();
        if args.len() > n {
            return Err(RtError::new(
                codes::ARGUMENTS,
                format!(
                    "{}() takes {} field values but {} were given",
                    rec.name,
                    n,
                    args.len()
                ),
            ));
        }
        let mut vals: Vec<Option<Value>> = vec![None; n];
        for (i, v) in args.into_iter().enumerate() {
            vals[i] = Some(v);
        }
        for (k, v) in kwargs {
            match rec.fields.iter().position(|f| f.name == k) {
                Some(i) if vals[i].is_some() => {
                    return Err(RtError::new(
                        codes::ARGUMENTS,
                        format!(
                            "{}() got multiple values for field '{}'",
                            rec.name,
                            prog.name(k)
                        ),
                    ))
                }
                Some(i) => vals[i] = Some(v),
                None => {
                    return Err(RtError::new(
                        codes::ARGUMENTS,
                        format!("{} has no field '{}'", rec.name, prog.name(k)),
                    ))
                }
            }
        }
        let mut fields = Vec::with_capacity(n);
        for (i, v) in vals.into_iter().enumerate() {
            let f = &rec.fields[i];
            let v = match (v, &f.default) {
                (Some(v), _) => v,
                (None, Some(d)) => {
                    let saved = self.cur_mod;
                    self.cur_mod = rec.module.0 as usize;
                    let r = self.eval(d);
                    self.cur_mod = saved;
                    r?
                }
                (None, None) => {
                    return Err(RtError::new(
                        codes::ARGUMENTS,
                        format!("{}() missing field '{}'", rec.name, prog.name(f.name)),
                    ))
                }
            };
            if !crate::value::conform::conforms(&prog, &v, &f.ty) {
                return Err(RtError::new(
                    codes::TYPE,
                    format!(
                        "field `{}` of `{}` must be `{}`, got {}",
                        prog.name(f.name),
                        rec.name,
                        f.ty,
                        crate::value::conform::describe(&prog, &v)
                    ),
                ));
            }
            fields.push(v);
        }
        Ok(Value::Record(Rc::new(crate::value::Record {
            ty: t,
            fields: RefCell::new(fields),
        })))
    }

    /// A module variable, copied in from the caller first when this is a worker.
    #[inline(always)]
    pub(crate) fn global(&mut self, m: usize, g: usize) -> RtResult<Value> {
        if self.lazy.is_some() {
            return self.global_lazy(m, g);
        }
        Ok(self.globals[m][g].clone())
    }

    #[cold]
    fn global_lazy(&mut self, m: usize, g: usize) -> RtResult<Value> {
        if let Some(l) = self.lazy.as_mut() {
            l.load(&mut self.globals, m, g)?;
        }
        Ok(self.globals[m][g].clone())
    }

    pub(crate) fn write(&mut self, s: &str) -> RtResult<()> {
        if let Some(shown) = &mut self.loop_output {
            shown.push_str(s);
        }
        self.out
            .write_all(s.as_bytes())
            .map_err(|e| RtError::new(codes::IO, format!("cannot write output: {e}")))
    }
}

/// The error of a call past `MAX_DEPTH`, built out of line so the call path stays small.
#[cold]
#[inline(never)]
fn too_deep(def: &hir::Function) -> Box<RtError> {
    RtError::new(
        codes::RECURSION,
        format!(
            "maximum recursion depth exceeded: more than {MAX_DEPTH} nested calls (in `{}`)",
            def.name
        ),
    )
}

impl Caller for Interp<'_> {
    fn call_value(&mut self, f: &Value, args: Vec<Value>) -> RtResult<Value> {
        self.call_value_kw(f, args, Vec::new())
    }

    fn program(&self) -> &Program {
        &self.prog
    }

    fn write_out(&mut self, s: &str) -> RtResult<()> {
        self.write(s)
    }

    fn remaining(&mut self, meter: &str) -> RtResult<Value> {
        Interp::remaining(self, meter, "<remaining>")
    }

    fn read_line(&mut self) -> RtResult<Option<String>> {
        let _ = self.out.flush();
        let Some(input) = self.input.as_mut() else {
            return Ok(None);
        };
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) => Ok(None),
            Ok(_) => {
                if line.ends_with('\n') {
                    line.pop();
                    if line.ends_with('\r') {
                        line.pop();
                    }
                }
                Ok(Some(line))
            }
            Err(e) => Err(RtError::new(codes::IO, format!("cannot read input: {e}"))),
        }
    }
}
