//! End to end: `kora run --durable`, `--resume`, `kora runs`, and a crash harness of real killed `kora` processes.
//!
//! The harness kills durable runs of a program that writes SQLite rows, draws
//! random numbers and prints, at every journal append it makes (before the
//! line, and halfway through it) and at random moments, then resumes each run
//! to the end and checks the world: every row written exactly once, each row's
//! random tag the one printed for it, the printed lines those of one
//! uninterrupted run. Kills are `KORA_JOURNAL_CRASH` aborts (a chosen append)
//! and `Child::kill` (SIGKILL at a random instant).

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use support::{kora, text};

const ROWS: i64 = 6;

const PROGRAM: &str = r#"use sql
use random

def main() -> None:
    db: sql.Db = sql.open("rows.db") else (why, kind):
        print(why)
        return
    db.execute("CREATE TABLE IF NOT EXISTS r (n INTEGER, tag INTEGER)")
    for i in range(ROWS):
        tag = random.randint(0, 1000000000)
        db.execute("INSERT INTO r VALUES (?, ?)", [i, tag])
        print(f"row {i} tag {tag}")
    print("done")

main()
"#;

fn dir(name: &str) -> PathBuf {
    let d = support::temp_dir("kora-durable", name);
    std::fs::write(
        d.join("prog.ko"),
        PROGRAM.replace("ROWS", &ROWS.to_string()),
    )
    .expect("program");
    d
}

/// The rows on disk, in order of `n`.
fn rows(d: &Path) -> Vec<(i64, i64)> {
    let db = rusqlite::Connection::open(d.join("rows.db")).expect("open rows.db");
    let mut q = db
        .prepare("SELECT n, tag FROM r ORDER BY n, rowid")
        .expect("query");
    let rows = q
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    rows
}

/// What a run's combined output must be: one line per row with its tag, then `done`.
/// Output is at-least-once (a piece shown just before a kill may be shown again), so a
/// line repeated right after itself is accepted; anything else is not.
fn check_output(shown: &str, rows: &[(i64, i64)], ctx: &str) {
    let mut want: Vec<String> = rows
        .iter()
        .map(|(n, t)| format!("row {n} tag {t}"))
        .collect();
    want.push("done".into());
    let mut got: Vec<&str> = shown.lines().collect();
    got.dedup();
    assert_eq!(
        got, want,
        "{ctx}: output differs from one uninterrupted run:\n{shown}"
    );
}

fn check_world(d: &Path, shown: &str, ctx: &str) {
    let rows = rows(d);
    let ns: Vec<i64> = rows.iter().map(|r| r.0).collect();
    assert_eq!(
        ns,
        (0..ROWS).collect::<Vec<_>>(),
        "{ctx}: rows lost or duplicated"
    );
    check_output(shown, &rows, ctx);
}

/// Resumes once, which must finish the run (a write cut off by the kill is settled, never
/// a stop); returns everything shown.
fn resume_to_end(d: &Path, id: &str, mut shown: String, ctx: &str) -> String {
    let out = kora(d, &["run", "--resume", id], None);
    shown.push_str(&text(&out.stdout));
    match out.status.code() {
        Some(0) => shown,
        code => panic!("{ctx}: resume exited {code:?}:\n{}", text(&out.stderr)),
    }
}

/// How many journal appends an uninterrupted run makes, and how long it took.
fn appends_of_a_clean_run() -> (usize, Duration) {
    let d = dir("clean");
    let start = std::time::Instant::now();
    let out = kora(&d, &["run", "--durable", "--run-id", "c", "prog.ko"], None);
    let took = start.elapsed();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    check_world(&d, &text(&out.stdout), "clean run");
    let journal = std::fs::read_to_string(d.join(".kora/runs/c/journal.jsonl")).expect("journal");
    // The header goes in by rename, not by an append.
    (journal.lines().count() - 1, took)
}

