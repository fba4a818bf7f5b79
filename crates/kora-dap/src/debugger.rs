//! The `Debugger` the interpreter asks before every statement: decides whether to stop, and when it does, hands over a snapshot and waits.
//!
//! It lives on the interpreter's thread; everything it sends is plain data.

use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;

use kora_check::hir::{ModId, Program};
use kora_runtime::debug::{Debugger, FrameStack};
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
    prog: Rc<Program>,
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
        prog: Rc<Program>,
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
            mode: if stop_on_entry { Mode::StepIn } else { Mode::Run },
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

    fn reason(&mut self, module: ModId, line: u32, depth: usize, start: u32) -> Option<Reason> {
        // A second statement on the same line is not a new place to stop at a breakpoint.
        let same_line = matches!(self.prev, Some((m, l, d, s))
            if m == module && l == line && d == depth && start > s);
        self.prev = Some((module, line, depth, start));
        if self.shared.pause.swap(false, Ordering::AcqRel) {
            return Some(Reason::Pause);
        }
        let step = match self.mode {
            Mode::Run => false,
            Mode::StepIn => true,
            Mode::Next(d) => depth <= d,
            Mode::Out(d) => depth < d,
        };
        if step {
            let entry = std::mem::take(&mut self.at_entry);
            return Some(if entry { Reason::Entry } else { Reason::Step });
        }
        if same_line {
            return None;
        }
        self.breakpoints[module.0 as usize]
            .get(&line)
            .map(|id| Reason::Breakpoint(*id))
    }
}

impl Debugger for Stepper {
    fn before_statement(&mut self, module: ModId, at: Span, depth: usize, stack: &dyn FrameStack) {
        self.refresh();
        let line = self.lines[module.0 as usize].line(at.start);
        let Some(reason) = self.reason(module, line, depth, at.start) else {
            return;
        };
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
