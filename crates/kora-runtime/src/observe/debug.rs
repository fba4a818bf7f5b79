//! The debugger seam: a trait the interpreter asks before every statement, and the frame views it is shown.
//!
//! The interpreter knows nothing of any protocol. With no debugger attached
//! the cost is one `Option` check per statement; `kora-dap` is an adapter
//! implementing `Debugger`.

use kora_check::hir::ModId;
use kora_syntax::Span;

use crate::value::Value;

/// A snapshot of one active call: taken when the program stops, never a live view.
#[derive(Clone)]
pub struct FrameInfo {
    pub func: String,
    pub module: ModId,
    /// The statement about to run in this frame (the call site for outer frames).
    pub at: Span,
    /// Slot names and their values at the moment of the snapshot.
    pub locals: Vec<(String, Value)>,
}

/// Access to the call stack, for a debugger that decided to stop: read, and written only by
/// the person at the debugger (`setVariable`), while the program waits.
pub trait FrameStack {
    /// Innermost frame last.
    fn frames(&self) -> Vec<FrameInfo>;
    /// A module's top-level names and their current values (`None` before assignment).
    fn globals(&self, _module: ModId) -> Vec<(String, Value)> {
        Vec::new()
    }
    /// Replaces the value of local `name` in frame `frame` (0 = outermost), as `setVariable` asks.
    fn set_local(&mut self, _frame: usize, name: &str, _value: Value) -> Result<(), String> {
        Err(format!("`{name}` cannot be changed here"))
    }
    /// Replaces the value of a module's top-level name.
    fn set_global(&mut self, _module: ModId, name: &str, _value: Value) -> Result<(), String> {
        Err(format!("`{name}` cannot be changed here"))
    }
}

pub trait Debugger {
    /// Called before each statement of a frame at `depth` (1 = the module's top level).
    /// Returning blocks the program for as long as the debugger wants.
    fn before_statement(
        &mut self,
        module: ModId,
        at: Span,
        depth: usize,
        stack: &mut dyn FrameStack,
    );

    /// Called once for a runtime error, in the frame that raised it and before that frame
    /// unwinds, so the stack shown is the one that failed. Kora has no way to catch an
    /// error, so every error reported here ends the run (a `parallel for` branch has no
    /// debugger). Returning lets it unwind.
    fn on_error(&mut self, _code: &str, _message: &str, _stack: &mut dyn FrameStack) {}
}
