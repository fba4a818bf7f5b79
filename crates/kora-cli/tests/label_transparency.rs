//! Label transparency, as a differential test: every conformance program that must run
//! (`tests/conformance/{shared,kora}`) is run again with each of its literals labelled, and
//! must answer exactly as it does plain. Only sinks may tell a labelled value apart.
//!
//! - `KORA_LABEL_LITERALS=unverified`: stdout must equal the program's `.out` byte for byte.
//!   The only allowed difference is a refusal at a sink that takes no unverified value (a file
//!   path built from a literal is refused with E1343); those programs are listed below, so a
//!   new refusal anywhere else fails the test.
//! - `KORA_LABEL_LITERALS=classified`: every print is a sink that shows the placeholder, so
//!   the output is not compared; the program must still exit 0 with nothing on stderr (no
//!   operator, method or built-in failed on a labelled value), except where a sink refuses
//!   with E1341, in the same listed programs (and a note's key, which is a sink too).
//!
//! `KORA_TRANSPARENCY=NAME` runs only the programs whose path contains NAME.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Programs that hand a literal to a sink that refuses the label, and the code it refuses with
/// in (unverified, classified) mode.
const SINK_REFUSALS: &[(&str, &str, &str)] = &[
    ("kora/std_csv_sql.ko", "E1343", "E1341"),
    ("kora/std_fs.ko", "E1343", "E1341"),
    ("kora/std_text.ko", "E1343", "E1341"),
    ("kora/std_misc.ko", "", "E1341"),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance")
}

fn programs() -> Vec<String> {
    let filter = std::env::var("KORA_TRANSPARENCY").ok();
    let mut out = Vec::new();
    for suite in ["shared", "kora"] {
        let mut names: Vec<String> = std::fs::read_dir(root().join(suite))
            .expect("the conformance folder")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".ko"))
            .map(|n| format!("{suite}/{n}"))
            .filter(|n| filter.as_deref().is_none_or(|f| n.contains(f)))
            .collect();
        names.sort();
        out.extend(names);
    }
    out
}

struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(rel: &str, label: &str) -> Ran {
    let out = Command::new(env!("CARGO_BIN_EXE_kora"))
        .args(["run", rel])
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env("KORA_LABEL_LITERALS", label)
        .output()
        .expect("kora runs");
    Ran {
        code: out.status.code(),
        stdout: support::text(&out.stdout),
        stderr: support::text(&out.stderr),
    }
}

/// Runs `check` over every program on two threads; returns the failures.
fn each_program(check: impl Fn(&str) -> Option<String> + Sync) -> Vec<String> {
    let todo = Mutex::new(programs());
    let failures = Mutex::new(Vec::new());
    assert!(
        todo.lock().map(|t| !t.is_empty()).unwrap_or(false),
        "no conformance programs found under {}",
        root().display()
    );
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let next = todo.lock().ok().and_then(|mut t| t.pop());
                let Some(rel) = next else { break };
                if let Some(f) = check(&rel) {
                    if let Ok(mut all) = failures.lock() {
                        all.push(f);
                    }
                }
            });
        }
    });
    failures.into_inner().unwrap_or_default()
}

fn refusal(rel: &str, classified: bool) -> Option<&'static str> {
    SINK_REFUSALS
        .iter()
        .find(|(p, _, _)| *p == rel)
        .map(|(_, u, c)| if classified { *c } else { *u })
        .filter(|code| !code.is_empty())
}

fn first_difference(want: &str, got: &str) -> String {
    for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
        if w != g {
            return format!("line {}: want {w:?}, got {g:?}", i + 1);
        }
    }
    format!(
        "{} lines wanted, {} printed",
        want.lines().count(),
        got.lines().count()
    )
}

