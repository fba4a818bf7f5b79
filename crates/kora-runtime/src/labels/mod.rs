//! Security labels as data: the `Labeled` box, tags, joins and origins (`label.rs`), small
//! ints and bools labelled inline (`small.rs`), containers seen through a label (`view.rs`),
//! `declassify` releases (`release.rs`), labels on a container's shape (`shape.rs`), mapping a value's leaves in place
//! (`leaves_owned.rs`), operators on labelled operands computed on the plain values
//! (`ops.rs`), and `redact` (`redact.rs`).
//!
//! May use: `value` (a label wraps a value; `value` in turn reads through labels, the one
//! two-way edge, listed in `docs/architecture.md`). Must not know: the interpreter, effects,
//! sinks' configuration (the interpreter checks sinks in `eval/declassify.rs` and
//! `agents/analyze.rs`).

pub mod label;
pub(crate) mod leaves_owned;
pub(crate) mod ops;
pub mod redact;
pub(crate) mod release;
pub mod shape;
pub mod small;
pub(crate) mod view;
