//! Kora's runtime: values, the tree-walking interpreter and its frame stack, and the built-ins.
//!
//! It walks the resolved tree from `kora-check`; it knows nothing of
//! terminals, editors or protocols (those are adapters over `debug::Debugger`).

mod agent_span;
pub mod analyze;
pub mod arith;
mod ask_human;
mod assert;
mod attrs;
mod aug_assign;
mod bind;
pub mod budget;
mod budget_observer;
mod budget_scope;
pub mod builtins;
pub mod caller;
pub mod cassette;
pub mod compare;
mod comprehension;
pub mod config;
pub mod config_digest;
#[cfg(test)]
mod config_fuzz;
pub mod conform;
pub mod context_fence;
pub mod debug;
mod declassify;
pub mod del_item;
pub mod effect;
pub mod error;
mod eval;
mod exec;
mod for_loop;
pub mod format;
mod frames;
pub mod index;
mod int_text;
pub mod interp;
mod isolated;
pub mod iter;
pub mod journal;
pub mod json_value;
pub mod label;
mod label_calls;
mod label_ops;
mod label_release;
pub mod label_small;
mod label_view;
mod leaves_owned;
pub mod list_items;
mod matching;
pub mod methods;
mod mock;
mod model_effect;
mod model_span;
mod parallel;
mod parallel_pool;
mod parallel_record;
pub mod portable;
pub mod pricing;
pub mod redact;
pub mod report;
pub mod sinks;
mod span_buffer;
pub mod stdlib;
mod token_stream;
mod tool_call;
mod tool_loop;
mod tool_span;
mod tool_turn;
pub mod trace;
pub mod value;

pub use error::{RtError, RtResult};
pub use interp::Interp;
pub use parallel_pool::check_width_setting;
pub use value::Value;

use kora_check::hir::Program;

/// Runs a checked program to completion, writing its output to `out`.
pub fn run(
    program: std::sync::Arc<Program>,
    out: &mut dyn std::io::Write,
) -> Result<(), Box<RtError>> {
    let mut interp = Interp::new(program, out);
    interp.run_main()
}
