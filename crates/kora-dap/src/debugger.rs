//! The `Debugger` the interpreter asks before every statement: decides whether to stop, and when it does, hands over a snapshot and waits.
//!
//! It lives on the interpreter's thread; everything it sends is plain data.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;

use kora_check::hir::{ModId, Program};
use kora_runtime::observe::debug::{Debugger, FrameStack};
use kora_syntax::{LineIndex, Span};

use kora_runtime::value::format::type_name_in;
use kora_runtime::Value;

use crate::breakpoint::{Spec, Verdict};
use crate::expression::{self, Scope};
use crate::link::{Msg, Place, Reason, Resume, SetVariable, Shared, Stop};
use crate::snapshot;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Run,
    /// Stop at the very first statement (`stopOnEntry`) or the next one (`stepIn`).
    StepIn,
    /// Stop at the next statement of this frame or of a caller.
    Next(usize),
    /// Stop once back in a caller.
    Out(usize),
}

pub struct Stepper {
    prog: std::sync::Arc<Program>,
    lines: Vec<LineIndex>,
    paths: Vec<PathBuf>,
    shared: Arc<Shared>,
    generation: u64,
    /// Per module: line → the breakpoint there.
    breakpoints: Vec<HashMap<u32, Arc<Spec>>>,
    /// Per breakpoint id: arrivals whose condition held (ids are never reused, so a
    /// breakpoint set again starts from zero, and other files' changes keep the count).
    hits: HashMap<i64, u64>,
    mode: Mode,
    /// No stop has happened yet and `stopOnEntry` asked for one.
    at_entry: bool,
    /// The previous statement: (module, line, depth, start).
    prev: Option<(ModId, u32, usize, u32)>,
    tx: Sender<Msg>,
    resume: Receiver<Resume>,
}

impl Stepper {
    pub fn new(
        prog: std::sync::Arc<Program>,
        shared: Arc<Shared>,
        stop_on_entry: bool,
        tx: Sender<Msg>,
        resume: Receiver<Resume>,
    ) -> Stepper {
        let lines = prog
            .modules
            .iter()
            .map(|m| LineIndex::new(&m.source))
            .collect();
        let paths = prog.modules.iter().map(|m| m.path.clone()).collect();
        let n = prog.modules.len();
        let mut s = Stepper {
            prog,
            lines,
            paths,
            shared,
            generation: u64::MAX,
            breakpoints: vec![HashMap::new(); n],
            hits: HashMap::new(),
            mode: if stop_on_entry {
                Mode::StepIn
            } else {
                Mode::Run
            },
            at_entry: stop_on_entry,
            prev: None,
            tx,
            resume,
        };
        s.refresh();
        s
    }

    /// Re-reads the breakpoint table when the protocol thread changed it.
    fn refresh(&mut self) {
        let g = self.shared.generation.load(Ordering::Acquire);
        if g == self.generation {
            return;
        }
        self.generation = g;
        let table = self
            .shared
            .breakpoints
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        for (i, p) in self.paths.iter().enumerate() {
            self.breakpoints[i] = table.get(p).cloned().unwrap_or_default();
        }
    }

    /// Remembers where the program stopped, so a breakpoint on that line does not fire for the
    /// next statement on it.
    fn note(&mut self, module: ModId, at: Span, depth: usize) {
        let line = self.lines[module.0 as usize].line(at.start);
        self.prev = Some((module, line, depth, at.start));
    }

    /// Why to stop before the statement at `at`, if at all. Runs before every statement, so
    /// the common case (running, no breakpoint in this module) decides without a line lookup.
    fn reason(&mut self, module: ModId, at: Span, depth: usize) -> Option<Reason> {
        let pause = &self.shared.pause;
        if pause.load(Ordering::Relaxed) && pause.swap(false, Ordering::AcqRel) {
            self.note(module, at, depth);
            return Some(Reason::Pause);
        }
        let step = match self.mode {
            Mode::Run => false,
            Mode::StepIn => true,
            Mode::Next(d) => depth <= d,
            Mode::Out(d) => depth < d,
        };
        if step {
            self.note(module, at, depth);
            let entry = std::mem::take(&mut self.at_entry);
            return Some(if entry { Reason::Entry } else { Reason::Step });
        }
        let m = module.0 as usize;
        if self.breakpoints[m].is_empty() {
            self.prev = None;
            return None;
        }
        let line = self.lines[m].line(at.start);
        // A second statement on the same line is not a new place to stop at a breakpoint.
        let same_line = matches!(self.prev, Some((pm, l, d, s))
            if pm == module && l == line && d == depth && at.start > s);
        self.prev = Some((module, line, depth, at.start));
        if same_line {
            return None;
        }
        self.breakpoints[m]
            .get(&line)
            .map(|spec| Reason::Breakpoint(spec.id, None))
    }

