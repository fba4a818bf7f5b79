//! Property tests: on generated expressions and on mutated programs of the repository,
//! at random line widths, the formatter never panics, never returns a layout that
//! fails its own check (a different program, a lost comment) and is idempotent.
//! `PROPTEST_CASES=N` runs more cases than the default.

mod common;

use std::sync::OnceLock;

use kora_fmt::{format, FormatError, Options, QuoteStyle};
use proptest::prelude::*;

fn check(src: &str, width: usize, single: bool) -> Result<(), TestCaseError> {
    let opts = Options {
        line_length: width,
        quote_style: if single {
            QuoteStyle::Single
        } else {
            QuoteStyle::Double
        },
        ..Options::default()
    };
    match format(src, &opts) {
        Ok(out) => {
            let again = format(&out, &opts);
            prop_assert!(
                again.as_deref().ok() == Some(out.as_str()),
                "not idempotent at width {width}:\n--- input\n{src}\n--- first\n{out}\n--- second\n{:?}",
                again
            );
        }
        Err(FormatError::Syntax(_)) => {}
        Err(e) => prop_assert!(false, "width {width}: {e}\n--- input\n{src}"),
    }
    Ok(())
}

fn name() -> impl Strategy<Value = String> + Clone {
    prop::sample::select(vec![
        "a",
        "b",
        "value",
        "some_longer_name",
        "x1",
        "items",
        "f",
        "obj",
    ])
    .prop_map(str::to_string)
}

fn atom() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        name(),
        (0u32..100_000).prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            "1.5",
            "0xFF",
            ".5",
            "1E3",
            "True",
            "None",
            "'s'",
            "\"d\"",
            "'it\\'s'",
            "f'{a}'",
            "r'\\d'",
            "\"a\" 'b'",
            "'''t'''",
            "[]",
            "()",
            "{}",
        ])
        .prop_map(str::to_string),
    ]
}

/// Whitespace that may stand inside brackets: spaces, line breaks, comments.
fn gap() -> impl Strategy<Value = &'static str> + Clone {
    prop::sample::select(vec![
        "",
        "",
        "",
        " ",
        "\n",
        "\n    ",
        "  # note\n",
        "\n# own\n",
    ])
}

fn expr() -> impl Strategy<Value = String> {
    atom().prop_recursive(5, 48, 4, |inner| {
        let wrapped = (inner.clone(), any::<bool>(), gap(), gap())
            .prop_map(|(e, p, g1, g2)| if p { format!("({g1}{e}{g2})") } else { e })
            .boxed();
        let w = || wrapped.clone();
        prop_oneof![
            (
                w(),
                prop::sample::select(vec![
                    "+", "-", "*", "/", "//", "%", "**", "|", "&", "^", "<<", ">>", "<", "<=",
                    "==", "!=", "in", "not in", "is", "is not", "and", "or"
                ]),
                w()
            )
                .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            (prop::sample::select(vec!["-", "+", "~", "not "]), w())
                .prop_map(|(op, a)| format!("{op}{a}")),
            (
                name(),
                prop::collection::vec((w(), gap()), 0..4),
                any::<bool>(),
                gap()
            )
                .prop_map(|(f, args, trailing, g)| {
                    let a: Vec<String> = args.into_iter().map(|(x, g)| format!("{g}{x}")).collect();
                    let comma = if trailing && !a.is_empty() { "," } else { "" };
                    format!("{f}({}{comma}{g})", a.join(", "))
                }),
            (w(), name()).prop_map(|(v, n)| format!("{v}.{n}")),
            (w(), w()).prop_map(|(v, i)| format!("{v}[{i}]")),
            (w(), prop::option::of(w()), prop::option::of(w())).prop_map(|(v, lo, hi)| format!(
                "{v}[{}:{}]",
                lo.unwrap_or_default(),
                hi.unwrap_or_default()
            )),
            (
                prop::collection::vec(w(), 0..5),
                any::<bool>(),
                prop::sample::select(vec![("[", "]"), ("(", ")"), ("{", "}")])
            )
                .prop_map(|(xs, trailing, (o, c))| format!(
                    "{o}{}{}{c}",
                    xs.join(", "),
                    if trailing && !xs.is_empty() { "," } else { "" }
                )),
            (w(), w()).prop_map(|(k, v)| format!("{{{k}: {v}}}")),
            (w(), name(), w(), prop::option::of(w())).prop_map(|(e, n, it, cond)| match cond {
                Some(c) => format!("[{e} for {n} in {it} if {c}]"),
                None => format!("[{e} for {n} in {it}]"),
            }),
            (w(), w(), w()).prop_map(|(a, c, b)| format!("{a} if {c} else {b}")),
            (name(), w()).prop_map(|(n, b)| format!("lambda {n}: {b}")),
            (w(), w()).prop_map(|(a, b)| format!("{a}, {b}")),
        ]
    })
}

