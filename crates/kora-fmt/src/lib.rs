//! Kora's formatter: one canonical layout, written from the syntax tree, with every comment kept.
//!
//! The path through it: `kora_syntax::parse` gives the tree (a file with
//! syntax errors is refused, untouched); `formatter` walks it into a layout
//! document (`doc`), taking comments from the side table in source order
//! (`trivia`) and what the tree does not keep (parentheses, trailing commas,
//! literal spellings) from the tokens (`source`); `printer` fits the document
//! into the line width; `verify` re-parses the result and refuses it unless it
//! is the same program with the same comments. `config` reads `kora.toml
//! [fmt]`; `edits` turns a change into a diff or editor edits.

mod block;
mod brackets;
mod chain;
pub mod config;
pub mod doc;
pub mod edits;
mod expr;
mod formatter;
mod literals;
pub mod options;
pub mod printer;
mod source;
mod stmt;
mod trivia;
mod types;
pub mod verify;

pub use config::{ConfigError, FmtConfig};
pub use options::{Options, QuoteStyle};

use kora_syntax::Diagnostic;

/// Why a text was not formatted.
#[derive(Debug)]
pub enum FormatError {
    /// The text has syntax errors: it is left as it is.
    Syntax(Vec<Diagnostic>),
    /// The layout failed its own check; a bug in the formatter, reported rather than written.
    Unsafe(String),
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatError::Syntax(d) => write!(
                f,
                "{} syntax error{}",
                d.len(),
                if d.len() == 1 { "" } else { "s" }
            ),
            FormatError::Unsafe(why) => write!(
                f,
                "the formatter could not lay this file out safely ({why}); this is a bug in Kora"
            ),
        }
    }
}

impl std::error::Error for FormatError {}

/// The layout of an error-free `src` without the safety check: for tests that study a
/// refused layout.
#[doc(hidden)]
pub fn layout_unchecked(src: &str, opts: &Options) -> String {
    formatter::layout(src, &kora_syntax::parse(src).module, opts)
}

/// The canonical layout of `src`. Line endings are kept: a file written with `\r\n`
/// stays so.
pub fn format(src: &str, opts: &Options) -> Result<String, FormatError> {
    let parsed = kora_syntax::parse(src);
    let errors: Vec<Diagnostic> = parsed
        .diagnostics
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect();
    if !errors.is_empty() {
        return Err(FormatError::Syntax(errors));
    }
    if !src.contains("\r\n") {
        let out = formatter::layout(src, &parsed.module, opts);
        verify::faithful(src, &parsed.module, &out).map_err(FormatError::Unsafe)?;
        return Ok(out);
    }
    let text = src.replace("\r\n", "\n");
    let tree = kora_syntax::parse(&text).module;
    let out = formatter::layout(&text, &tree, opts);
    verify::faithful(&text, &tree, &out).map_err(FormatError::Unsafe)?;
    Ok(out.replace('\n', "\r\n"))
}
