//! Durability: the one effect pipeline every effect passes through (`effect.rs`: Prepared →
//! Sent → Observed → Terminal, and the observers that watch it), the meters a budget answers
//! `Exhausted` with (`meter.rs`), the journal a killed run resumes from (`journal/`: the
//! checked line format, loading with torn tails and damage, group commit, the run lock, the
//! fold, the checks that settle an attempt cut off by a kill, the decision a resume makes
//! before it runs anything, the replaying observer, journaled output), and how a file Kora
//! writes keeps a classified value without its text (`machine_key.rs`, `seal.rs`).
//!
//! May use: `config`, `value`, `labels`. Must not know: the interpreter, agents or the
//! standard library. An effect is described by kind, class and operation id, and whoever
//! performs it passes a closure; the pipeline never learns what a model or a file is.

pub mod effect;
pub mod journal;
pub mod machine_key;
pub mod meter;
pub mod seal;
