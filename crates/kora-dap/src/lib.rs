//! Kora's debug adapter (`kora dap`): the Debug Adapter Protocol over stdio, on top of the runtime's `Debugger` trait.
//!
//! Two threads: the protocol thread reads requests and answers them from the
//! last snapshot; the debuggee thread runs the interpreter with a `Stepper`
//! attached, which blocks at a stop after handing over a copy of the stack.
//! Values never leave the debuggee thread; only their rendered copies do.

mod adapter;
pub mod breakpoint;
mod debugger;
mod exceptions;
pub mod expression;
mod framing;
mod launch;
pub mod lines;
mod link;
mod output;
pub mod reach;
pub mod snapshot;
pub mod variables;

pub use adapter::serve;

/// Serves one debug session on stdin/stdout.
pub fn serve_stdio() -> std::io::Result<()> {
    serve(std::io::stdin(), std::io::stdout())
}
