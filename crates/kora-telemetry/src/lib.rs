//! Kora's telemetry: spans from the runtime's tracer seam, kept in memory, written as OTLP JSON,
//! exported over OTLP/HTTP (`export.rs`), printed as a tree (`kora trace`) and summed into a
//! cost report (`--report cost`).
//!
//! One recording feeds all three, so the trace file and the cost report can
//! never disagree about what a run spent.

pub mod cost;
mod encoder;
pub mod export;
mod export_config;
mod handoff;
mod interner;
pub mod otlp;
pub mod recorder;
mod recycle;
mod span_event;
pub mod store;
mod trace_out;
pub mod tree;

pub use recorder::{Recorder, Recording, RunIds, SpanData};