fn statement() -> impl Strategy<Value = String> {
    (
        expr(),
        prop::sample::select(vec![0u8, 1, 2, 3, 4, 5, 6]),
        name(),
    )
        .prop_map(|(e, form, n)| match form {
            0 => format!("x = {e}\n"),
            1 => format!("if {e}:\n    pass\n"),
            2 => format!("print({e})\n"),
            3 => format!("def g(a: int) -> int:\n    return {e}\n"),
            4 => format!("for {n} in {e}:\n    y: int = {e} else:\n        break\n"),
            5 => format!("assert {e}, {e}\n"),
            _ => format!("{e}\n"),
        })
}

fn corpus() -> &'static Vec<String> {
    static C: OnceLock<Vec<String>> = OnceLock::new();
    C.get_or_init(|| {
        common::repository_programs()
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect()
    })
}

#[derive(Clone, Debug)]
enum Edit {
    Insert(usize, &'static str),
    Delete(usize, usize),
    JoinLine(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (
            any::<usize>(),
            prop::sample::select(vec![
                " ",
                "\n",
                "(",
                ")",
                ",",
                "  # c\n",
                "\n    ",
                "x",
                "1",
                "'s'",
                "+",
                "not ",
                "[",
                "]",
                ":",
                "lambda: ",
                " if a else b",
                "\\\n",
                "\t",
                "# own\n",
                "((",
                "))",
                "\n\n\n",
            ])
        )
            .prop_map(|(at, s)| Edit::Insert(at, s)),
        (any::<usize>(), 1usize..6).prop_map(|(at, n)| Edit::Delete(at, n)),
        any::<usize>().prop_map(Edit::JoinLine),
    ]
}

fn apply(src: &str, edits: &[Edit]) -> String {
    let mut s = src.to_string();
    for e in edits {
        if s.is_empty() {
            break;
        }
        let at = |i: usize, s: &str| {
            let mut i = i % (s.len() + 1);
            while !s.is_char_boundary(i) {
                i -= 1;
            }
            i
        };
        match e {
            Edit::Insert(i, t) => {
                let i = at(*i, &s);
                s.insert_str(i, t);
            }
            Edit::Delete(i, n) => {
                let a = at(*i, &s);
                let b = at(a + n, &s).max(a);
                s.replace_range(a..b, "");
            }
            Edit::JoinLine(i) => {
                let a = at(*i, &s);
                if let Some(nl) = s[a..].find('\n') {
                    s.remove(a + nl);
                }
            }
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(384),
        .. ProptestConfig::default()
    })]

    #[test]
    fn generated_programs_format_faithfully(
        stmts in prop::collection::vec(statement(), 1..4),
        width in 20usize..100,
        single in any::<bool>(),
    ) {
        check(&stmts.concat(), width, single)?;
    }

    #[test]
    fn mutated_programs_never_break_the_formatter(
        which in any::<prop::sample::Index>(),
        edits in prop::collection::vec(edit(), 1..4),
        width in 20usize..100,
    ) {
        let corpus = corpus();
        let src = apply(&corpus[which.index(corpus.len())], &edits);
        check(&src, width, false)?;
    }
}
