//! End to end: a tool loop in a durable run, through the `kora` binary against the loopback fake provider.
//!
//! A call given tools is one model effect whose turns and tool calls are journaled one by one.
//! Killed at any append, the resume re-sends no turn whose answer was journaled, repeats no
//! tool write, and prints what one uninterrupted run prints; journaled whole, the call is
//! replayed without a request and without running its tools.

mod support;

use std::path::PathBuf;

use support::{kora, text};

use kora_testkit::{Behaviour, FakeProvider};
use serde_json::json;

const PROGRAM: &str = r#"use fs

type Weather:
    city: str
    celsius: int

tool temperature(city: str) -> int:
    "The current temperature in a city, in degrees Celsius."
    done: None = fs.append("calls.txt", f"{city}\n") else (why, kind):
        return -1
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

const CLEAN: &str = "start\ntool ran for Paris\ntool ran for Rome\nParis 21\n";

fn dir(name: &str, fake: &FakeProvider) -> PathBuf {
    let d = support::temp_dir("kora-durable-tools", name);
    support::write_fake_config(&d, &fake.openai_endpoint());
    std::fs::write(d.join("main.ko"), PROGRAM).expect("program");
    d
}

/// The model's three turns: a tool call, another, then the answer.
fn turns() -> Vec<Behaviour> {
    vec![
        Behaviour::ToolCalls(vec![("temperature".to_string(), json!({"city": "Paris"}))]),
        Behaviour::ToolCalls(vec![("temperature".to_string(), json!({"city": "Rome"}))]),
        Behaviour::Answer(r#"{"ok": {"city": "Paris", "celsius": 21}, "uncertain": null}"#.into()),
    ]
}

/// Scripts the fake with the turns from `from` on.
fn script_from(fake: &FakeProvider, from: usize) {
    fake.reset();
    for b in turns().into_iter().skip(from) {
        fake.push(b);
    }
}

fn script(fake: &FakeProvider) {
    script_from(fake, 0);
}

/// The whole lines of a run's journal.
fn journal(d: &std::path::Path, id: &str) -> Vec<String> {
    std::fs::read_to_string(d.join(format!(".kora/runs/{id}/journal.jsonl")))
        .unwrap_or_default()
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n'))
        .map(str::to_string)
        .collect()
}

/// The 1-based append of a clean run's journal that finishes the tool-loop call, and how many appends it made.
fn loop_done(name: &str, fake: &FakeProvider) -> (usize, usize) {
    let d = dir(name, fake);
    script(fake);
    let out = kora(&d, &["run", "--durable", "--run-id", "c", "main.ko"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), CLEAN);
    let lines = journal(&d, "c");
    // Line 0 is the header, written by rename rather than appended.
    let done = lines
        .iter()
        .position(|l| l.contains("\"t\":\"done\"") && l.contains("\"kind\":\"model\""))
        .unwrap_or_else(|| panic!("no outcome of the call:\n{}", lines.concat()));
    (done, lines.len() - 1)
}

#[test]
fn a_tool_loop_killed_anywhere_resumes_without_resending_turns_or_repeating_tools() {
    let fake = FakeProvider::start();
    let (_, appends) = loop_done("clean-midway", &fake);
    let (mut resumed_midway, mut settled) = (0, 0);
    for point in support::kill_points(appends) {
        let ctx = format!("killed at append {point}");
        let d = dir("midway", &fake);
        script(&fake);
        let first = kora(
            &d,
            &["run", "--durable", "--run-id", "k", "main.ko"],
            Some(&point),
        );
        assert_ne!(
            first.status.code(),
            Some(0),
            "{ctx}: the run was not killed"
        );
        let lines = journal(&d, "k");
        let journaled = lines
            .iter()
            .filter(|l| l.contains("\"t\":\"done\"") && l.contains("\"kind\":\"model_turn\""))
            .count();
        let whole = lines.iter().any(|l| l.contains("\"kind\":\"model\""));
        if journaled > 0 && !whole {
            resumed_midway += 1;
        }
        script_from(&fake, journaled);
        let out = kora(&d, &["run", "--resume", "k"], None);
        let err = text(&out.stderr);
        // A tool's own write cut off between its attempt and its outcome is settled, not a stop.
        assert_eq!(out.status.code(), Some(0), "{ctx}: {err}");
        settled += support::settled_by_check(&d, "k");
        let sent = if whole { 0 } else { 3 - journaled };
        assert_eq!(fake.count(), sent, "{ctx}: a journaled turn was sent again");
        let calls = std::fs::read_to_string(d.join("calls.txt")).unwrap_or_default();
        assert_eq!(
            calls, "Paris\nRome\n",
            "{ctx}: a tool's write was lost or repeated"
        );
        let shown = format!("{}{}", text(&first.stdout), text(&out.stdout));
        let mut lines: Vec<&str> = shown.lines().collect();
        // Output is at-least-once: a line shown just before the kill may come again.
        lines.dedup();
        assert_eq!(lines.join("\n") + "\n", CLEAN, "{ctx}: {shown}");
    }
    assert!(
        resumed_midway > 0,
        "no kill landed inside the loop after a journaled turn"
    );
    assert!(
        settled > 0,
        "no kill landed between a tool's write and its outcome"
    );
}

#[test]
fn a_journaled_tool_loop_is_replayed_without_requests_or_tools() {
    let fake = FakeProvider::start();
    let (done, _) = loop_done("clean-replayed", &fake);
    let d = dir("replayed", &fake);
    script(&fake);
    // Killed at the append after the outcome: the printed answer.
    let first = kora(
        &d,
        &["run", "--durable", "--run-id", "r", "main.ko"],
        Some(&(done + 1).to_string()),
    );
    assert_ne!(first.status.code(), Some(0), "the run was not killed");
    assert_eq!(fake.count(), 3);
    fake.reset();
    let out = kora(&d, &["run", "--resume", "r"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(fake.count(), 0, "the journaled call was not sent again");
    let resumed = text(&out.stdout);
    // The journal kept what the tools printed, so the resumed output lines up with the
    // first run's: only the answer, whose line the kill cut off, is shown.
    assert_eq!(resumed, "Paris 21\n", "tools ran again or output was lost");
    let calls = std::fs::read_to_string(d.join("calls.txt")).unwrap_or_default();
    assert_eq!(calls, "Paris\nRome\n", "the tools' writes were repeated");
}
