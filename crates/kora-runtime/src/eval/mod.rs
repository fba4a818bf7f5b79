//! The interpreter: its state and call machinery (`interp.rs`, `bind.rs`, `frames.rs`),
//! statements (`exec.rs`, `aug_assign.rs`, `for_loop.rs`, `del_item.rs`, `assert.rs`),
//! expressions (`expr.rs`, `comprehension.rs`, `matching.rs`, `attrs.rs`), built-ins and
//! methods (`builtins/`, `methods/`), how calls carry labels (`label_calls.rs`), `classified`
//! and `declassify` (`declassify.rs`), its side of the tracer and debugger seams
//! (`tracing.rs`), and running a program that grows entry by entry (`session.rs`).
//!
//! May use: `config`, `value`, `labels`, `durable`, `observe`. One exception, listed in
//! `docs/architecture.md`: `interp.rs` names the run state of `stdlib`, `agents` and
//! `parallel` as fields of `Interp`, because the interpreter is where a run's state lives.
//! The statements those concerns own (`analyze`, `budget`, `parallel for`, `use json`) are
//! `impl Interp` blocks in their own folders; eval only calls them.
//! Must not know: any surface, the journal's format, a model provider.

pub(crate) mod assert;
pub(crate) mod attrs;
pub(crate) mod aug_assign;
pub(crate) mod bind;
pub mod builtins;
pub(crate) mod comprehension;
pub(crate) mod declassify;
pub mod del_item;
pub(crate) mod exec;
pub(crate) mod expr;
pub(crate) mod for_loop;
pub(crate) mod frames;
pub mod interp;
pub(crate) mod label_calls;
pub(crate) mod matching;
pub mod methods;
pub(crate) mod session;
pub use interp::Interp;
pub(crate) mod tracing;
