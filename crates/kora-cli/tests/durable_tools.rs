//! End to end: a tool loop in a durable run, through the `kora` binary against the loopback fake provider.
//!
//! A call given tools is one model effect: marked before its first request, its outcome
//! journaled once it ends. Killed in between, the resume stops naming it (its tools may
//! have acted); journaled, it is replayed without a request and without running its tools.

mod support;

use std::path::PathBuf;

use support::{kora, text};

use kora_testkit::{Behaviour, FakeProvider};
use serde_json::json;

const PROGRAM: &str = r#"type Weather:
    city: str
    celsius: int

tool temperature(city: str) -> int:
    "The current temperature in a city, in degrees Celsius."
    print("tool ran for", city)
    return 21

print("start")
w: Result[Weather] = analyze("Paris", "What is the weather?", tools=[temperature])
match w:
    case Ok(x):
        print(x.city, x.celsius)
    case other:
        print("other:", other)
"#;

fn dir(name: &str, fake: &FakeProvider) -> PathBuf {
    let d = support::temp_dir("kora-durable-tools", name);
    support::write_fake_config(&d, &fake.openai_endpoint());
    std::fs::write(d.join("main.ko"), PROGRAM).expect("program");
    d
}

/// One tool call, then the answer: the two turns of the loop.
fn script(fake: &FakeProvider) {
    fake.reset();
    fake.push(Behaviour::ToolCalls(vec![(
        "temperature".to_string(),
        json!({"city": "Paris"}),
    )]));
    fake.push(Behaviour::Answer(
        r#"{"ok": {"city": "Paris", "celsius": 21}, "uncertain": null}"#.into(),
    ));
}

/// The 1-based appends of a clean run's journal that mark and finish the tool-loop call.
fn sent_and_done(name: &str, fake: &FakeProvider) -> (usize, usize) {
    let d = dir(name, fake);
    script(fake);
    let out = kora(&d, &["run", "--durable", "--run-id", "c", "main.ko"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "start\ntool ran for Paris\nParis 21\n");
    let journal = std::fs::read_to_string(d.join(".kora/runs/c/journal.jsonl")).expect("journal");
    // Line 0 is the header, written by rename rather than appended.
    let find = |tag: &str| {
        journal
            .lines()
            .position(|l| l.contains(tag) && l.contains("\"model\""))
            .unwrap_or_else(|| panic!("no {tag} record of the call:\n{journal}"))
    };
    let (sent, done) = (find("\"t\":\"sent\""), find("\"t\":\"done\""));
    assert!(sent < done, "{journal}");
    (sent, done)
}

#[test]
fn a_tool_loop_killed_between_its_mark_and_its_outcome_stops_the_resume_by_name() {
    let fake = FakeProvider::start();
    let (_, done) = sent_and_done("clean-unknown", &fake);
    let d = dir("unknown", &fake);
    script(&fake);
    let first = kora(
        &d,
        &["run", "--durable", "--run-id", "k", "main.ko"],
        Some(&done.to_string()),
    );
    assert_ne!(first.status.code(), Some(0), "the run was not killed");
    assert_eq!(fake.count(), 2, "both turns were sent before the kill");
    assert!(text(&first.stdout).contains("tool ran for Paris"));
    fake.reset();
    let out = kora(&d, &["run", "--resume", "k"], None);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("whether it happened is unknown"), "{err}");
    assert!(
        err.contains("`analyze`") && err.contains("main.ko"),
        "{err}"
    );
    assert_eq!(fake.count(), 0, "the resume sent nothing");
    assert!(
        !text(&out.stdout).contains("tool ran"),
        "the tools did not run again"
    );
}

#[test]
fn a_journaled_tool_loop_is_replayed_without_requests_or_tools() {
    let fake = FakeProvider::start();
    let (_, done) = sent_and_done("clean-replayed", &fake);
    let d = dir("replayed", &fake);
    script(&fake);
    // Killed at the append after the outcome: the printed answer.
    let first = kora(
        &d,
        &["run", "--durable", "--run-id", "r", "main.ko"],
        Some(&(done + 1).to_string()),
    );
    assert_ne!(first.status.code(), Some(0), "the run was not killed");
    assert_eq!(fake.count(), 2);
    fake.reset();
    let out = kora(&d, &["run", "--resume", "r"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(fake.count(), 0, "the journaled call was not sent again");
    let resumed = text(&out.stdout);
    // The journal kept what the tools printed, so the resumed output lines up with the
    // first run's: only the answer, whose line the kill cut off, is shown.
    assert_eq!(resumed, "Paris 21\n", "tools ran again or output was lost");
}
