//! End to end: `examples/12_durable.ko` run durable from its cassette, killed at every journal append, resumed to the same result.
//!
//! The example reads a CSV, reviews each claim with a model in a `parallel for`, inserts
//! one SQLite row per claim and asks a person once before a sign-off row. Every kill is
//! resumed to the end; the checks: each claim row and the sign-off row exist exactly once,
//! and the printed lines are those of one uninterrupted run (the committed `.out`).

mod support;

use std::path::{Path, PathBuf};

use support::{kora, kora_input, text};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// A project folder holding a copy of the example, its cassette, its data and the examples' config.
fn project(name: &str) -> PathBuf {
    let d = support::temp_dir("kora-durable-example", name);
    let src = examples();
    std::fs::create_dir_all(d.join("data")).expect("data folder");
    for f in ["12_durable.ko", "12_durable.cassette.json"] {
        std::fs::copy(src.join(f), d.join(f)).expect("example file");
    }
    std::fs::copy(src.join("data/expenses.csv"), d.join("data/expenses.csv")).expect("csv");
    std::fs::copy(src.join("../kora.toml"), d.join("kora.toml")).expect("kora.toml");
    d
}

fn expected() -> String {
    std::fs::read_to_string(examples().join("12_durable.out")).expect("12_durable.out")
}

/// (claim rows by `n`, sign-off rows) in the run's database.
fn rows(d: &Path) -> (Vec<i64>, Vec<String>) {
    let Ok(db) = rusqlite::Connection::open(d.join("claims.db")) else {
        return (Vec::new(), Vec::new());
    };
    let col = |q: &str| -> Vec<rusqlite::types::Value> {
        match db.prepare(q) {
            Ok(mut s) => s
                .query_map([], |r| r.get(0))
                .map(|it| it.filter_map(Result::ok).collect())
                .unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    };
    let claims = col("SELECT n FROM claim ORDER BY n, rowid")
        .into_iter()
        .filter_map(|v| match v {
            rusqlite::types::Value::Integer(i) => Some(i),
            _ => None,
        })
        .collect();
    let signoff = col("SELECT who FROM signoff")
        .into_iter()
        .filter_map(|v| match v {
            rusqlite::types::Value::Text(t) => Some(t),
            _ => None,
        })
        .collect();
    (claims, signoff)
}

fn check(d: &Path, shown: &str, ctx: &str) {
    let (claims, signoff) = rows(d);
    assert_eq!(
        claims,
        vec![0, 1, 2, 3, 4],
        "{ctx}: claim rows lost or repeated"
    );
    assert_eq!(
        signoff,
        vec!["Ada".to_string()],
        "{ctx}: sign-off lost or repeated"
    );
    // Output is at-least-once: a line shown just before a kill may be shown again.
    let mut lines: Vec<&str> = shown.lines().collect();
    lines.dedup();
    assert_eq!(lines.join("\n") + "\n", expected(), "{ctx}: {shown}");
}

const START: [&str; 7] = [
    "run",
    "--durable",
    "--replay",
    "--run-id",
    "k",
    "12_durable.ko",
    "claims.db",
];

#[test]
fn the_durable_example_killed_anywhere_resumes_to_the_same_result_without_repeated_writes() {
    let clean = project("clean");
    let out = kora_input(&clean, &START, None, "Ada\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    check(&clean, &text(&out.stdout), "clean run");
    let appends = std::fs::read_to_string(clean.join(".kora/runs/k/journal.jsonl"))
        .expect("journal")
        .lines()
        .count()
        - 1;
    let (mut kills, mut settled) = (0, 0);
    for point in support::kill_points(appends) {
        let ctx = format!("killed at append {point}");
        let d = project("killed");
        let first = kora_input(&d, &START, Some(&point), "Ada\n");
        assert_ne!(
            first.status.code(),
            Some(0),
            "{ctx}: the run was not killed"
        );
        kills += 1;
        let out = kora_input(&d, &["run", "--replay", "--resume", "k"], None, "Ada\n");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{ctx}: {err}");
        settled += support::settled_by_check(&d, "k");
        let shown = format!("{}{}", text(&first.stdout), text(&out.stdout));
        check(&d, &shown, &ctx);
    }
    assert!(kills > 20, "only {kills} kills");
    assert!(
        settled > 0,
        "no kill landed between an insert's attempt and its outcome"
    );
}

#[test]
fn the_durable_example_waits_for_kora_answer_when_nobody_is_there() {
    let d = project("suspended");
    let first = kora(&d, &START, None);
    assert_eq!(first.status.code(), Some(3), "{}", text(&first.stderr));
    let answered = kora(&d, &["answer", "k", "Ada"], None);
    assert_eq!(
        answered.status.code(),
        Some(0),
        "{}",
        text(&answered.stderr)
    );
    let out = kora(&d, &["run", "--replay", "--resume", "k"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = format!("{}{}", text(&first.stdout), text(&out.stdout));
    check(&d, &shown, "suspended, answered, resumed");
}
