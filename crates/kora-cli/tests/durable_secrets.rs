//! End to end: no classified value's text in any file a durable run writes, killed and resumed or not; a changed secret stops the resume.
//!
//! The program reads a secret with `env.get`, makes another with `classified(...)`,
//! keeps both in notes, draws one with `random.choice`, writes the first to a file and a
//! database (redacted there), and sends it to a model inside `declassify`, whose answer
//! repeats it. The run is killed at every journal append and resumed; afterwards every
//! file under the project and under `$HOME` is searched for either secret's text (as
//! written, and as JSON escapes it). The journal keeps the `env.get` value as a keyed
//! digest (a resume reads it again), notes and replayed results sealed with the key in
//! `$HOME/.kora/key`.

mod support;

use std::path::{Path, PathBuf};

use kora_testkit::{Behaviour, FakeProvider};
use support::{kora_env, text};

const SECRET: &str = "sk-live-7d1e\"quoted\"-x9Q";
/// What `classified("made-" + str(4711 * 3))` holds: in no source file, made at run time.
const MADE: &str = "made-14133";

const PROGRAM: &str = r#"use env
use notes
use random
use fs
use sql

def main() -> None:
    key: str = env.get("KORA_TEST_SECRET") else (why, kind):
        print("no secret:", why)
        return
    made = classified("made-" + str(4711 * 3))
    print("key:", key, "made:", made)
    w: None = notes.write("token", key) else (why, kind):
        print("note failed:", why)
        return
    w2: None = notes.write("made", made) else (why, kind):
        print("note failed:", why)
        return
    back: str = notes.read("token", "") else (why, kind):
        print("read failed:", why)
        return
    pick = random.choice([key, made])
    f: None = fs.write("out.txt", f"key={key}\n") else (why, kind):
        print("write failed:", why)
        return
    db: sql.Db = sql.open("s.db") else (why, kind):
        return
    db.execute("CREATE TABLE IF NOT EXISTS t (v TEXT)")
    db.execute("INSERT INTO t VALUES (?)", [key])
    declassify key for default:
        r: Result[str] = analyze(key, "Repeat it back.")
    # Comparisons of classified values are classified too: branch on them, print plain text.
    match r:
        case Ok(echo):
            if echo == key:
                print("the model repeated it")
        case other:
            print("no answer:", other)
    if back == key:
        print("the note replays")
    if pick == key or pick == made:
        print("the draw replays")

main()
"#;

fn project(name: &str, fake: &FakeProvider) -> (PathBuf, PathBuf) {
    let d = support::temp_dir("kora-durable-secrets", name);
    support::write_fake_config(&d, &fake.openai_endpoint());
    std::fs::write(d.join("prog.ko"), PROGRAM).expect("program");
    let home = d.join("home");
    std::fs::create_dir_all(&home).expect("home");
    (d, home)
}

fn run(
    d: &Path,
    home: &Path,
    args: &[&str],
    crash: Option<&str>,
    secret: &str,
) -> std::process::Output {
    kora_env(
        d,
        args,
        crash,
        &[
            ("HOME", home.to_str().expect("utf-8 path")),
            ("KORA_TEST_SECRET", secret),
        ],
    )
}

/// Every file under `dir` whose bytes contain `needle` as written or JSON-escaped.
fn files_holding(dir: &Path, needle: &str, found: &mut Vec<String>) {
    let escaped = serde_json::to_string(needle).expect("json");
    let escaped = escaped.trim_matches('"');
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            files_holding(&p, needle, found);
        } else if let Ok(bytes) = std::fs::read(&p) {
            let hay = String::from_utf8_lossy(&bytes);
            if hay.contains(needle) || hay.contains(escaped) {
                found.push(p.display().to_string());
            }
        }
    }
}

fn assert_no_secret_in_files(d: &Path, ctx: &str) {
    let mut found = Vec::new();
    for s in [SECRET, MADE] {
        files_holding(d, s, &mut found);
    }
    assert!(found.is_empty(), "{ctx}: secrets in {found:?}");
}

