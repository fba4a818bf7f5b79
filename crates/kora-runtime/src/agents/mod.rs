//! Agents: everything a model call is made of. `analyze` and its typed outcome
//! (`analyze.rs`), a model call as an effect with its cassette slot (`model_effect.rs`,
//! `cassette.rs`), streaming to an `on token` handler (`token_stream.rs`), the tool loop, its
//! turns and tool calls (`tool_loop.rs`, `tool_turn.rs`, `tool_call.rs`), the `with context`
//! fence (`context_fence.rs`), test mocks (`mock.rs`), budgets, their observer and the block
//! (`budget*.rs`), `ask_human`, isolated agents (`isolated.rs`), and the spans of model calls,
//! tool calls and agent invocations (`*_span.rs`).
//!
//! May use: every folder below it (`config`, `value`, `labels`, `durable`, `observe`, `eval`,
//! `stdlib`). Each file extends `Interp` with the statements and calls it owns.
//! Must not know: `parallel for` (a fan-out carries budgets and mocks into its branches, not
//! the other way round), nor any surface (CLI, LSP, DAP).

pub(crate) mod agent_span;
pub mod analyze;
pub(crate) mod ask_human;
pub mod budget;
pub(crate) mod budget_observer;
pub(crate) mod budget_scope;
pub mod cassette;
pub mod context_fence;
pub(crate) mod external_call;
pub(crate) mod foreign_tool;
pub(crate) mod isolated;
pub(crate) mod mock;
pub(crate) mod model_effect;
pub(crate) mod model_span;
pub(crate) mod token_stream;
pub(crate) mod tool_call;
pub(crate) mod tool_loop;
pub(crate) mod tool_span;
pub(crate) mod tool_turn;
