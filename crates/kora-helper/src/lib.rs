//! Package helpers: compiled work in its own, confined process (the record's "Package helpers").
//!
//! `frame` is the stdio/v1 wire, `confine` the seccomp denylist and rlimits, `process` one
//! helper's lifecycle, `serve` the loop a helper binary runs, `provider` the runtime seam.

pub mod confine;
pub mod frame;
pub mod needs;
pub mod process;
pub mod serve;

pub use frame::{Frame, FrameError};
pub use needs::Needs;
pub use process::{Helper, HelperSpec, Outcome};
pub mod config;
pub mod provider;

pub use config::PdfConfig;
pub use provider::HelperProvider;