#[test]
fn killed_at_every_append_and_at_random_resumes_exactly_once() {
    let (appends, run_time) = appends_of_a_clean_run();
    assert!(
        appends > 3 * ROWS as usize,
        "the journal records each effect"
    );
    let mut kills = 0;
    let mut settled = 0;
    // A kill before each append, and one halfway through writing each line (a torn tail).
    for point in support::kill_points(appends) {
        let ctx = format!("killed at append {point}");
        let d = dir("chosen");
        let first = kora(
            &d,
            &["run", "--durable", "--run-id", "k", "prog.ko"],
            Some(&point),
        );
        assert_ne!(
            first.status.code(),
            Some(0),
            "{ctx}: the run was not killed"
        );
        kills += 1;
        let shown = resume_to_end(&d, "k", text(&first.stdout), &ctx);
        check_world(&d, &shown, &ctx);
        settled += support::settled_by_check(&d, "k");
    }
    // Random SIGKILLs, each run killed again on its first resume too, until 200 kills in all.
    // The delay is drawn below how long a whole run took just now, so most kills land
    // mid-run whatever the machine's load; a kill after the end does not count.
    let mut rng = fastrand::Rng::with_seed(0x6b6f7261);
    let d = dir("random");
    let window = run_time.as_micros().max(2_000) as u64;
    for round in 0..1000 {
        if kills >= 200 {
            break;
        }
        let ctx = format!("random kill round {round}");
        let _ = std::fs::remove_dir_all(d.join(".kora"));
        let _ = std::fs::remove_file(d.join("rows.db"));
        let mut shown = String::new();
        let mut args = vec!["run", "--durable", "--run-id", "x", "prog.ko"];
        for _ in 0..2 {
            let mut child = Command::new(env!("CARGO_BIN_EXE_kora"))
                .args(&args)
                .current_dir(&d)
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("kora starts");
            std::thread::sleep(Duration::from_micros(rng.u64(0..window)));
            let _ = child.kill();
            let out = child.wait_with_output().expect("kora ends");
            shown.push_str(&text(&out.stdout));
            if out.status.success() {
                // The kill came after the run had ended.
                break;
            }
            kills += 1;
            if !d.join(".kora/runs/x/journal.jsonl").exists() {
                // Killed before the run was created: start it afresh.
                continue;
            }
            args = vec!["run", "--resume", "x"];
        }
        if !d.join(".kora/runs/x/journal.jsonl").exists() {
            continue;
        }
        let shown = resume_to_end(&d, "x", shown, &ctx);
        check_world(&d, &shown, &ctx);
        settled += support::settled_by_check(&d, "x");
    }
    assert!(kills >= 200, "only {kills} kills");
    // The window between a write's attempt and its outcome is real, the harness hit it, and
    // every resume settled it by looking at the database.
    assert!(
        settled > 0,
        "no kill landed between an attempt and its outcome"
    );
}

#[test]
fn runs_lists_states_and_a_finished_run_is_not_run_again() {
    let d = dir("runs");
    let killed = kora(
        &d,
        &["run", "--durable", "--run-id", "a", "prog.ko"],
        Some("5"),
    );
    assert_ne!(killed.status.code(), Some(0));
    let done = kora(&d, &["run", "--durable", "--run-id", "b", "prog.ko"], None);
    assert_eq!(done.status.code(), Some(0));
    assert!(
        text(&done.stderr).contains("durable run b"),
        "{}",
        text(&done.stderr)
    );
    let list = text(&kora(&d, &["runs"], None).stdout);
    assert!(list.contains("a  interrupted"), "{list}");
    assert!(list.contains("b  finished"), "{list}");
    let again = kora(&d, &["run", "--resume", "b"], None);
    assert_eq!(again.status.code(), Some(0));
    assert_eq!(text(&again.stdout), "", "a finished run printed again");
    assert!(text(&again.stderr).contains("already finished"));
}

