//! What the protocol thread and the interpreter thread say to each other; only plain data crosses.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use kora_check::hir::ModId;

use dap::requests::Request;

use crate::breakpoint::Spec;
use crate::snapshot::Snapshot;

/// Everything the protocol loop reacts to, in the order it happened.
pub enum Msg {
    /// From the editor.
    Request(Box<Request>),
    /// The editor sent something that is not a request this adapter knows (answered when it has a `seq`).
    Unreadable { seq: Option<i64>, why: String },
    /// The editor closed the connection.
    Closed,
    /// The program stopped and waits for a `Resume`.
    Stopped(Box<Stop>),
    /// Program output (`stdout`) or the adapter's own report of a failure (`stderr`).
    Output { stderr: bool, text: String },
    /// A logpoint's message.
    Log(String),
    /// The program finished with this exit code (0 ok, 1 run-time error, 2 did not check).
    Exited(i64),
}

#[derive(Clone, Debug)]
pub enum Reason {
    Entry,
    Step,
    Pause,
    /// At this breakpoint; with the reason its condition could not be read, if it could not.
    Breakpoint(i64, Option<String>),
    /// A runtime error, in the frame that raised it.
    Error(crate::exceptions::Raised),
}

pub struct Stop {
    pub reason: Reason,
    pub snapshot: Snapshot,
}

/// How the stopped program goes on.
#[derive(Debug)]
pub enum Resume {
    Continue,
    Next,
    StepIn,
    StepOut,
    /// `setVariable`: the program stays stopped and answers with the new snapshot.
    Set(Box<SetVariable>),
}

/// Where the variable to change lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Frame `n` of the snapshot (innermost first).
    Local(usize),
    Global(ModId),
}

#[derive(Debug)]
pub struct SetVariable {
    pub place: Place,
    pub name: String,
    /// The new value, as an expression evaluated in the stopped frame.
    pub value: String,
    /// The frame the value expression is evaluated in (snapshot index, innermost first).
    pub frame: usize,
    pub reply: Sender<Result<Snapshot, String>>,
}

/// State both threads touch, lock-free where the interpreter reads it per statement.
#[derive(Default)]
pub struct Shared {
    /// Set by `pause`; the interpreter stops at its next statement and clears it.
    pub pause: AtomicBool,
    /// The editor set the `uncaught` exception filter: stop where an error is raised.
    pub stop_on_error: AtomicBool,
    /// Bumped whenever `breakpoints` changes, so the interpreter re-reads it only then.
    pub generation: AtomicU64,
    /// Canonical file path → (line → the breakpoint there).
    pub breakpoints: Mutex<HashMap<PathBuf, HashMap<u32, Arc<Spec>>>>,
}
