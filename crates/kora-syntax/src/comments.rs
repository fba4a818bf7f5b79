//! Comments as a side table: every `# ...` of a file with its byte span, found between tokens.
//!
//! The grammar never sees comments (the lexer skips them), and it stays that
//! way: tools that must keep them (the formatter) ask for this table and place
//! each comment by its offset. A `#` can only start a comment in the gap
//! between two tokens, because strings and f-strings are single tokens; so the
//! gaps of the lexer's own token stream are exactly where comments live.

use crate::lexer::lex;
use crate::span::Span;

/// One comment: its span runs from the `#` to the end of its line (the line break excluded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comment {
    pub span: Span,
    /// Nothing but indentation stands before it on its line.
    pub own_line: bool,
}

impl Comment {
    /// The comment's text, `#` included, without trailing whitespace.
    pub fn text<'s>(&self, src: &'s str) -> &'s str {
        src.get(self.span.range()).unwrap_or("").trim_end()
    }
}

/// Every comment of `src`, in source order. Never fails: text the lexer rejects is a token too.
pub fn comments(src: &str) -> Vec<Comment> {
    let (tokens, _) = lex(src, 0);
    let mut out = Vec::new();
    let mut gap_start = 0usize;
    for (_, span) in tokens.iter() {
        scan_gap(src, gap_start, span.start as usize, &mut out);
        gap_start = gap_start.max(span.end as usize);
    }
    scan_gap(src, gap_start, src.len(), &mut out);
    out
}

/// Finds the comments in `src[from..to]`, a stretch that holds no token.
fn scan_gap(src: &str, from: usize, to: usize, out: &mut Vec<Comment>) {
    let Some(gap) = src.get(from..to) else {
        return;
    };
    let mut at = 0;
    while let Some(i) = gap[at..].find('#') {
        let start = from + at + i;
        let rest = &src[start..to];
        let len = rest.find(['\n', '\r']).unwrap_or(rest.len());
        let line_start = src[..start].rfind('\n').map_or(0, |n| n + 1);
        let own_line = src[line_start..start]
            .bytes()
            .all(|b| matches!(b, b' ' | b'\t' | b'\x0c'));
        out.push(Comment {
            span: Span::new(start as u32, (start + len) as u32),
            own_line,
        });
        at = start + len - from;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(src: &str) -> Vec<(&str, bool)> {
        comments(src)
            .iter()
            .map(|c| (c.text(src), c.own_line))
            .collect()
    }

    #[test]
    fn finds_own_line_and_trailing_comments() {
        let src = "# head\nx = 1  # one\n    # indented\ny = '# not a comment'\n";
        assert_eq!(
            texts(src),
            vec![("# head", true), ("# one", false), ("# indented", true)]
        );
    }

    #[test]
    fn strings_and_fstrings_hide_hashes() {
        let src = "f\"{x}#\" '''a\n# b\n''' # c\n";
        assert_eq!(texts(src), vec![("# c", false)]);
    }

    #[test]
    fn comment_at_end_of_file_without_newline_and_crlf() {
        assert_eq!(texts("x\r\n# a\r\n#b"), vec![("# a", true), ("#b", true)]);
        assert_eq!(comments("x\r\n# a\r\n")[0].span, Span::new(3, 6));
    }

    #[test]
    fn continuation_lines_and_brackets() {
        let src = "x = [1,  # a\n  2] + \\\n  3  # b\n";
        assert_eq!(texts(src), vec![("# a", false), ("# b", false)]);
    }
}
