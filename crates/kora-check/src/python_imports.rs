//! Python's `import` statements: the two Kora accepts as no-ops, and what it says to the rest.
//!
//! `from typing import ...` and `from __future__ import annotations` change nothing in Kora
//! (the typing names are built in), and accepting them lets one file run under CPython and
//! Kora alike. Every other import is refused with the Kora form of what it was for: a
//! standard module's `use`, a built-in that does the job, or a file `use`, and never a
//! module that does not exist.

use kora_syntax::ast::Ident;
use kora_syntax::{Diagnostic, Span};

use crate::codes;
use crate::lower::Lowerer;

/// `typing` names whose meaning Kora builds in.
pub(crate) const TYPING_NAMES: &[&str] = &[
    "Any", "Callable", "Dict", "List", "Literal", "Mapping", "Optional", "Sequence", "Set",
    "Tuple", "Union", "Iterable",
];

/// Python modules with no Kora module of the same name, and what a Kora program uses instead.
const INSTEAD: &[(&str, &str)] = &[
    ("copy", "lists, dicts and sets have `.copy()`, and `list(xs)` / `dict(d)` copy too: Kora has no `copy` module"),
    ("math", "use the operators and built-ins: `abs`, `round`, `pow`, `**` (`x ** 0.5` is a square root), `min`, `max`, `sum`, `divmod`"),
    ("sys", "`exit(code)` ends the program (`exit(\"message\")` prints it and exits 1); `use env` then `env.args()` gives its arguments"),
    ("os", "`use fs` reads and writes files, `use env` reads the environment"),
    ("pathlib", "`use fs` reads and writes files by path"),
    ("shutil", "`use fs` reads and writes files by path"),
    ("dataclasses", "declare a record with `type Name:` and `field: Type` lines"),
    ("collections", "a `dict` with `d.get(k, 0) + 1` counts, and a `list` does for a deque"),
    ("itertools", "use comprehensions, `zip`, `enumerate`, `range` and `sorted(key=...)`"),
    ("functools", "use closures and `sorted(key=...)`; a cache is a `dict`"),
    ("datetime", "`use time` reads and formats dates and times"),
    ("sqlite3", "`use sql` opens SQLite databases"),
    ("requests", "`use http` makes requests"),
    ("urllib", "`use http` makes requests"),
    ("subprocess", "a Kora program does not start processes; a `tool` may be offered to a model"),
    ("logging", "`print` reports progress, and every run leaves a trace (`kora trace`)"),
    ("string", "use `str` methods and f-strings"),
    ("enum", "a literal union names a closed set: `type Color = \"red\" | \"green\"`"),
    ("abc", "Kora has no classes: declare a record with `type Name:`, and write functions that take it"),
    ("unittest", "write `test \"name\":` blocks beside the code and run `kora test`"),
    ("pytest", "write `test \"name\":` blocks beside the code and run `kora test`"),
    ("asyncio", "`parallel for` runs branches at once; there is no `async`"),
    ("threading", "`parallel for` runs branches at once on their own threads"),
];

impl Lowerer<'_> {
    pub(crate) fn python_import(&mut self, module: &str, names: &[Ident], span: Span) {
        let from = !names.is_empty();
        match module {
            "typing" if from => {
                for n in names {
                    if !TYPING_NAMES.contains(&n.name.as_str()) {
                        self.unknown_typing_name(n);
                    }
                }
                return;
            }
            "__future__" if from => {
                for n in names.iter().filter(|n| n.name != "annotations") {
                    self.err(
                        Diagnostic::error(
                            codes::UNKNOWN_TYPING_NAME,
                            format!("`from __future__ import {}` has no meaning in Kora", n.name),
                            n.span,
                        )
                        .with_label("not a feature Kora knows")
                        .with_help("only `from __future__ import annotations` is accepted, and it changes nothing"),
                    );
                }
                return;
            }
            _ => {}
        }
        let first = module.split('.').next().unwrap_or(module);
        let shown = if from {
            format!("`from {module} import ...` is Python")
        } else {
            format!("`import {module}` is Python")
        };
        let std = crate::std_api::StdMod::from_name(first).is_some();
        let (message, help) = if std {
            (
                format!("{shown}: Kora writes `use {first}`"),
                format!("write `use {first}`, then call its members as `{first}.name(...)`"),
            )
        } else if first == "typing" {
            (
                format!("{shown}: Kora builds the typing names in"),
                "write `from typing import Optional` (or any of them), or use the names directly: `Optional[int]`, `Callable[[int], str]`".to_string(),
            )
        } else if let Some((_, instead)) = INSTEAD.iter().find(|(m, _)| *m == first) {
            (
                format!("{shown}, and Kora has no `{first}` module"),
                (*instead).to_string(),
            )
        } else if first.is_empty() {
            (
                format!("{shown}: Kora imports a file with `use`"),
                "write `use \"./name.ko\" as name`; the path is relative to this file".to_string(),
            )
        } else {
            (
                format!("{shown}, and Kora has no `{first}` module"),
                format!(
                    "if `{first}` is a file of this program, write `use \"./{first}.ko\" as {first}`; the standard modules are {}",
                    crate::std_api::MODULES
                        .iter()
                        .map(|(n, _)| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )
        };
        self.err(
            Diagnostic::error(codes::PYTHON_IMPORT, message, span)
                .with_label("Python import syntax")
                .with_help(help),
        );
    }

    fn unknown_typing_name(&mut self, n: &Ident) {
        let help = match n.name.as_str() {
            "*" => "import the names you use: `from typing import Callable, Optional`".to_string(),
            "TypedDict" | "NamedTuple" => {
                "declare a record with `type Name:` and `field: Type` lines".to_string()
            }
            "TypeVar" | "Generic" | "Protocol" | "ParamSpec" => {
                "Kora has no generic functions: annotate with the concrete type, or `Any`"
                    .to_string()
            }
            _ => format!(
                "Kora builds in {}",
                TYPING_NAMES
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        self.err(
            Diagnostic::error(
                codes::UNKNOWN_TYPING_NAME,
                format!("`typing.{}` has no meaning in Kora", n.name),
                n.span,
            )
            .with_label("not a typing name Kora knows")
            .with_help(help),
        );
    }
}
