//! Placing comments: a cursor over the file's comments, handed out in source order.
//!
//! The layout walks the tree in source order and, at each place a comment can
//! stand (before an item of a list, before a closing bracket, at the end of a
//! statement, between statements), takes the comments that lie before the
//! next piece of code. Every comment is emitted exactly once and in order, so
//! none is lost or reordered; where it lands is decided by what it was next to:
//! a comment that ended a line of code ends a line again, one on a line of its
//! own stays on a line of its own.

use kora_syntax::comments::Comment;

use crate::doc::{hardline, list, nil, text, Doc};
use crate::formatter::Fmt;

/// A comment's text as it is printed: trailing spaces dropped and, like Black, a space
/// after the `#` unless it starts `#!`, `#:` or another `#`.
pub fn normalize_comment(raw: &str) -> String {
    let t = raw.trim_end();
    let body = t.strip_prefix('#').unwrap_or(t);
    match body.chars().next() {
        Some(c) if !matches!(c, ' ' | '!' | ':' | '#' | '\'' | '\t') => format!("# {body}"),
        _ => t.to_string(),
    }
}

impl Fmt<'_> {
    fn peek(&self) -> Option<Comment> {
        self.comments.get(self.next_comment).copied()
    }

    pub(crate) fn comment_text(&self, c: Comment) -> String {
        normalize_comment(c.text(self.src.text))
    }

    /// Takes every comment that starts before `offset`.
    pub(crate) fn take_before(&mut self, offset: u32) -> Vec<Comment> {
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            if c.span.start >= offset {
                break;
            }
            out.push(c);
            self.next_comment += 1;
        }
        out
    }

    /// Whether a comment lies inside `[from, to)`, placed or not.
    pub(crate) fn comment_within(&self, from: u32, to: u32) -> bool {
        self.comments[self.next_comment..]
            .iter()
            .any(|c| c.span.start >= from && c.span.start < to)
    }

    /// A comment kept at the end of the current line: the line is forced to end after it.
    pub(crate) fn suffix(&self, c: Comment) -> Doc {
        list(vec![
            Doc::LineSuffix(format!("  {}", self.comment_text(c))),
            Doc::BreakParent,
        ])
    }

    /// Comments before `offset` where no line break belongs (inside a header, between a
    /// keyword and its operand): they move to the end of the line, and force nothing,
    /// so the layout they land in is the one the next run finds too.
    pub(crate) fn leading(&mut self, offset: u32) -> Doc {
        let cs = self.take_before(offset);
        let mut out = Vec::new();
        for c in cs {
            out.push(Doc::LineSuffix(format!("  {}", self.comment_text(c))));
        }
        list(out)
    }

    /// The comments before `next` at a place where the layout may break the line:
    /// those that ended a line of code go before the break, the rest after it, each on
    /// its own line.
    pub(crate) fn around_break(&mut self, next: u32) -> (Doc, Doc) {
        let cs = self.take_before(next);
        let mut before = Vec::new();
        let mut after = Vec::new();
        let mut own_seen = false;
        for c in cs {
            own_seen |= c.own_line;
            if own_seen {
                after.push(text(self.comment_text(c)));
                after.push(hardline());
            } else {
                before.push(self.suffix(c));
            }
        }
        (list(before), list(after))
    }

    /// Comments left before a closing bracket at `close`, inside the indented part.
    pub(crate) fn dangling(&mut self, close: u32) -> Doc {
        let cs = self.take_before(close);
        let mut out = Vec::new();
        let mut own_seen = false;
        for c in cs {
            own_seen |= c.own_line;
            if own_seen {
                out.push(hardline());
                out.push(text(self.comment_text(c)));
            } else {
                out.push(self.suffix(c));
            }
        }
        if own_seen {
            out.push(Doc::BreakParent);
        }
        list(out)
    }

    /// Comments that end the line of a statement (before `limit`), kept at its end.
    pub(crate) fn trailing(&mut self, limit: u32) -> Doc {
        let mut out = Vec::new();
        while let Some(c) = self.peek() {
            if c.span.start >= limit || c.own_line {
                break;
            }
            self.next_comment += 1;
            out.push(Doc::LineSuffix(format!("  {}", self.comment_text(c))));
        }
        if out.is_empty() {
            nil()
        } else {
            list(out)
        }
    }

    /// Drops the comments inside a span printed verbatim (they are part of its text).
    pub(crate) fn consume_within(&mut self, end: u32) {
        while self.peek().is_some_and(|c| c.span.start < end) {
            self.next_comment += 1;
        }
    }

    /// The next comment, if it is on a line of its own before `limit`.
    pub(crate) fn next_own_line(&self, limit: u32) -> Option<Comment> {
        self.peek().filter(|c| c.span.start < limit && c.own_line)
    }

    /// Takes the next comment (after `next_own_line` said which it is).
    pub(crate) fn advance(&mut self) {
        self.next_comment += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::normalize_comment;

    #[test]
    fn comment_text_gets_a_space_after_the_hash() {
        assert_eq!(normalize_comment("#note  "), "# note");
        assert_eq!(normalize_comment("# note"), "# note");
        assert_eq!(
            normalize_comment("#!/usr/bin/env kora"),
            "#!/usr/bin/env kora"
        );
        assert_eq!(normalize_comment("#: x"), "#: x");
        assert_eq!(normalize_comment("##"), "##");
        assert_eq!(normalize_comment("#"), "#");
    }
}
