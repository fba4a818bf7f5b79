//! End to end: `analyze` through the `kora` binary against the loopback fake provider.
//!
//! Each test writes a program and a `kora.toml` pointing at the fake into a
//! fresh folder, runs `kora run`, and checks both what the program printed and
//! what the provider received.

mod support;

use std::path::{Path, PathBuf};

use support::Run;

use kora_testkit::{Behaviour, FakeProvider, StreamOpts};

fn dir(name: &str) -> PathBuf {
    support::temp_dir("kora-analyze", name)
}

fn setup(name: &str, fake: &FakeProvider, api: &str, extra: &str, program: &str) -> PathBuf {
    let d = dir(name);
    let endpoint = if api == "ollama" {
        fake.url()
    } else {
        fake.openai_endpoint()
    };
    support::write_config(
        &d,
        &endpoint,
        Some(api),
        &format!("timeout_secs = 2\n{extra}"),
    );
    std::fs::write(d.join("main.ko"), program).expect("program");
    d
}

fn kora(d: &Path, args: &[&str]) -> Run {
    support::collect(support::kora_cmd().args(args).arg(d.join("main.ko")), None)
}

const TRIAGE: &str = r#"type Ticket:
    title: str
    priority: "low" | "medium" | "high"
    tags: list[str] = []

t: Result[Ticket] = analyze("printer on fire", "Triage this ticket.")
match t:
    case Ok(x):
        print(x.title, x.priority, x.tags)
    case Uncertain(why):
        print("uncertain:", why)
    case Failed(why):
        print("failed:", why)
    case Exhausted(m):
        print("exhausted:", m)
"#;

#[test]
fn typed_record_result_in_both_wire_formats() {
    for api in ["openai", "ollama"] {
        let fake = FakeProvider::start();
        fake.push(Behaviour::Answer(
            r#"{"ok": {"title": "Printer fire", "priority": "high", "tags": ["hw"]}, "uncertain": null}"#.into(),
        ));
        let d = setup(&format!("typed-{api}"), &fake, api, "", TRIAGE);
        let r = kora(&d, &["run"]);
        assert_eq!(r.code, 0, "{api}: {}", r.stderr);
        assert_eq!(r.stdout, "Printer fire high ['hw']\n", "{api}");
        let reqs = fake.requests();
        assert_eq!(reqs.len(), 1);
        let body = serde_json::to_string(&reqs[0].body).expect("json");
        assert!(
            body.contains("printer on fire"),
            "{api}: data is sent: {body}"
        );
        assert!(body.contains("priority"), "{api}: schema is sent: {body}");
    }
}

#[test]
fn uncertain_and_schema_mismatch_are_values() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Answer(
        r#"{"ok": null, "uncertain": "no details given"}"#.into(),
    ));
    fake.push(Behaviour::Answer(
        r#"{"ok": {"title": "x", "priority": "urgent"}, "uncertain": null}"#.into(),
    ));
    let d = setup("uncertain", &fake, "openai", "", TRIAGE);
    let r = kora(&d, &["run"]);
    assert_eq!(r.stdout, "uncertain: no details given\n", "{}", r.stderr);
    let r = kora(&d, &["run"]);
    assert!(
        r.stdout.starts_with("failed: schema: $.priority"),
        "{}",
        r.stdout
    );
}

#[test]
fn rate_limit_is_retried_and_counted() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Status(429, Some("0".into())));
    fake.push(Behaviour::Answer(
        r#"{"ok": {"title": "a", "priority": "low"}, "uncertain": null}"#.into(),
    ));
    let d = setup("retry", &fake, "openai", "", TRIAGE);
    let r = kora(&d, &["run"]);
    assert_eq!(r.stdout, "a low []\n", "{}", r.stderr);
    assert_eq!(fake.count(), 2, "one 429, one answer");
}

#[test]
fn server_error_without_retries_is_failed_after_one_request() {
    let fake = FakeProvider::with_default(Behaviour::Status(500, None));
    let d = setup("noretry", &fake, "openai", "max_retries = 0\n", TRIAGE);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("failed: HTTP 500"), "{}", r.stdout);
    assert_eq!(fake.count(), 1);
}

#[test]
fn record_then_replay_without_the_provider() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Answer(
        r#"{"ok": {"title": "Recorded", "priority": "medium"}, "uncertain": null}"#.into(),
    ));
    let d = setup("record", &fake, "openai", "", TRIAGE);
    let r = kora(&d, &["run", "--record"]);
    assert_eq!(r.stdout, "Recorded medium []\n", "{}", r.stderr);
    let cassette = std::fs::read_to_string(d.join("main.cassette.json")).expect("cassette written");
    assert!(cassette.contains("\"Recorded\""), "{cassette}");
    drop(fake);
    let r = kora(&d, &["run", "--replay"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "Recorded medium []\n");
    // A changed prompt misses, and the error names the site and what differs.
    let changed = TRIAGE.replace("Triage this ticket.", "Triage it.");
    std::fs::write(d.join("main.ko"), changed).expect("program");
    let r = kora(&d, &["run", "--replay"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("main.ko:<module>#"), "{}", r.stderr);
    assert!(r.stderr.contains("prompt differs"), "{}", r.stderr);
}

#[test]
fn failures_are_never_recorded() {
    let fake = FakeProvider::with_default(Behaviour::Status(503, None));
    let d = setup("nofail", &fake, "openai", "max_retries = 0\n", TRIAGE);
    let r = kora(&d, &["run", "--record"]);
    assert!(r.stdout.starts_with("failed:"), "{}", r.stdout);
    assert!(!d.join("main.cassette.json").exists());
}

#[test]
fn stream_prints_pieces_and_returns_the_text() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Stream(
        vec!["Hel".into(), "lo ".into(), "there".into()],
        StreamOpts {
            keep_alives: true,
            role_delta: true,
            ..StreamOpts::default()
        },
    ));
    let program = "def main() -> None:\n    answer: str = analyze(\"\", \"Say hello\") stream else:\n        print(\"no answer\")\n        return\n    print(len(answer))\n\nmain()\n";
    let d = setup("stream", &fake, "openai", "", program);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "Hello there\n11\n");
}

#[test]
fn bad_config_names_the_key_and_line() {
    let fake = FakeProvider::start();
    let d = setup("badcfg", &fake, "openai", "max_retires = 2\n", TRIAGE);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("max_retires"), "{}", r.stderr);
}