#[test]
fn unverified_literals_change_no_output() {
    let failures = each_program(|rel| {
        let want = std::fs::read_to_string(root().join(rel).with_extension("out")).ok()?;
        let got = run(rel, "unverified");
        if let Some(code) = refusal(rel, false) {
            let refused = got.code == Some(1) && got.stderr.contains(&format!("[{code}]"));
            let shown_before = want.starts_with(&got.stdout);
            return (!refused || !shown_before).then(|| {
                format!("{rel}: expected a refusal {code} at a sink after a prefix of the output, got exit {:?}\n{}", got.code, got.stderr)
            });
        }
        (got.code != Some(0) || got.stdout != want).then(|| {
            format!(
                "{rel}: exit {:?}, {}\n{}",
                got.code,
                first_difference(&want, &got.stdout),
                got.stderr
            )
        })
    });
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

#[test]
fn classified_literals_break_no_operation() {
    let failures = each_program(|rel| {
        let got = run(rel, "classified");
        if let Some(code) = refusal(rel, true) {
            let refused = got.code == Some(1) && got.stderr.contains(&format!("[{code}]"));
            return (!refused).then(|| {
                format!(
                    "{rel}: expected a refusal {code} at a sink, got exit {:?}\n{}",
                    got.code, got.stderr
                )
            });
        }
        (got.code != Some(0) || !got.stderr.is_empty())
            .then(|| format!("{rel}: exit {:?}\n{}", got.code, got.stderr))
    });
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

#[test]
fn the_mode_is_off_unless_asked_and_refuses_an_unknown_name() {
    let d = support::temp_dir("kora-transparency", "mode");
    std::fs::write(d.join("main.ko"), "print(\"x\" * 3, 1 + 1 == 2)\n").expect("write");
    let plain = support::kora(&d, &["run", "main.ko"], None);
    assert_eq!(support::text(&plain.stdout), "xxx True\n");
    let bad = support::kora_env(
        &d,
        &["run", "main.ko"],
        None,
        &[("KORA_LABEL_LITERALS", "secret")],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(support::text(&bad.stderr).contains("must be `unverified` or `classified`"));
    let classified = support::kora_env(
        &d,
        &["run", "main.ko"],
        None,
        &[("KORA_LABEL_LITERALS", "classified")],
    );
    assert_eq!(
        support::text(&classified.stdout),
        "__CLASSIFIED__ __CLASSIFIED__\n",
        "the mode labels literals, so the test above is not vacuous"
    );
}

/// Values that arrive as program arguments go through the same differential: the mode labels
/// `env.args()` too, and every operator, method and built-in below must answer as it does on
/// the plain arguments.
#[test]
fn program_arguments_answer_alike_when_labelled() {
    let d = support::temp_dir("kora-transparency", "args");
    let src = r#"use env
args = env.args()
n = int(args[0])
words = args[1].split(" ")
items = sorted(args[2].split(","))
print(len(args), n * 7, n > 2, n == 3, args[0] is None, args[0] == "3")
print(words, [w.upper() for w in words], "-".join(items), items[0] < items[1])
print(f"{args[1]:>14}|{n:04d}|{len(words)}", args[1].title(), args[1][::-1])
d = {w: len(w) for w in words}
print(d, "hello" in d, max(d, key=lambda k: d[k]), sum(d.values()))
print(hash(args[0]) == hash("3"), bool(args[1]), not args[2], set(items) == {"a", "b", "c"})
print(repr(args[2]), str(float(n) / 2), list(range(n)), args[1].count("l"))
"#;
    std::fs::write(d.join("main.ko"), src).expect("write");
    let argv = ["run", "main.ko", "3", "hello world", "b,a,c"];
    let plain = support::kora(&d, &argv, None);
    assert!(plain.status.success(), "{}", support::text(&plain.stderr));
    let labelled = support::kora_env(&d, &argv, None, &[("KORA_LABEL_LITERALS", "unverified")]);
    assert_eq!(support::text(&labelled.stderr), "");
    assert_eq!(
        support::text(&labelled.stdout),
        support::text(&plain.stdout)
    );
    let secret = support::kora_env(&d, &argv, None, &[("KORA_LABEL_LITERALS", "classified")]);
    assert!(secret.status.success(), "{}", support::text(&secret.stderr));
    let shown = support::text(&secret.stdout);
    assert!(
        !shown.contains("hello") && shown.contains("__CLASSIFIED__"),
        "the mode labels the arguments, so the comparison above is not vacuous: {shown}"
    );
}
