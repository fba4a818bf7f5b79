//! Kora's front end: source text in, syntax tree and diagnostics out; it never fails and never panics.
//!
//! The path through it: `lexer` (logos) turns text into tokens, `layout`
//! turns indentation into INDENT/DEDENT, `parser` (chumsky) builds the `ast`
//! with error recovery, and `ops` numbers the calls of each function so an
//! effect can be identified structurally rather than by line.

pub mod ast;
pub mod comments;
pub mod diagnostic;
pub mod layout;
pub mod lexer;
pub mod ops;
pub mod parser;
pub mod reparse;
pub mod shift;
pub mod span;
pub mod token;
pub mod visit;

pub use diagnostic::{Diagnostic, Label, Severity, SourceFile};
pub use span::{LineIndex, Span};

/// The result of parsing one file: the tree (with error nodes where recovery
/// happened) and every diagnostic found, in source order.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub module: ast::Module,
    pub diagnostics: Vec<Diagnostic>,
}

/// Parses one source file. Never panics: bad input yields error nodes and diagnostics.
pub fn parse(src: &str) -> Parsed {
    parser::parse_module(src)
}
