//! Durability: the one effect pipeline every effect passes through (`effect.rs`: Prepared →
//! Sent → Observed → Terminal, and the observers that watch it), the meters a budget answers
//! `Exhausted` with (`meter.rs`), and the journal a killed run resumes from (`journal/`: the
//! line format, loading with torn tails, group commit, the run lock, the fold, the replaying
//! observer, journaled output).
//!
//! May use: `config`, `value`, `labels`. Must not know: the interpreter, agents or the
//! standard library. An effect is described by kind, class and operation id, and whoever
//! performs it passes a closure; the pipeline never learns what a model or a file is.

pub mod effect;
pub mod journal;
pub mod meter;