const START: [&str; 5] = ["run", "--durable", "--run-id", "s", "prog.ko"];

#[test]
fn no_file_a_durable_run_writes_holds_a_classified_value() {
    let fake = FakeProvider::with_default(Behaviour::Answer(SECRET.into()));
    let (d, home) = project("clean", &fake);
    let out = run(&d, &home, &START, None, SECRET);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let expected = text(&out.stdout);
    assert_eq!(
        expected,
        "key: __CLASSIFIED__ made: __CLASSIFIED__\nthe model repeated it\nthe note replays\nthe draw replays\n"
    );
    assert!(
        !expected.contains(SECRET) && !expected.contains(MADE),
        "{expected}"
    );
    // The run did write each kind of file the search must cover.
    for f in [
        ".kora/runs/s/journal.jsonl",
        ".kora/notes/s/notes.jsonl",
        "out.txt",
        "s.db",
    ] {
        assert!(d.join(f).is_file(), "{f} was not written");
    }
    let journal = std::fs::read_to_string(d.join(".kora/runs/s/journal.jsonl")).expect("journal");
    assert!(
        journal.contains("\"keyed\":"),
        "env.get is kept as a keyed digest"
    );
    assert!(
        journal.contains("\"sealed\":"),
        "replayed secrets are sealed"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(home.join(".kora/key"))
            .expect("the machine key")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert_no_secret_in_files(&d, "clean run");

    // Killed at every append and resumed: sealed records replay, the keyed one reads again.
    let appends = journal.lines().count() - 1;
    for point in support::kill_points(appends) {
        let ctx = format!("killed at append {point}");
        let (d, home) = project("killed", &fake);
        let first = run(&d, &home, &START, Some(&point), SECRET);
        assert_ne!(first.status.code(), Some(0), "{ctx}: not killed");
        let out = run(&d, &home, &["run", "--resume", "s"], None, SECRET);
        assert_eq!(out.status.code(), Some(0), "{ctx}: {}", text(&out.stderr));
        let mut shown: Vec<String> = format!("{}{}", text(&first.stdout), text(&out.stdout))
            .lines()
            .map(str::to_string)
            .collect();
        shown.dedup();
        assert_eq!(shown.join("\n") + "\n", expected, "{ctx}");
        assert_no_secret_in_files(&d, &ctx);
    }
}

#[test]
fn a_secret_that_changed_since_the_run_started_stops_the_resume() {
    let fake = FakeProvider::with_default(Behaviour::Answer("fine".into()));
    let (d, home) = project("changed", &fake);
    // Killed after `env.get` and the printed line were journaled (status, env, output).
    let first = run(&d, &home, &START, Some("4"), SECRET);
    assert_ne!(first.status.code(), Some(0));
    let out = run(&d, &home, &["run", "--resume", "s"], None, "another value");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("env.get") && err.contains("has a different value"),
        "{err}"
    );
    assert!(
        !err.contains(SECRET) && !err.contains("another value"),
        "{err}"
    );
    let out = run(&d, &home, &["run", "--resume", "s"], None, SECRET);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn sealed_records_do_not_open_under_another_machine_key() {
    let fake = FakeProvider::with_default(Behaviour::Answer(SECRET.into()));
    let (d, home) = project("other-key", &fake);
    let clean = run(&d, &home, &START, None, SECRET);
    assert_eq!(clean.status.code(), Some(0), "{}", text(&clean.stderr));
    let journal = std::fs::read_to_string(d.join(".kora/runs/s/journal.jsonl")).expect("journal");
    // Killed just before the run finished, then resumed on "another machine".
    let appends = journal.lines().count() - 1;
    let (d, home) = project("other-key-killed", &fake);
    let first = run(&d, &home, &START, Some(&appends.to_string()), SECRET);
    assert_ne!(first.status.code(), Some(0));
    let elsewhere = d.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("another home");
    let out = run(&d, &elsewhere, &["run", "--resume", "s"], None, SECRET);
    let err = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("this machine's key"), "{err}");
    let out = run(&d, &home, &["run", "--resume", "s"], None, SECRET);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}
