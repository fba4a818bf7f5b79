//! Where a breakpoint can land: the lines on which a statement starts, and the `parallel for` bodies where none can stop.

use std::collections::BTreeSet;
use std::path::Path;

use kora_check::hir::{self, StmtKind as H};
use kora_check::{check_program, Disk};
use kora_syntax::ast::{Stmt, StmtKind};
use kora_syntax::visit::children::each_stmt;
use kora_syntax::LineIndex;

/// What `setBreakpoints` needs to know about one file.
#[derive(Debug, Default)]
pub struct FileLines {
    /// 1-based lines on which the interpreter starts a statement.
    pub statements: BTreeSet<u32>,
    /// Inclusive line ranges of `parallel for` bodies.
    pub parallel: Vec<(u32, u32)>,
    /// Why no breakpoint in this file can be trusted (it cannot be read, or does not check).
    pub problem: Option<String>,
}

/// Where a requested breakpoint landed.
#[derive(Debug, PartialEq, Eq)]
pub enum Landing {
    /// On `line`: the requested one, or the next line with a statement.
    At(u32),
    Refused(String),
}

impl FileLines {
    pub fn land(&self, requested: u32) -> Landing {
        if self
            .parallel
            .iter()
            .any(|(a, b)| *a <= requested && requested <= *b)
        {
            return Landing::Refused(
                "a `parallel for` body cannot be stopped in: its branches run on worker threads with their own interpreters; put the breakpoint before or after the loop".into(),
            );
        }
        if let Some(p) = &self.problem {
            return Landing::Refused(p.clone());
        }
        match self.statements.range(requested..).next() {
            Some(&l) => Landing::At(l),
            None => Landing::Refused(format!("no statement at or after line {requested}")),
        }
    }
}

/// Reads, parses and checks `path` to find its statement lines.
pub fn file_lines(path: &Path) -> FileLines {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            return FileLines {
                problem: Some(format!("cannot read {}: {e}", path.display())),
                ..FileLines::default()
            }
        }
    };
    let index = LineIndex::new(&text);
    let mut out = FileLines::default();
    let parsed = kora_syntax::parse(&text);
    parallel_bodies(&parsed.module.stmts, &index, &mut out.parallel);
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let program = check_program(path, &Disk).ok().and_then(|c| c.program);
    match program
        .as_ref()
        .and_then(|p| p.modules.iter().find(|m| m.path == canonical))
    {
        Some(m) => hir_lines(&m.body.body, &index, &mut out.statements),
        None => {
            out.problem = Some(
                "this file has errors (see `kora check`); it cannot run until they are fixed"
                    .into(),
            );
        }
    }
    out
}

fn hir_lines(stmts: &[hir::Stmt], index: &LineIndex, out: &mut BTreeSet<u32>) {
    for s in stmts {
        out.insert(index.line(s.span.start));
        match &s.kind {
            H::If(branches, orelse) => {
                for (_, b) in branches {
                    hir_lines(b, index, out);
                }
                if let Some(b) = orelse {
                    hir_lines(b, index, out);
                }
            }
            H::While(_, b) | H::For(_, _, b) => hir_lines(b, index, out),
            H::Unwrap { orelse, .. } => hir_lines(orelse, index, out),
            H::Def(_, f) => hir_lines(&f.body, index, out),
            H::Match(_, arms) => {
                for a in arms {
                    hir_lines(&a.body, index, out);
                }
            }
            _ => {}
        }
    }
}

/// Every `parallel for` body, nested ones and those inside handlers included.
fn parallel_bodies(stmts: &[Stmt], index: &LineIndex, out: &mut Vec<(u32, u32)>) {
    each_stmt(stmts, &mut |s| {
        if let StmtKind::For {
            body,
            parallel: Some(_),
            ..
        } = &s.kind
        {
            if let (Some(first), Some(last)) = (body.first(), body.last()) {
                out.push((
                    index.line(first.span.start),
                    index.line(last.span.end.saturating_sub(1).max(last.span.start)),
                ));
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_bodies_inside_handlers_are_found() {
        let dir = std::env::temp_dir().join(format!("kora-dap-lines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("h.ko");
        let src = "def f(t: str) -> None:\n    r: Result[str] = analyze(t, \"x\")\n        on token(piece):\n            rs = parallel for c in [1, 2]:\n                print(c)\n                print(piece)\n    xs = parallel for c in [1]:\n        print(c)\n";
        std::fs::write(&path, src).expect("write program");
        let lines = file_lines(&path);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(lines.parallel, vec![(5, 6), (8, 8)]);
    }
}
