//! `kora audit`'s findings: every `declassify ... for SINK:` site of a program, and every condition that reads a classified value, read from the syntax tree.
//!
//! The audit parses and follows `use "./x.ko"` exactly as the checker's
//! loader does, but does not lower: a program with a type error still has
//! its releases listed, and the listing never waits on the rest of the checker.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use kora_syntax::ast::{Stmt, StmtKind};
use kora_syntax::span::LineIndex;
use kora_syntax::visit::children::each_stmt;

use crate::loader::{self, Sources};
use crate::{codes, FileReport};

/// One `declassify` statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    /// The file as the user should see it (relative to where the audit started).
    pub file: String,
    /// 1-based line and column of the `declassify` keyword.
    pub line: u32,
    pub col: u32,
    /// The sink the value is released to.
    pub sink: String,
    /// The released expression's source text, on one line.
    pub expr: String,
}

/// A condition that reads a classified value: an implicit flow labels do not follow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConditionSite {
    pub file: String,
    /// 1-based line and column of the condition's expression.
    pub line: u32,
    pub col: u32,
    /// `if`, `elif`, `while`, `match` or `comprehension if`.
    pub kind: String,
    /// The classified name it reads (or `classified(...)`).
    pub reads: String,
    /// The condition's source text, on one line.
    pub expr: String,
}

/// Why a file's sites could not be listed.
#[derive(Debug)]
pub enum Problem {
    /// An entry file could not be read at all.
    Unreadable {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A file was read but does not parse, or `use`s a file that cannot be read;
    /// `diagnostics` holds only those errors.
    Invalid(FileReport),
}

/// The audit of some entry files and everything they `use`.
#[derive(Debug, Default)]
pub struct Audit {
    /// Sorted by file, then position; each site once however many entries reach it.
    pub sites: Vec<Site>,
    /// Sorted as `sites` are.
    pub conditions: Vec<ConditionSite>,
    /// How many distinct files were read.
    pub files: usize,
    pub problems: Vec<Problem>,
}

/// Audits each entry file and the files it reaches through `use`.
pub fn audit(entries: &[PathBuf], sources: &dyn Sources) -> Audit {
    let mut out = Audit::default();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    for entry in entries {
        let loaded = match loader::load(entry, sources) {
            Ok(l) => l,
            Err(e) => {
                out.problems.push(Problem::Unreadable {
                    path: e.path,
                    error: e.error,
                });
                continue;
            }
        };
        for f in loaded.files {
            if !seen.insert(f.path.clone()) {
                continue;
            }
            out.files += 1;
            let broken: Vec<_> = f
                .diagnostics
                .iter()
                .filter(|d| {
                    d.is_error() && (d.code.starts_with("E00") || d.code == codes::USE_NOT_FOUND)
                })
                .cloned()
                .collect();
            if !broken.is_empty() {
                out.problems.push(Problem::Invalid(FileReport {
                    display: f.display,
                    path: f.path,
                    source: f.source,
                    diagnostics: broken,
                }));
                continue;
            }
            out.sites
                .extend(file_sites(&f.display, &f.source, &f.ast.stmts));
            out.conditions
                .extend(file_conditions(&f.display, &f.source, &f.ast));
        }
    }
    out.sites
        .sort_by(|a, b| (&a.file, a.line, a.col).cmp(&(&b.file, b.line, b.col)));
    out.conditions
        .sort_by(|a, b| (&a.file, a.line, a.col).cmp(&(&b.file, b.line, b.col)));
    out
}

/// The conditions of one parsed file that read a classified value, by the checker's rule for
/// E0830 (a `classified(...)` written there, or a name whose every assignment in its
/// function is `classified(...)` or `env.get(...)`), looked for anywhere in the condition.
pub fn file_conditions(
    display: &str,
    source: &str,
    module: &kora_syntax::ast::Module,
) -> Vec<ConditionSite> {
    let index = LineIndex::new(source);
    crate::label_flow::conditions(module, source)
        .into_iter()
        .map(|c| {
            let (line, col) = index.line_col(source, c.span.start);
            ConditionSite {
                file: display.to_string(),
                line,
                col,
                kind: c.kind.to_string(),
                reads: c.reads,
                expr: one_line(source.get(c.span.range()).unwrap_or("")),
            }
        })
        .collect()
}

/// The `declassify` sites of one parsed file, in source order, nested blocks included.
pub fn file_sites(display: &str, source: &str, stmts: &[Stmt]) -> Vec<Site> {
    let index = LineIndex::new(source);
    let mut out = Vec::new();
    each_stmt(stmts, &mut |s| {
        if let StmtKind::Declassify { value, sink, .. } = &s.kind {
            let (line, col) = index.line_col(source, s.span.start);
            out.push(Site {
                file: display.to_string(),
                line,
                col,
                sink: sink.name.clone(),
                expr: one_line(source.get(value.span.range()).unwrap_or("")),
            });
        }
    });
    out
}

/// Source text with every run of whitespace that spans lines folded to one space.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut pending: Option<String> = None;
    for c in text.chars() {
        if c.is_whitespace() {
            pending.get_or_insert_with(String::new).push(c);
            continue;
        }
        if let Some(ws) = pending.take() {
            out.push_str(if ws.contains('\n') { " " } else { &ws });
        }
        out.push(c);
    }
    out
}

