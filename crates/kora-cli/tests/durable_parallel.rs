//! End to end: `first` winners and `break` stops of a `parallel for` in durable runs killed at every journal append.
//!
//! Each branch draws a random tag, appends `i tag` to a log and prints it; branch 3 wins
//! (`first`) or branch 4 stops the loop (`break`), so with one worker every kill point is the
//! same in every run. Which branches run beyond the winner or the
//! breaker is up to the scheduler, so the journal records the finished loop; the checks:
//! no branch's line appended twice, the answer the one the log implies, every printed
//! branch line in the log, and a run killed after its loop was recorded starts no branch
//! on resume (the log is exactly what the killed run left), and one killed after a branch
//! journaled its stop starts no branch past it. Killed runs have one worker and
//! resumes eight, so a resume that ignored the record would start branches past the winner.

mod support;

use std::path::Path;

use support::{kora_env, text};

const FIRST: &str = r#"use fs
use random

def main() -> None:
    w = parallel for i in range(8) first:
        tag = random.randint(0, 9)
        done: None = fs.append("log.txt", f"{i} {tag}\n") else (why, kind):
            return -1
        print(f"branch {i} tag {tag}")
        # Time for the other workers to start: a fresh loop would hand them later items.
        spin = 0
        for k in range(20000):
            spin = spin + k
        if i == 3:
            return i
    print("winner", w)

main()
"#;

const BREAK: &str = r#"use fs
use random

def main() -> None:
    found = parallel for i in range(8):
        tag = random.randint(0, 9)
        done: None = fs.append("log.txt", f"{i} {tag}\n") else (why, kind):
            return -1
        print(f"branch {i} tag {tag}")
        # Time for the other workers to start: a fresh loop would hand them later items.
        spin = 0
        for k in range(20000):
            spin = spin + k
        if i == 4:
            break tag + 100
        return tag
    print("found", found)

main()
"#;

/// The log's lines as (branch, tag), in the order written.
fn log(d: &Path) -> Vec<(i64, i64)> {
    std::fs::read_to_string(d.join("log.txt"))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let (i, t) = l.split_once(' ').expect("`i tag`");
            (i.parse().expect("i"), t.parse().expect("tag"))
        })
        .collect()
}

fn sorted(mut v: Vec<(i64, i64)>) -> Vec<(i64, i64)> {
    v.sort();
    v
}

/// The loop's record reached the journal whole (a torn line does not count).
fn loop_recorded(d: &Path, id: &str) -> bool {
    let journal = std::fs::read_to_string(d.join(format!(".kora/runs/{id}/journal.jsonl")))
        .unwrap_or_default();
    journal
        .split_inclusive('\n')
        .any(|l| l.ends_with('\n') && l.contains("\"slot\":\"p0/0\""))
}

/// The earliest branch whose stop (a `break`, a `first` answer) reached the journal whole.
fn stop_recorded(d: &Path, id: &str) -> Option<i64> {
    let journal = std::fs::read_to_string(d.join(format!(".kora/runs/{id}/journal.jsonl")))
        .unwrap_or_default();
    journal
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .filter_map(|l| {
            let rest = l.split("\"slot\":\"p0.").nth(1)?;
            let (i, tail) = rest.split_once('|')?;
            tail.starts_with("stop/0\"").then(|| i.parse().ok())?
        })
        .min()
}