    /// Whether an arrival at a breakpoint stops, judged in the innermost frame.
    fn judge(&mut self, module: ModId, at: Span, stack: &dyn FrameStack) -> Option<Reason> {
        let m = module.0 as usize;
        let line = self.lines[m].line(at.start);
        let spec = self.breakpoints[m].get(&line)?.clone();
        if spec.condition.is_none() && spec.hit.is_none() && spec.log.is_none() {
            return Some(Reason::Breakpoint(spec.id, None));
        }
        let frames = stack.frames();
        let locals = match frames.last() {
            Some(f) if f.func != "<module>" => f.locals.as_slice(),
            _ => &[],
        };
        let globals = stack.globals(module);
        let scope = Scope {
            prog: &self.prog,
            locals,
            globals: &globals,
        };
        let hits = self.hits.entry(spec.id).or_insert(0);
        match spec.judge(&scope, hits) {
            Verdict::Pass => None,
            Verdict::Stop => Some(Reason::Breakpoint(spec.id, None)),
            Verdict::StopBroken(why) => Some(Reason::Breakpoint(
                spec.id,
                Some(format!(
                    "the breakpoint's condition could not be read: {why}"
                )),
            )),
            Verdict::Log(text) => {
                let _ = self.tx.send(Msg::Log(text));
                None
            }
        }
    }

    /// `setVariable`: evaluates the new value in the stopped frame and writes it, keeping the
    /// variable's type (the checker's types still hold after the edit).
    fn set(&self, req: &SetVariable, stack: &mut dyn FrameStack) -> Result<(), String> {
        let expr = expression::parse(&req.value)?;
        let frames = stack.frames();
        let n = frames.len();
        let index = n
            .checked_sub(req.frame + 1)
            .ok_or_else(|| format!("there is no frame {}", req.frame))?;
        let f = &frames[index];
        let locals = if f.func == "<module>" {
            &[][..]
        } else {
            f.locals.as_slice()
        };
        let globals = stack.globals(f.module);
        let scope = Scope {
            prog: &self.prog,
            locals,
            globals: &globals,
        };
        let value = scope.eval(&expr)?;
        let old = match req.place {
            Place::Local(_) => locals
                .iter()
                .find(|(k, _)| *k == req.name)
                .map(|(_, v)| v.clone()),
            Place::Global(m) => stack
                .globals(m)
                .into_iter()
                .find(|(k, _)| *k == req.name)
                .map(|(_, v)| v),
        }
        .ok_or_else(|| format!("`{}` is not defined in this frame", req.name))?;
        let was = type_name_in(&self.prog, &old);
        let now = type_name_in(&self.prog, &value);
        if !matches!(old, Value::None) && was != now {
            return Err(format!(
                "`{}` is of type {was}: it can be given another {was} value, not a {now}",
                req.name
            ));
        }
        match req.place {
            Place::Local(frame) => stack.set_local(n - 1 - frame, &req.name, value),
            Place::Global(m) => stack.set_global(m, &req.name, value),
        }
    }
}

impl Stepper {
    /// Hands over a snapshot and waits for the editor; `depth` is where stepping resumes from.
    fn stop(&mut self, reason: Reason, depth: usize, stack: &mut dyn FrameStack) {
        let snapshot = snapshot::take(&self.prog, &self.lines, stack);
        let stop = Box::new(Stop { reason, snapshot });
        if self.tx.send(Msg::Stopped(stop)).is_err() {
            self.mode = Mode::Run;
            return;
        }
        self.at_entry = false;
        self.mode = loop {
            match self.resume.recv() {
                Ok(Resume::Continue) | Err(_) => break Mode::Run,
                Ok(Resume::Next) => break Mode::Next(depth),
                Ok(Resume::StepIn) => break Mode::StepIn,
                Ok(Resume::StepOut) => break Mode::Out(depth),
                Ok(Resume::Set(req)) => {
                    let answer = self
                        .set(&req, stack)
                        .map(|()| snapshot::take(&self.prog, &self.lines, stack));
                    let _ = req.reply.send(answer);
                }
            }
        };
    }
}

impl Debugger for Stepper {
    fn on_error(&mut self, code: &str, message: &str, stack: &mut dyn FrameStack) {
        if !self.shared.stop_on_error.load(Ordering::Acquire) {
            return;
        }
        let raised = crate::exceptions::Raised {
            code: code.to_string(),
            message: message.to_string(),
        };
        self.stop(Reason::Error(raised), usize::MAX, stack);
        // The error unwinds whatever the editor asked: no statement runs after it.
        self.mode = Mode::Run;
    }

    fn before_statement(
        &mut self,
        module: ModId,
        at: Span,
        depth: usize,
        stack: &mut dyn FrameStack,
    ) {
        self.refresh();
        let reason = match self.reason(module, at, depth) {
            Some(Reason::Breakpoint(..)) => self.judge(module, at, stack),
            other => other,
        };
        let Some(reason) = reason else {
            return;
        };
        self.stop(reason, depth, stack);
    }
}
