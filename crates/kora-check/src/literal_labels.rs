//! The label-transparency mode: every literal of a program lowered with a label on it, so a
//! whole test corpus can be run a second time with labelled values and compared.
//!
//! A label must never change what an operator, method or built-in answers (only sinks see
//! it). The differential test (`crates/kora-cli/tests/label_transparency.rs`) proves that by
//! running every conformance program with each literal labelled; the binary turns this on
//! from `KORA_LABEL_LITERALS`. Off, lowering is exactly as it always was.

use std::sync::atomic::{AtomicU8, Ordering};

/// Which label lowering puts on literals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiteralLabel {
    Unverified,
    Classified,
}

static MODE: AtomicU8 = AtomicU8::new(0);

/// Sets the label every literal lowered from now on carries (`None`: no label).
pub fn set(label: Option<LiteralLabel>) {
    let n = match label {
        None => 0,
        Some(LiteralLabel::Unverified) => 1,
        Some(LiteralLabel::Classified) => 2,
    };
    MODE.store(n, Ordering::Relaxed);
}

/// The label lowering puts on literals, if any.
pub fn get() -> Option<LiteralLabel> {
    match MODE.load(Ordering::Relaxed) {
        1 => Some(LiteralLabel::Unverified),
        2 => Some(LiteralLabel::Classified),
        _ => None,
    }
}

/// Reads the mode's name as `KORA_LABEL_LITERALS` gives it: `unverified` or `classified`.
pub fn parse(name: &str) -> Option<LiteralLabel> {
    match name {
        "unverified" => Some(LiteralLabel::Unverified),
        "classified" => Some(LiteralLabel::Classified),
        _ => None,
    }
}
