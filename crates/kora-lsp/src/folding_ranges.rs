//! Folding ranges: every block statement (functions, types, `if`/`for`/`while`/`match` and their
//! arms, `test`, `with` blocks), runs of comment lines, and the group of `use` lines at the top.

use kora_syntax::ast::{MatchArm, Stmt, StmtKind};
use kora_syntax::comments::comments;
use kora_syntax::visit::children::child_blocks;
use kora_syntax::visit::{walk_match_arm, walk_stmt, Visitor};
use kora_syntax::Span;
use tower_lsp_server::ls_types::{FoldingRange, FoldingRangeKind};

use crate::analysis::FileAnalysis;

struct Folds<'f> {
    f: &'f FileAnalysis,
    out: Vec<FoldingRange>,
}

impl Folds<'_> {
    fn line(&self, offset: u32) -> u32 {
        self.f.lines.position(&self.f.text, offset as usize).line
    }

    fn add(&mut self, span: Span, kind: Option<FoldingRangeKind>) {
        // A span's end is just past its last character, which may be a line break.
        let start = self.line(span.start);
        let end = self.line(span.end.saturating_sub(1).max(span.start));
        if end > start {
            self.out.push(FoldingRange {
                start_line: start,
                end_line: end,
                kind,
                ..FoldingRange::default()
            });
        }
    }
}

impl<'a> Visitor<'a> for Folds<'_> {
    fn visit_stmt(&mut self, s: &'a Stmt) {
        let blocks = child_blocks(s);
        // A record's block holds fields, not statements; a `match` holds arms.
        let record_or_match = matches!(s.kind, StmtKind::Record(_) | StmtKind::Match { .. });
        if !blocks.is_empty() || record_or_match {
            self.add(s.span, None);
        }
        walk_stmt(self, s)
    }

    fn visit_match_arm(&mut self, arm: &'a MatchArm) {
        self.add(arm.span, None);
        walk_match_arm(self, arm)
    }
}

pub fn folding_ranges(f: &FileAnalysis) -> Vec<FoldingRange> {
    let mut folds = Folds { f, out: Vec::new() };
    folds.visit_block(&f.ast.stmts);
    // The `use` lines at the top, folded as imports.
    let uses: Vec<Span> = f
        .ast
        .stmts
        .iter()
        .take_while(|s| matches!(s.kind, StmtKind::Use(_) | StmtKind::PythonImport { .. }))
        .map(|s| s.span)
        .collect();
    if let (Some(first), Some(last)) = (uses.first(), uses.last()) {
        folds.add(first.to(*last), Some(FoldingRangeKind::Imports));
    }
    // Runs of whole-line comments.
    let mut run: Option<(u32, u32)> = None;
    for c in comments(&f.text).into_iter().filter(|c| c.own_line) {
        let line = folds.line(c.span.start);
        run = match run {
            Some((a, b)) if b + 1 == line => Some((a, line)),
            Some((a, b)) => {
                push_comment_run(&mut folds.out, a, b);
                Some((line, line))
            }
            None => Some((line, line)),
        };
    }
    if let Some((a, b)) = run {
        push_comment_run(&mut folds.out, a, b);
    }
    folds
        .out
        .sort_by_key(|r| (r.start_line, std::cmp::Reverse(r.end_line)));
    folds.out
}

fn push_comment_run(out: &mut Vec<FoldingRange>, start: u32, end: u32) {
    if end > start {
        out.push(FoldingRange {
            start_line: start,
            end_line: end,
            kind: Some(FoldingRangeKind::Comment),
            ..FoldingRange::default()
        });
    }
}