#[test]
fn a_changed_program_or_unknown_run_is_refused_by_name() {
    let d = dir("changed");
    let killed = kora(
        &d,
        &["run", "--durable", "--run-id", "a", "prog.ko"],
        Some("6"),
    );
    assert_ne!(killed.status.code(), Some(0));
    std::fs::write(d.join("prog.ko"), PROGRAM.replace("ROWS", "7")).expect("edit");
    let out = kora(&d, &["run", "--resume", "a"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("changed since the run started"),
        "{}",
        text(&out.stderr)
    );
    let out = kora(&d, &["run", "--resume", "nope"], None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("no run nope"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_second_resume_of_a_running_run_fails_at_once() {
    let d = dir("locked");
    std::fs::write(
        d.join("slow.ko"),
        "use time\n\ntime.sleep(0.5)\ntime.sleep(30.0)\nprint(\"woke\")\n",
    )
    .expect("program");
    let first = kora(
        &d,
        &["run", "--durable", "--run-id", "s", "slow.ko"],
        Some("2"),
    );
    assert_ne!(first.status.code(), Some(0));
    let mut holder = Command::new(env!("CARGO_BIN_EXE_kora"))
        .args(["run", "--resume", "s"])
        .current_dir(&d)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("kora starts");
    // Wait until the holder has taken the lock (its `running` status line is appended).
    let journal = d.join(".kora/runs/s/journal.jsonl");
    let mut held = false;
    for _ in 0..200 {
        let j = std::fs::read_to_string(&journal).unwrap_or_default();
        if j.contains("\"resumed\"") {
            held = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let second = kora(&d, &["run", "--resume", "s"], None);
    let _ = holder.kill();
    let _ = holder.wait();
    assert!(held, "the first resume never started");
    assert_eq!(second.status.code(), Some(2));
    assert!(
        text(&second.stderr).contains("already running in another process"),
        "{}",
        text(&second.stderr)
    );
}

#[test]
fn a_read_that_sees_a_changed_world_stops_the_resume_by_name() {
    let d = dir("reads");
    std::fs::write(d.join("in.txt"), "first").expect("input");
    std::fs::write(
        d.join("read.ko"),
        "use fs\nuse random\n\ndef main() -> None:\n    text: str = fs.read(\"in.txt\") else:\n        return\n    print(text, random.random() >= 0.0)\n\nmain()\n",
    )
    .expect("program");
    // Appends: status, the read's outcome, then the draw: stop before the draw is recorded.
    let first = kora(
        &d,
        &["run", "--durable", "--run-id", "r", "read.ko"],
        Some("3"),
    );
    assert_ne!(first.status.code(), Some(0), "{}", text(&first.stderr));
    std::fs::write(d.join("in.txt"), "changed").expect("input");
    let out = kora(&d, &["run", "--resume", "r"], None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("fs.read") && err.contains("read something different"),
        "{err}"
    );
}

const FAN_OUT: &str = r#"use fs
use random

def main() -> None:
    tags: list[int] = parallel for i in range(ROWS):
        tag = random.randint(0, 1000000000)
        done: None = fs.append("log.txt", f"{i} {tag}\n") else (why, kind):
            return -1
        return tag
    for i in range(ROWS):
        print(f"row {i} tag {tags[i]}")
    print("done")

main()
"#;

/// The lines `fs.append` left, as (item, tag), in item order.
fn appended(d: &Path) -> Vec<(i64, i64)> {
    let text = std::fs::read_to_string(d.join("log.txt")).unwrap_or_default();
    let mut rows: Vec<(i64, i64)> = text
        .lines()
        .map(|l| {
            let (i, t) = l.split_once(' ').expect("`i tag`");
            (i.parse().expect("i"), t.parse().expect("tag"))
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn branches_of_a_parallel_for_resume_exactly_once() {
    let d = dir("fan-clean");
    std::fs::write(d.join("fan.ko"), FAN_OUT.replace("ROWS", &ROWS.to_string())).expect("program");
    let clean = kora(&d, &["run", "--durable", "--run-id", "c", "fan.ko"], None);
    assert_eq!(clean.status.code(), Some(0), "{}", text(&clean.stderr));
    let journal = std::fs::read_to_string(d.join(".kora/runs/c/journal.jsonl")).expect("journal");
    assert!(
        journal.contains("\"slot\":\"p0.3|"),
        "branch effects have their own slots"
    );
    let appends = journal.lines().count() - 1;
    let mut settled = 0;
    for at in 1..=appends {
        let ctx = format!("fan-out killed at append {at}");
        let d = dir("fan");
        std::fs::write(d.join("fan.ko"), FAN_OUT.replace("ROWS", &ROWS.to_string()))
            .expect("program");
        let first = kora(
            &d,
            &["run", "--durable", "--run-id", "f", "fan.ko"],
            Some(&at.to_string()),
        );
        assert_ne!(first.status.code(), Some(0), "{ctx}: not killed");
        let shown = resume_to_end(&d, "f", text(&first.stdout), &ctx);
        let rows = appended(&d);
        let ns: Vec<i64> = rows.iter().map(|r| r.0).collect();
        assert_eq!(
            ns,
            (0..ROWS).collect::<Vec<_>>(),
            "{ctx}: lines lost or repeated"
        );
        check_output(&shown, &rows, &ctx);
        settled += support::settled_by_check(&d, "f");
    }
    assert!(
        settled > 0,
        "no kill landed between an attempt and its outcome"
    );
}

#[test]
fn a_model_call_whose_outcome_was_journaled_is_never_sent_again() {
    use kora_testkit::{Behaviour, FakeProvider};
    let fake = FakeProvider::with_default(Behaviour::Answer("fine".into()));
    let d = dir("model");
    support::write_fake_config(&d, &fake.openai_endpoint());
    std::fs::write(
        d.join("ask.ko"),
        "for i in range(3):\n    r: Result[str] = analyze(f\"item-{i}\", \"Say fine.\")\n    print(i, r)\n",
    )
    .expect("program");
    // Appends: status, then per call its outcome and its printed line. Die before the
    // third call's outcome is written: calls 0 and 1 are journaled, call 2 was sent.
    let first = kora(
        &d,
        &["run", "--durable", "--run-id", "m", "ask.ko"],
        Some("6"),
    );
    assert_ne!(first.status.code(), Some(0));
    assert_eq!(fake.count(), 3, "the killed run sent three calls");
    fake.reset();
    let out = kora(&d, &["run", "--resume", "m"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let sent: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| String::from_utf8_lossy(&r.raw_body).into_owned())
        .collect();
    assert_eq!(
        sent.len(),
        1,
        "only the unjournaled call is sent again: {sent:?}"
    );
    assert!(sent[0].contains("item-2"), "{sent:?}");
    let shown = format!("{}{}", text(&first.stdout), text(&out.stdout));
    assert_eq!(shown, "0 Ok('fine')\n1 Ok('fine')\n2 Ok('fine')\n");
}

#[test]
fn ask_human_suspends_a_durable_run_until_kora_answer() {
    let d = dir("ask");
    std::fs::write(
        d.join("ask.ko"),
        "use random\n\nn = random.randint(1, 1000000)\nprint(\"draw\", n)\nname = ask_human(\"Who approves the refund?\")\nprint(f\"approved by {name} after draw {n}\")\n",
    )
    .expect("program");
    // stdin is closed (Command::output gives /dev/null): nobody can answer now.
    let first = kora(&d, &["run", "--durable", "--run-id", "q", "ask.ko"], None);
    assert_eq!(first.status.code(), Some(3), "{}", text(&first.stderr));
    assert!(
        text(&first.stderr).contains("kora answer q"),
        "{}",
        text(&first.stderr)
    );
    let list = text(&kora(&d, &["runs"], None).stdout);
    assert!(
        list.contains("q  suspended") && list.contains("Who approves"),
        "{list}"
    );
    // Resuming before an answer asks again, but does not show the question twice.
    let again = kora(&d, &["run", "--resume", "q"], None);
    assert_eq!(again.status.code(), Some(3));
    assert_eq!(text(&again.stdout), "");
    let answered = kora(&d, &["answer", "q", "Ada"], None);
    assert_eq!(
        answered.status.code(),
        Some(0),
        "{}",
        text(&answered.stderr)
    );
    let done = kora(&d, &["run", "--resume", "q"], None);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    let shown = format!(
        "{}{}{}",
        text(&first.stdout),
        text(&again.stdout),
        text(&done.stdout)
    );
    let draw = shown
        .lines()
        .next()
        .unwrap_or_default()
        .trim_start_matches("draw ");
    assert_eq!(
        shown,
        format!("draw {draw}\nWho approves the refund?\napproved by Ada after draw {draw}\n"),
        "the question was shown once and the draw replayed"
    );
    let twice = kora(&d, &["answer", "q", "Grace"], None);
    assert_eq!(twice.status.code(), Some(2));
    assert!(text(&twice.stderr).contains("not waiting for an answer"));
}

#[test]
fn a_resume_answers_to_the_model_the_run_started_with() {
    use kora_testkit::{Behaviour, FakeProvider};
    let fake = FakeProvider::with_default(Behaviour::Answer("fine".into()));
    let d = dir("model_choice");
    let ep = fake.openai_endpoint();
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[models]\nmax_retries = 0\ndefault = {{ name = \"default-model\", endpoint = \"{ep}\" }}\nother = {{ name = \"other-model\", endpoint = \"{ep}\" }}\n"
        ),
    )
    .expect("kora.toml");
    std::fs::write(
        d.join("ask.ko"),
        "who = ask_human(\"Who?\")\nr: Result[str] = analyze(who, \"Say fine.\")\nprint(r)\n",
    )
    .expect("program");
    let first = kora(
        &d,
        &[
            "run",
            "--durable",
            "--run-id",
            "mc",
            "--model",
            "other",
            "ask.ko",
        ],
        None,
    );
    assert_eq!(first.status.code(), Some(3), "{}", text(&first.stderr));
    let answered = kora(&d, &["answer", "mc", "Ada"], None);
    assert_eq!(
        answered.status.code(),
        Some(0),
        "{}",
        text(&answered.stderr)
    );
    // A different model on resume would change what the rest of the run sees: refused.
    let wrong = kora(&d, &["run", "--resume", "mc", "--model", "default"], None);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        text(&wrong.stderr).contains("started with `--model other`"),
        "{}",
        text(&wrong.stderr)
    );
    assert_eq!(fake.count(), 0, "a refused resume sends nothing");
    let done = kora(&d, &["run", "--resume", "mc"], None);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    assert_eq!(text(&done.stdout), "Ok('fine')\n");
    let models: Vec<String> = fake
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or("?").to_string())
        .collect();
    assert_eq!(
        models,
        ["other-model"],
        "the resumed call used the run's model"
    );
}

#[test]
fn a_resume_refuses_changed_settings_unless_accepted() {
    use kora_testkit::{Behaviour, FakeProvider};
    let fake = FakeProvider::with_default(Behaviour::Answer("fine".into()));
    let d = dir("config_change");
    let ep = fake.openai_endpoint();
    let started =
        format!("[models]\nmax_retries = 0\ndefault = {{ name = \"m\", endpoint = \"{ep}\" }}\n");
    std::fs::write(d.join("kora.toml"), &started).expect("kora.toml");
    std::fs::write(
        d.join("two.ko"),
        "a = ask_human(\"First?\")\nb = ask_human(\"Second?\")\nr: Result[str] = analyze(a + b, \"Say fine.\")\nprint(r)\n",
    )
    .expect("program");
    let first = kora(&d, &["run", "--durable", "--run-id", "cc", "two.ko"], None);
    assert_eq!(first.status.code(), Some(3), "{}", text(&first.stderr));
    assert_eq!(
        kora(&d, &["answer", "cc", "x"], None).status.code(),
        Some(0)
    );

    // A retry count decides how many requests a failing call makes: a real change of settings.
    std::fs::write(
        d.join("kora.toml"),
        started.replace("max_retries = 0", "max_retries = 3"),
    )
    .expect("kora.toml");
    let refused = kora(&d, &["run", "--resume", "cc"], None);
    assert_eq!(refused.status.code(), Some(2), "{}", text(&refused.stderr));
    let why = text(&refused.stderr);
    assert!(
        why.contains("run cc: kora.toml changed since the run started ([models] changed)")
            && why.contains("--accept-config"),
        "{why}"
    );

    let accepted = kora(&d, &["run", "--resume", "cc", "--accept-config"], None);
    assert_eq!(
        accepted.status.code(),
        Some(3),
        "{}",
        text(&accepted.stderr)
    );
    assert!(
        text(&accepted.stderr)
            .contains("run cc continues under the changed kora.toml ([models] changed)"),
        "{}",
        text(&accepted.stderr)
    );
    assert_eq!(
        kora(&d, &["answer", "cc", "y"], None).status.code(),
        Some(0)
    );

    // Back to the settings it started under; a comment and a blank line are not a change.
    std::fs::write(d.join("kora.toml"), format!("# restored\n\n{started}")).expect("kora.toml");
    let done = kora(&d, &["run", "--resume", "cc"], None);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    assert_eq!(text(&done.stdout), "Ok('fine')\n");
    assert!(
        !text(&done.stderr).contains("changed"),
        "{}",
        text(&done.stderr)
    );
    assert_eq!(fake.count(), 1, "one model call, sent by the last resume");
}
