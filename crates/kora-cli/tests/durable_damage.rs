//! A real journal cut at every offset or changed at random bytes: it loads as the records before a torn last line, or it is refused as damaged with its line.
//!
//! The journal comes from a durable run of a program with every kind of record (attempts
//! with checks, outcomes, a sealed and a keyed one, output, status). Cut at every byte
//! offset and with single bytes changed at random offsets (seeded), each copy must either
//! load as exactly the records whose lines are whole before the cut (and only when the cut
//! is past what the run last synced), or be refused as damaged naming the line; never
//! fewer records than were synced, silently. Through the `kora` binary, a changed line and
//! a cut inside synced records each stop the resume with E1362 and the line.

mod support;

use std::path::{Path, PathBuf};

use kora_runtime::durable::journal::store::{parse, read_synced, LoadError};
use kora_runtime::durable::journal::Record;
use kora_testkit::{Behaviour, FakeProvider};
use support::{kora_env, text};

const PROGRAM: &str = r#"use sql
use fs
use env
use random
use notes

def main() -> None:
    key: str = env.get("KORA_TEST_SECRET") else (why, kind):
        return
    db: sql.Db = sql.open("rows.db") else (why, kind):
        return
    db.execute("CREATE TABLE IF NOT EXISTS r (n INTEGER)")
    for i in range(4):
        db.execute("INSERT INTO r VALUES (?)", [i])
        w: None = fs.append("log.txt", f"{i} {random.randint(0, 99)}\n") else (why, kind):
            return
        print("row", i)
    k: None = notes.write("k", key) else (why, kind):
        return
    back: str = notes.read("k", "") else (why, kind):
        return
    v: Result[str] = analyze("item", "Say fine.")
    print(v)

main()
"#;

fn project(name: &str, fake: &FakeProvider) -> PathBuf {
    let d = support::temp_dir("kora-durable-damage", name);
    support::write_fake_config(&d, &fake.openai_endpoint());
    std::fs::write(d.join("prog.ko"), PROGRAM).expect("program");
    std::fs::create_dir_all(d.join("home")).expect("home");
    d
}

fn run(d: &Path, args: &[&str], crash: Option<&str>) -> std::process::Output {
    let home = d.join("home");
    kora_env(
        d,
        args,
        crash,
        &[
            ("HOME", home.to_str().expect("utf-8")),
            ("KORA_TEST_SECRET", "s3cret"),
        ],
    )
}

/// The journal of a run killed before its last append (so records past its last sync end
/// it: printed output, a draw), its synced length, and its records.
fn real_journal(fake: &FakeProvider, tag: &str) -> (Vec<u8>, u64, Vec<Record>) {
    let clean = project(&format!("{tag}-clean"), fake);
    let out = run(
        &clean,
        &["run", "--durable", "--run-id", "j", "prog.ko"],
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let appends = std::fs::read_to_string(clean.join(".kora/runs/j/journal.jsonl"))
        .expect("journal")
        .lines()
        .count()
        - 1;
    let d = project(&format!("{tag}-real"), fake);
    let out = run(
        &d,
        &["run", "--durable", "--run-id", "j", "prog.ko"],
        Some(&appends.to_string()),
    );
    assert_ne!(out.status.code(), Some(0), "not killed");
    let path = d.join(".kora/runs/j/journal.jsonl");
    let bytes = std::fs::read(&path).expect("journal");
    let synced = read_synced(&path);
    assert!(synced > 0, "the run marked what it synced");
    assert!(
        (synced as usize) < bytes.len(),
        "records past the last sync end the journal"
    );
    let all = parse(&bytes, synced).expect("the journal loads").records;
    let journal = String::from_utf8_lossy(&bytes);
    for kind in ["\"sealed\":", "\"keyed\":", "\"check\":", "\"t\":\"out\""] {
        assert!(journal.contains(kind), "no {kind} record to damage");
    }
    (bytes, synced, all)
}

#[test]
fn a_cut_anywhere_loads_the_whole_lines_before_it_or_is_refused_with_its_line() {
    let fake = FakeProvider::with_default(Behaviour::Answer("fine".into()));
    let (bytes, synced, all) = real_journal(&fake, "cut");
    let ends: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, &b)| b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    let (mut loaded, mut refused) = (0, 0);
    for cut in 0..=bytes.len() {
        let whole = ends.iter().filter(|&&e| e <= cut).count();
        match parse(&bytes[..cut], synced) {
            Ok(l) => {
                assert!(
                    cut as u64 >= synced,
                    "cut at {cut} loaded though {synced} bytes were synced"
                );
                assert_eq!(l.records, all[..whole], "cut at {cut}");
                loaded += 1;
            }
            Err(LoadError::Corrupt { line, .. }) => {
                assert!(
                    (cut as u64) < synced,
                    "cut at {cut} past the synced records refused"
                );
                assert_eq!(line, whole + 1, "cut at {cut}");
                refused += 1;
            }
            Err(e) => panic!("cut at {cut}: {e}"),
        }
    }
    assert!(
        loaded > 0 && refused > 0,
        "{loaded} loaded, {refused} refused"
    );
}

