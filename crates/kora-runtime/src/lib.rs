//! Kora's runtime: values, the tree-walking interpreter and its frame stack, and the built-ins.
//!
//! It walks the resolved tree from `kora-check`; it knows nothing of
//! terminals, editors or protocols (those are adapters over `debug::Debugger`).

pub mod agents;
pub mod config;
pub mod durable;
pub mod error;
pub mod eval;
pub mod external;
pub mod grants;
pub mod labels;
pub mod observe;
pub mod parallel;
pub mod stdlib;
pub mod value;

pub use error::{RtError, RtResult};
pub use eval::Interp;
pub use parallel::pool::{branch_width, check_width_setting};
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
