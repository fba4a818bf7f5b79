//! Document and range formatting: `kora fmt`'s layout with the options of the nearest
//! `kora.toml [fmt]`, sent as edits of the lines that change.
//!
//! A document with syntax errors gets no edits (its diagnostics already say why);
//! a range request re-lays out the top-level statements the range touches, nothing else.

use std::path::Path;

use kora_fmt::edits::{line_edits, statement_edits, LineEdit};
use kora_fmt::{FmtConfig, FormatError};
use tower_lsp_server::ls_types::{Position, Range, TextEdit};

/// Why formatting was refused, for the editor to show.
pub type Refusal = String;

fn as_text_edit(e: LineEdit) -> TextEdit {
    TextEdit {
        range: Range::new(
            Position::new(e.start as u32, 0),
            Position::new(e.end as u32, 0),
        ),
        new_text: e.text,
    }
}

/// The edits that lay `text` (the buffer of the file at `path`) out; `None` when it has
/// syntax errors. Only lines `lines` (inclusive) are touched when a range is given.
pub fn format_edits(
    path: &Path,
    text: &str,
    lines: Option<(u32, u32)>,
) -> Result<Option<Vec<TextEdit>>, Refusal> {
    let cfg = FmtConfig::discover(path).map_err(|e| e.to_string())?;
    let out = match kora_fmt::format(text, &cfg.options) {
        Ok(out) => out,
        Err(FormatError::Syntax(_)) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let edits = match lines {
        None => line_edits(text, &out),
        Some((a, b)) => statement_edits(text, &out, a as usize, b as usize),
    };
    Ok(Some(edits.into_iter().map(as_text_edit).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(text: &str, edits: &[TextEdit]) -> String {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut out = String::new();
        let mut at = 0usize;
        for e in edits {
            let (s, t) = (e.range.start.line as usize, e.range.end.line as usize);
            out.extend(lines[at..s].iter().copied());
            out.push_str(&e.new_text);
            at = t;
        }
        out.extend(lines[at.min(lines.len())..].iter().copied());
        out
    }

    #[test]
    fn whole_document_and_ranges() {
        let path = Path::new("/nonexistent-kora-dir/x.ko");
        let text = "a=1\nb = 2\nc=3\n";
        let all = format_edits(path, text, None).expect("ok").expect("edits");
        assert_eq!(apply(text, &all), "a = 1\nb = 2\nc = 3\n");
        let first = format_edits(path, text, Some((0, 0)))
            .expect("ok")
            .expect("edits");
        assert_eq!(apply(text, &first), "a = 1\nb = 2\nc=3\n");
        assert!(format_edits(path, "x = (\n", None).expect("ok").is_none());
        assert_eq!(
            format_edits(path, "a = 1\n", None).expect("ok"),
            Some(Vec::new())
        );
    }
}