/// Whether `path` names a Kora source file.
pub fn is_source(path: &Path) -> bool {
    path.extension().is_some_and(|x| x == "ko")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Files in memory, keyed by their path as written.
    struct Mem(HashMap<PathBuf, String>);

    impl Sources for Mem {
        fn read(&self, path: &Path) -> std::io::Result<String> {
            self.0
                .get(&clean(path))
                .cloned()
                .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"))
        }
        fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
            let p = clean(path);
            if self.0.contains_key(&p) {
                Ok(p)
            } else {
                Err(std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no such file",
                ))
            }
        }
    }

    fn clean(p: &Path) -> PathBuf {
        p.components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect()
    }

    fn mem(files: &[(&str, &str)]) -> Mem {
        Mem(files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect())
    }

    const MAIN: &str = "use \"./lib.ko\" as lib\n\
        def ask(key: str) -> None:\n\
        \x20   if True:\n\
        \x20       declassify key for local_model:\n\
        \x20           declassify key for gpt:\n\
        \x20               pass\n";
    const LIB: &str = "x = 1\ndeclassify (token.value +\n    suffix) for local_model:\n    pass\n";

    #[test]
    fn lists_nested_sites_across_modules_once() {
        let src = mem(&[("p/main.ko", MAIN), ("p/lib.ko", LIB)]);
        // The library is also an entry: it must not be listed twice.
        let a = audit(
            &[PathBuf::from("p/main.ko"), PathBuf::from("p/lib.ko")],
            &src,
        );
        assert!(a.problems.is_empty(), "{:?}", a.problems);
        assert_eq!(a.files, 2);
        let got: Vec<(String, u32, u32, String, String)> = a
            .sites
            .into_iter()
            .map(|s| (s.file, s.line, s.col, s.sink, s.expr))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "p/lib.ko".into(),
                    2,
                    1,
                    "local_model".into(),
                    "token.value + suffix".into()
                ),
                ("p/main.ko".into(), 4, 9, "local_model".into(), "key".into()),
                ("p/main.ko".into(), 5, 13, "gpt".into(), "key".into()),
            ]
        );
    }

    #[test]
    fn a_file_that_does_not_parse_is_a_problem_not_an_empty_listing() {
        let src = mem(&[("bad.ko", "def (:\n")]);
        let a = audit(&[PathBuf::from("bad.ko")], &src);
        assert!(a.sites.is_empty());
        match a.problems.as_slice() {
            [Problem::Invalid(r)] => {
                assert_eq!(r.display, "bad.ko");
                assert!(r.diagnostics.iter().all(|d| d.code.starts_with("E00")));
            }
            other => panic!("expected one invalid file, got {other:?}"),
        }
    }

    #[test]
    fn a_missing_used_file_and_a_missing_entry_are_problems() {
        let src = mem(&[("m.ko", "use \"./gone.ko\" as gone\n")]);
        let a = audit(&[PathBuf::from("m.ko"), PathBuf::from("nope.ko")], &src);
        assert_eq!(a.problems.len(), 2, "{:?}", a.problems);
        assert!(matches!(&a.problems[0], Problem::Invalid(r)
            if r.diagnostics[0].code == codes::USE_NOT_FOUND));
        assert!(matches!(&a.problems[1], Problem::Unreadable { path, .. }
            if path == Path::new("nope.ko")));
    }

    #[test]
    fn a_type_error_does_not_hide_a_site() {
        let src = mem(&[("t.ko", "x: int = \"no\"\ndeclassify x for m:\n    pass\n")]);
        let a = audit(&[PathBuf::from("t.ko")], &src);
        assert!(a.problems.is_empty());
        assert_eq!(a.sites.len(), 1);
    }

    #[test]
    fn sites_in_tests_else_blocks_and_loops_are_found() {
        let src = "use env\n\
            def f() -> None:\n\
            \x20   k: str = env.get(\"K\") else:\n\
            \x20       declassify k for a:\n\
            \x20           return\n\
            \x20   while True:\n\
            \x20       declassify k for b:\n\
            \x20           break\n\
            test \"t\":\n\
            \x20   declassify 1 for c:\n\
            \x20       pass\n";
        let parsed = kora_syntax::parse(src);
        assert!(
            parsed.diagnostics.iter().all(|d| !d.is_error()),
            "{:?}",
            parsed.diagnostics
        );
        let sinks: Vec<String> = file_sites("f.ko", src, &parsed.module.stmts)
            .into_iter()
            .map(|s| s.sink)
            .collect();
        assert_eq!(sinks, ["a", "b", "c"]);
    }

    #[test]
    fn conditions_that_read_a_classified_value_are_listed() {
        let src = "use env\n\
            secret = classified(\"s\")\n\
            plain = \"p\"\n\
            def f() -> None:\n\
            \x20   k: str = env.get(\"K\") else:\n\
            \x20       return\n\
            \x20   if k.startswith(\"x\"):\n\
            \x20       pass\n\
            \x20   elif plain == \"q\":\n\
            \x20       pass\n\
            \x20   while len(k) > 3:\n\
            \x20       break\n\
            \x20   xs = [c for c in plain if c in k]\n\
            \x20   ys = [c for c in plain if c == \"p\"]\n\
            match secret:\n\
            \x20   case _:\n\
            \x20       pass\n\
            if plain:\n\
            \x20   pass\n";
        let parsed = kora_syntax::parse(src);
        let got: Vec<(u32, String, String)> = file_conditions("f.ko", src, &parsed.module)
            .into_iter()
            .map(|c| (c.line, c.kind, c.reads))
            .collect();
        assert_eq!(
            got,
            [
                (7, "if".into(), "k".into()),
                (11, "while".into(), "k".into()),
                (13, "comprehension if".into(), "k".into()),
                (15, "match".into(), "secret".into()),
            ]
        );
    }

    #[test]
    fn multi_line_expressions_fold_to_one_line() {
        assert_eq!(one_line("f(a,\n      b)"), "f(a, b)");
        assert_eq!(one_line("a  +  b"), "a  +  b");
    }
}
