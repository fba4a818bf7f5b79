//! Editor positions and byte offsets: LSP counts lines from 0 and columns in UTF-16 code units, Kora spans are byte offsets.

use tower_lsp_server::ls_types::{Position, Range};

/// Where each line of one text starts, so a position converts without rescanning the file.
#[derive(Clone, Debug)]
pub struct Lines {
    starts: Vec<usize>,
    /// Bytes of a UTF-8 byte order mark opening the text: editors hide it, so no column counts it.
    bom: usize,
}

impl Lines {
    pub fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
        Lines { starts, bom }
    }

    /// The LSP position of a byte offset (clamped to the text, and back to a character boundary).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_start(line).min(offset);
        let character: usize = text[start..offset].chars().map(char::len_utf16).sum();
        Position::new(line as u32, character as u32)
    }

    /// Where line `line`'s first column is: after the byte order mark on line 0.
    fn line_start(&self, line: usize) -> usize {
        match line {
            0 => self.bom,
            _ => self.starts[line],
        }
    }

    pub fn range(&self, text: &str, span: kora_syntax::Span) -> Range {
        Range::new(
            self.position(text, span.start as usize),
            self.position(text, span.end as usize),
        )
    }

    /// The byte offset of an LSP position; a position past a line's end means that line's end.
    pub fn offset(&self, text: &str, pos: Position) -> usize {
        if pos.line as usize >= self.starts.len() {
            return text.len();
        }
        let start = self.line_start(pos.line as usize);
        let end = self
            .starts
            .get(pos.line as usize + 1)
            .map(|e| e - 1)
            .unwrap_or(text.len());
        let mut units = 0usize;
        for (i, c) in text[start..end].char_indices() {
            if units >= pos.character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        end
    }
}

/// Applies one `didChange` edit: a range replaced by new text, or the whole document when there is no range.
pub fn apply_change(text: &mut String, range: Option<Range>, new_text: &str) {
    match range {
        None => *text = new_text.to_string(),
        Some(r) => {
            let lines = Lines::new(text);
            let a = lines.offset(text, r.start);
            let b = lines.offset(text, r.end).max(a);
            text.replace_range(a..b, new_text);
        }
    }
}

/// The identifier around (or just before) a byte offset, as a byte range.
pub fn word_at(text: &str, offset: usize) -> Option<std::ops::Range<usize>> {
    let is_ident = |c: char| c == '_' || c.is_alphanumeric();
    let offset = offset.min(text.len());
    if !text.is_char_boundary(offset) {
        return None;
    }
    let start = text[..offset]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_ident(*c))
        .last()
        .map(|(i, _)| i)
        .unwrap_or(offset);
    let end = text[offset..]
        .char_indices()
        .find(|(_, c)| !is_ident(*c))
        .map(|(i, _)| offset + i)
        .unwrap_or(text.len());
    (start < end).then_some(start..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_round_trip() {
        let text = "a = 1\nś = \"😀x\"\n";
        let lines = Lines::new(text);
        let x = text.find('x').unwrap_or(0);
        let p = lines.position(text, x);
        // `ś` is one UTF-16 unit, the emoji two.
        assert_eq!(p, Position::new(1, 7));
        assert_eq!(lines.offset(text, p), x);
        assert_eq!(lines.offset(text, Position::new(9, 0)), text.len());
    }

    #[test]
    fn a_byte_order_mark_is_no_column() {
        let text = "\u{feff}total = 1\nx = total\n";
        let lines = Lines::new(text);
        let t = text.find("total").unwrap_or(0);
        assert_eq!(lines.position(text, t), Position::new(0, 0));
        assert_eq!(lines.position(text, t + 6), Position::new(0, 6));
        assert_eq!(lines.offset(text, Position::new(0, 6)), t + 6);
        assert_eq!(lines.offset(text, Position::new(0, 0)), t);
        // Inside the mark itself (no editor sends this) it still maps to column 0.
        assert_eq!(lines.position(text, 1), Position::new(0, 0));
        let x = text.rfind("total").unwrap_or(0);
        assert_eq!(lines.position(text, x), Position::new(1, 4));
    }

    #[test]
    fn incremental_edit_replaces_the_range() {
        let mut text = "x = 1\ny = 2\n".to_string();
        apply_change(
            &mut text,
            Some(Range::new(Position::new(1, 4), Position::new(1, 5))),
            "40",
        );
        assert_eq!(text, "x = 1\ny = 40\n");
        apply_change(&mut text, None, "z = 0\n");
        assert_eq!(text, "z = 0\n");
    }

    #[test]
    fn words_are_found_from_inside_and_from_the_end() {
        let t = "total = price.amount";
        assert_eq!(word_at(t, 16), Some(14..20));
        assert_eq!(word_at(t, 5), Some(0..5));
        assert_eq!(word_at(t, 6), None);
    }
}
