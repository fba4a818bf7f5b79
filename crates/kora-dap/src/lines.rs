//! Where a breakpoint can land: the lines on which a statement starts, and the `parallel for` bodies where none can stop.

use std::collections::BTreeSet;
use std::path::Path;

use kora_check::check_program;
use kora_check::hir::{self, StmtKind as H};
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
    /// Inclusive line ranges of functions some `parallel for` branch can run, with their
    /// name and whether code outside any branch can run them too.
    pub branch_functions: Vec<(u32, u32, String, bool)>,
}

/// Where a requested breakpoint landed.
#[derive(Debug, PartialEq, Eq)]
pub enum Landing {
    /// On `line`: the requested one, or the next line with a statement; with a caveat to show.
    At(u32, Option<String>),
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
        let Some(&l) = self.statements.range(requested..).next() else {
            return Landing::Refused(format!("no statement at or after line {requested}"));
        };
        let branch = self
            .branch_functions
            .iter()
            .filter(|(a, b, _, _)| *a <= l && l <= *b)
            .min_by_key(|(a, b, _, _)| b - a);
        match branch {
            Some((_, _, name, false)) => Landing::Refused(format!(
                "`{name}` runs only in `parallel for` branches, which run on worker threads with no debugger: put the breakpoint where the loop is, or call `{name}` outside the loop to debug it"
            )),
            Some((_, _, name, true)) => Landing::At(
                l,
                Some(format!(
                    "stops only when `{name}` is called outside a `parallel for`; its calls from branches run on worker threads with no debugger"
                )),
            ),
            None => Landing::At(l, None),
        }
    }
}

/// Reads, parses and checks `path` to find its statement lines; `root` is the launched
/// program, whose `parallel for` branches decide which functions cannot stop.
pub fn file_lines(path: &Path, root: Option<&Path>) -> FileLines {
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
    let checked = |p: &Path| {
        let project = kora_pkg::Project::for_entry(p);
        check_program(p, &project).ok().and_then(|c| c.program)
    };
    let holds = |p: &kora_check::hir::Program| p.modules.iter().any(|m| m.path == canonical);
    // The launched program sees every caller; a file it does not `use` is checked on its own.
    let program = root
        .and_then(checked)
        .filter(|p| holds(p))
        .or_else(|| checked(path));
    match program.as_ref().and_then(|p| {
        p.modules
            .iter()
            .find(|m| m.path == canonical)
            .map(|m| (p, m))
    }) {
        Some((p, m)) => {
            hir_lines(&m.body.body, &index, &mut out.statements);
            for f in crate::reach::reached_from_branches(p) {
                if f.module == m.id {
                    let last = f.span.end.saturating_sub(1).max(f.span.start);
                    out.branch_functions.push((
                        index.line(f.span.start),
                        index.line(last),
                        f.name,
                        f.also_sequential,
                    ));
                }
            }
        }
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
        let lines = file_lines(&path, None);
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(lines.parallel, vec![(5, 6), (8, 8)]);
    }
}