#[test]
fn a_changed_byte_anywhere_is_refused_with_its_line() {
    let fake = FakeProvider::with_default(Behaviour::Answer("fine".into()));
    let (bytes, synced, all) = real_journal(&fake, "byte");
    let last_line_starts = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let mut torn = 0;
    let mut rng = fastrand::Rng::with_seed(0x6b6f_7261_0003);
    for _ in 0..3000 {
        let at = rng.usize(..bytes.len());
        let mut changed = bytes.clone();
        let to = loop {
            let b = rng.u8(..);
            if b != bytes[at] {
                break b;
            }
        };
        changed[at] = to;
        let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        match parse(&changed, synced) {
            Err(LoadError::Corrupt { line: l, .. }) => {
                assert_eq!(l, line, "byte {at} changed to {to}")
            }
            // Only the last line's newline, past the last sync: that line is now a torn
            // tail, and everything synced is still there.
            Ok(l) => {
                assert!(
                    at == bytes.len() - 1 && at >= last_line_starts && at as u64 >= synced,
                    "byte {at} changed to {to} loaded: {} bytes, last line from {last_line_starts}, synced {synced}, {} records of {}\n{}",
                    bytes.len(),
                    l.records.len(),
                    all.len(),
                    String::from_utf8_lossy(&bytes[last_line_starts.saturating_sub(300)..])
                );
                assert_eq!(l.records, all[..all.len() - 1]);
                torn += 1;
            }
            Err(e) => panic!("byte {at} changed to {to}: {e}"),
        }
    }
    eprintln!("3000 changed bytes: {} refused with their line, {torn} made the unsynced last line a torn tail", 3000 - torn);
}

#[test]
fn a_resume_of_a_damaged_journal_is_refused_naming_the_line() {
    let fake = FakeProvider::with_default(Behaviour::Answer("fine".into()));
    // Killed near the end, so there is a run to resume with synced records behind it.
    let d = project("changed", &fake);
    let killed = run(
        &d,
        &["run", "--durable", "--run-id", "k", "prog.ko"],
        Some("14"),
    );
    assert_ne!(killed.status.code(), Some(0));
    let path = d.join(".kora/runs/k/journal.jsonl");
    let good = std::fs::read_to_string(&path).expect("journal");
    // A byte inside line 5 changed, keeping it valid JSON: the checksum catches it.
    let lines: Vec<&str> = good.lines().collect();
    let mut changed: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    changed[4] = changed[4].replacen("\"n\":4", "\"n\":5", 1);
    std::fs::write(&path, changed.join("\n") + "\n").expect("damage");
    let out = run(&d, &["run", "--resume", "k"], None);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error[E1362]") && err.contains("damaged at line 5"),
        "{err}"
    );

    // Cut inside line 3, long synced: refused, not taken for a torn tail.
    let cut = lines[..2].iter().map(|l| l.len() + 1).sum::<usize>() + 10;
    std::fs::write(&path, &good.as_bytes()[..cut]).expect("cut");
    let out = run(&d, &["run", "--resume", "k"], None);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("error[E1362]") && err.contains("line 3"),
        "{err}"
    );
    assert!(!d.join("rows.db").exists() || rows(&d) <= 4, "nothing ran");

    // Put back whole, it resumes and finishes.
    std::fs::write(&path, &good).expect("restore");
    let out = run(&d, &["run", "--resume", "k"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(rows(&d), 4);
}

fn rows(d: &Path) -> i64 {
    rusqlite::Connection::open(d.join("rows.db"))
        .and_then(|c| c.query_row("SELECT count(*) FROM r", [], |r| r.get(0)))
        .unwrap_or(0)
}
