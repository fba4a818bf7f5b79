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

use crate::link::{Msg, Reason, Resume, Shared, Stop};
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
    /// Per module: line → breakpoint id.
    breakpoints: Vec<HashMap<u32, i64>>,
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
            .map(|id| Reason::Breakpoint(*id))
    }
}

impl Stepper {
    /// Hands over a snapshot and waits for the editor; `depth` is where stepping resumes from.
    fn stop(&mut self, reason: Reason, depth: usize, stack: &dyn FrameStack) {
        let snapshot = snapshot::take(&self.prog, &self.lines, stack);
        let stop = Box::new(Stop { reason, snapshot });
        if self.tx.send(Msg::Stopped(stop)).is_err() {
            self.mode = Mode::Run;
            return;
        }
        self.at_entry = false;
        self.mode = match self.resume.recv() {
            Ok(Resume::Continue) | Err(_) => Mode::Run,
            Ok(Resume::Next) => Mode::Next(depth),
            Ok(Resume::StepIn) => Mode::StepIn,
            Ok(Resume::StepOut) => Mode::Out(depth),
        };
    }
}

impl Debugger for Stepper {
    fn on_error(&mut self, code: &str, message: &str, stack: &dyn FrameStack) {
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

    fn before_statement(&mut self, module: ModId, at: Span, depth: usize, stack: &dyn FrameStack) {
        self.refresh();
        let Some(reason) = self.reason(module, at, depth) else {
            return;
        };
        self.stop(reason, depth, stack);
    }
}
