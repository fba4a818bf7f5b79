//! Observation seams: the `Tracer` trait and the spans the runtime reports (`trace.rs`), a
//! worker's spans buffered for its caller (`span_buffer.rs`), the `Debugger` and `FrameStack`
//! traits (`debug.rs`), and a runtime error rendered with its Kora stack (`report.rs`).
//!
//! May use: `value`. Must not know: the interpreter (its side of these seams is
//! `eval/tracing.rs`), OTLP, DAP, or any classified value's text.

pub mod debug;
pub mod report;
pub(crate) mod span_buffer;
pub mod trace;