/// Checks what every kill-and-resume must leave, whatever the scheduler did.
fn check(shown: &str, log: &[(i64, i64)], first: bool, ctx: &str) {
    let mut branches: Vec<i64> = log.iter().map(|r| r.0).collect();
    branches.sort();
    let n = branches.len();
    branches.dedup();
    assert_eq!(branches.len(), n, "{ctx}: a branch appended twice: {log:?}");
    for l in shown.lines().filter(|l| l.starts_with("branch ")) {
        let parts: Vec<&str> = l.split(' ').collect();
        let row = (parts[1].parse().expect("i"), parts[3].parse().expect("tag"));
        assert!(
            log.contains(&row),
            "{ctx}: printed {l} is not in the log {log:?}"
        );
    }
    let last = shown.lines().last().unwrap_or_default();
    if first {
        // Branch 3 answers; every branch before it ran (and none answered).
        assert_eq!(last, "winner 3", "{ctx}: {shown}\nlog {log:?}");
        for i in 0..3 {
            assert!(
                branches.contains(&i),
                "{ctx}: branch {i} below the winner never ran"
            );
        }
    } else {
        let found = last
            .strip_prefix("found [")
            .and_then(|s| s.strip_suffix(']'))
            .unwrap_or_else(|| panic!("{ctx}: no result line: {shown}"));
        let tags: Vec<i64> = log.iter().map(|r| r.1).collect();
        for v in found.split(", ").filter(|v| !v.is_empty()) {
            let v: i64 = v.parse().expect("int");
            assert!(
                tags.contains(&v) || (v >= 100 && tags.contains(&(v - 100))),
                "{ctx}: {v} was not answered by a logged branch: {log:?}"
            );
        }
    }
}

fn kill_at_every_append(name: &str, program: &str, first: bool) {
    let clean = support::temp_dir("kora-durable-par", &format!("{name}-clean"));
    std::fs::write(clean.join("p.ko"), program).expect("program");
    let out = kora_env(
        &clean,
        &["run", "--durable", "--run-id", "c", "p.ko"],
        None,
        &[("KORA_PARALLEL_WIDTH", "1")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    check(&text(&out.stdout), &log(&clean), first, "clean run");
    assert!(loop_recorded(&clean, "c"), "the loop is journaled");
    let (mut kills, mut after_record, mut after_stop, mut settled) = (0, 0, 0, 0);
    // Every point up to the most a run makes (a status, three per branch, a stop, the loop,
    // output); a run that ends before the point is skipped.
    for point in support::kill_points(40) {
        let ctx = format!("{name} killed at append {point}");
        let d = support::temp_dir("kora-durable-par", name);
        std::fs::write(d.join("p.ko"), program).expect("program");
        // One worker before the kill and eight after: a resume that ran the loop afresh
        // would start branches the killed run never reached.
        let killed = kora_env(
            &d,
            &["run", "--durable", "--run-id", "k", "p.ko"],
            Some(&point),
            &[("KORA_PARALLEL_WIDTH", "1")],
        );
        if killed.status.code() == Some(0) {
            continue;
        }
        kills += 1;
        let before = sorted(log(&d));
        let recorded = loop_recorded(&d, "k");
        let stopped = stop_recorded(&d, "k");
        let out = kora_env(
            &d,
            &["run", "--resume", "k"],
            None,
            &[("KORA_PARALLEL_WIDTH", "8")],
        );
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{ctx}: {err}");
        settled += support::settled_by_check(&d, "k");
        let after = sorted(log(&d));
        if recorded {
            after_record += 1;
            assert_eq!(after, before, "{ctx}: the resume ran branches again");
        } else if let Some(b) = stopped {
            // Killed mid-loop after a stop: nothing past it may start on resume.
            after_stop += 1;
            let past = |rows: &[(i64, i64)]| -> Vec<(i64, i64)> {
                rows.iter().filter(|r| r.0 > b).copied().collect()
            };
            assert_eq!(
                past(&after),
                past(&before),
                "{ctx}: a branch past the stop at {b} started"
            );
        }
        let shown = format!("{}{}", text(&killed.stdout), text(&out.stdout));
        check(&shown, &after, first, &ctx);
    }
    assert!(kills >= 20, "{name}: only {kills} kills");
    assert!(
        after_record > 0,
        "{name}: no kill landed after the loop's record"
    );
    assert!(
        after_stop > 0,
        "{name}: no kill landed between a stop and the loop's record"
    );
    assert!(
        settled > 0,
        "{name}: no kill landed between a write's attempt and its outcome"
    );
}

#[test]
fn a_first_winner_is_the_same_after_any_kill_and_no_branch_runs_twice() {
    kill_at_every_append("first", FIRST, true);
}

#[test]
fn a_break_stop_is_kept_after_any_kill_and_no_branch_runs_twice() {
    kill_at_every_append("break", BREAK, false);
}
