//! Blocks: the lines of a body, the blank lines between them, and the comments on
//! lines of their own between, before and after them.
//!
//! Blank lines follow Black: at most two at the top level and one inside a
//! block, none at the start of a block; exactly two around a top-level `def`,
//! `tool`, `agent`, record or `test` (one around a nested one); one after a
//! module docstring. Comments right above a definition stay attached to it,
//! the blank lines going above the comments. A comment after the last line of
//! a block belongs to the block if it is indented as deep as the block.

use kora_syntax::ast::{FieldDecl, Handler, MatchArm, Stmt, StmtKind};
use kora_syntax::span::Span;

use crate::doc::{hardline, list, text, Doc};
use crate::formatter::Fmt;

#[derive(Clone, Copy)]
pub(crate) enum EntryKind<'a> {
    Stmt(&'a Stmt),
    Field(&'a FieldDecl),
    Arm(&'a MatchArm),
    Handler(&'a Handler),
    /// A record body line the tree does not keep (a string, `pass`): printed as a token.
    Raw,
}

#[derive(Clone, Copy)]
pub(crate) struct Entry<'a> {
    pub span: Span,
    pub kind: EntryKind<'a>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Prev {
    Nothing,
    Definition,
    ModuleDocstring,
    Other,
}

fn is_definition(e: &Entry<'_>) -> bool {
    matches!(
        e.kind,
        EntryKind::Stmt(Stmt {
            kind: StmtKind::Def(_) | StmtKind::Record(_) | StmtKind::Test { .. },
            ..
        })
    )
}

fn is_docstring(e: &Entry<'_>) -> bool {
    matches!(
        e.kind,
        EntryKind::Stmt(Stmt {
            kind: StmtKind::Expr { expr, .. },
            ..
        }) if matches!(expr.kind, kora_syntax::ast::ExprKind::Str(_))
    )
}

/// The statements of a body as entries; `import a, b` is several statements with one span.
pub(crate) fn stmt_entries(stmts: &[Stmt]) -> Vec<Entry<'_>> {
    let mut out: Vec<Entry<'_>> = Vec::with_capacity(stmts.len());
    for st in stmts {
        if out.last().is_some_and(|e| e.span == st.span) {
            continue;
        }
        out.push(Entry {
            span: st.span,
            kind: EntryKind::Stmt(st),
        });
    }
    out
}

/// `n` blank lines, then the line break that starts the next line.
fn breaks(n: usize) -> Doc {
    list((0..=n).map(|_| hardline()).collect())
}

impl Fmt<'_> {
    /// How many blank lines go before a line, given the source's count and what came before.
    fn blank_rule(
        &self,
        first: bool,
        source: usize,
        prev: Prev,
        definition: bool,
        top: bool,
    ) -> usize {
        let max = if top { 2 } else { 1 };
        if first {
            0
        } else if prev == Prev::Definition || definition {
            max
        } else if prev == Prev::ModuleDocstring {
            1
        } else {
            source.min(max)
        }
    }

    /// The lines of a block, each preceded by its line break: what goes in an `indent`
    /// (or, at the top level, the module). `limit` is where the code after the block starts.
    pub(crate) fn block(&mut self, entries: &[Entry<'_>], top: bool, limit: u32) -> Doc {
        let mut out = Vec::new();
        let mut emitted = false;
        let mut prev = Prev::Nothing;
        let column = entries.first().map_or(0, |e| self.src.column(e.span.start));
        for (i, en) in entries.iter().enumerate() {
            let next = entries.get(i + 1).map_or(limit, |e| e.span.start);
            let definition = is_definition(en);
            // A comment that ended the line above stays there, whatever that line was.
            out.push(self.trailing(en.span.start));
            let comments = self.take_before(en.span.start);
            // The comments directly above the entry, with no blank line between, go with it.
            let mut attached = comments.len();
            let mut below = en.span.start;
            while attached > 0 && self.src.blank_lines_before(below) == 0 {
                attached -= 1;
                below = comments[attached].span.start;
            }
            for (k, c) in comments.iter().enumerate() {
                let source = self.src.blank_lines_before(c.span.start);
                let n = if k < attached {
                    self.blank_rule(!emitted, source, prev, false, top)
                } else if k == attached {
                    self.blank_rule(!emitted, source, prev, definition, top)
                } else {
                    0
                };
                out.push(breaks(n));
                out.push(text(self.comment_text(*c)));
                emitted = true;
                prev = Prev::Other;
            }
            let n = if attached < comments.len() {
                0
            } else {
                let source = self.src.blank_lines_before(en.span.start);
                self.blank_rule(!emitted, source, prev, definition, top)
            };
            out.push(breaks(n));
            out.push(self.entry(en, top, next));
            let line_end = self.src.line_end(en.span.end);
            out.push(self.trailing(line_end.min(next)));
            emitted = true;
            prev = if definition {
                Prev::Definition
            } else if top && i == 0 && is_docstring(en) && entries.len() > 1 {
                Prev::ModuleDocstring
            } else {
                Prev::Other
            };
        }
        while let Some(c) = self.next_own_line(limit) {
            if !top && self.src.column(c.span.start) < column {
                break;
            }
            self.advance();
            let source = self.src.blank_lines_before(c.span.start);
            out.push(breaks(self.blank_rule(!emitted, source, prev, false, top)));
            out.push(text(self.comment_text(c)));
            emitted = true;
            prev = Prev::Other;
        }
        list(out)
    }

    fn entry(&mut self, en: &Entry<'_>, top: bool, next: u32) -> Doc {
        let _ = top;
        match en.kind {
            EntryKind::Stmt(st) => self.stmt(st, next),
            EntryKind::Field(fd) => self.field(fd),
            EntryKind::Arm(arm) => self.arm(arm, next),
            EntryKind::Handler(h) => self.handler(h, next),
            EntryKind::Raw => {
                let raw = self.src.slice(en.span);
                if raw.starts_with(['\'', '"', 'r', 'R', 'u', 'U']) {
                    self.string(en.span)
                } else {
                    text(raw)
                }
            }
        }
    }

    /// Comments on lines of their own before a clause keyword (`elif`, `else`): at the
    /// clause's own indentation, each on its line.
    pub(crate) fn clause_comments(&mut self, keyword: u32) -> Doc {
        let cs = self.take_before(keyword);
        let mut out = Vec::new();
        for c in cs {
            out.push(text(self.comment_text(c)));
            out.push(hardline());
        }
        list(out)
    }
}
