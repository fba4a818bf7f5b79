//! End to end: `kora test` through the binary — mocks (nesting and fall-through), assertion
//! messages, replay misses, `--filter`, and `--live` recording a cassette that then replays.

mod support;

use std::path::{Path, PathBuf};

use support::Run;

use kora_testkit::{Behaviour, FakeProvider};

fn dir(name: &str) -> PathBuf {
    support::temp_dir("kora-test-cmd", name)
}

fn kora(d: &Path, args: &[&str]) -> Run {
    support::run_in(d, args)
}

const TYPES: &str = r#"type Ticket:
    title: str
    priority: "low" | "medium" | "high"

type Invoice:
    total: float

def triage(text: str) -> str:
    t: Result[Ticket] = analyze(text, "Triage this ticket.")
    match t:
        case Ok(x):
            return x.priority
        case Uncertain(why):
            return "unsure: " + why
        case Failed(why):
            return "failed: " + why
        case Exhausted(m):
            return "exhausted: " + m

def bill(text: str) -> float:
    i: Invoice = analyze(text, "Read the invoice.") else:
        return -1.0
    return i.total

print("top level ran")
"#;

#[test]
fn mocks_nest_and_fall_through_and_failures_are_reported() {
    let d = dir("mocks");
    let program = format!(
        r#"{TYPES}
test "inner mock answers its own type":
    with mock analyze -> Ok(Ticket("fire", "low")):
        with mock analyze -> Ok(Invoice(12.5)):
            assert bill("x") == 12.5
            assert triage("y") == "low"

test "uncertain answers any call":
    with mock analyze -> Uncertain("no idea"):
        assert triage("?") == "unsure: no idea"

test "assert shows both sides":
    n = 2
    assert n + 1 == 4, "sum is off"

test "nothing on the stack fits":
    with mock analyze -> Ok(Invoice(1.0)):
        with mock analyze -> Ok(Invoice(2.0)):
            triage("z")

test "no cassette entry":
    triage("never recorded")
"#
    );
    std::fs::write(d.join("app.ko"), program).expect("program");
    let r = kora(&d, &["test", "app.ko"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let out = &r.stdout;
    assert!(
        out.contains("PASS app.ko: inner mock answers its own type"),
        "{out}"
    );
    assert!(
        out.contains("PASS app.ko: uncertain answers any call"),
        "{out}"
    );
    assert!(
        out.contains("FAIL app.ko: assert shows both sides"),
        "{out}"
    );
    assert!(out.contains("assertion failed: sum is off"), "{out}");
    assert!(
        out.contains("left:  3") && out.contains("right: 4"),
        "{out}"
    );
    // The innermost mismatch comes first, then the one beneath it.
    assert!(
        out.contains(
            "error[E1201]: no mock fits the model call at app.ko:triage#0: the mock at app.ko:"
        ),
        "{out}"
    );
    assert!(
        out.contains("answers `Ok(Invoice)`, but the call expects `Ticket`"),
        "{out}"
    );
    assert!(out.contains("; beneath it, the mock at app.ko:"), "{out}");
    // A replay miss names the call site, why, and how to record.
    assert!(
        out.contains("error[E1017]: no recorded answer for the model call at app.ko:triage#0"),
        "{out}"
    );
    // Inside a test the fix named first is a mock; recording is a paid call, so it comes second.
    assert!(
        out.contains("help: answer it in the test with `with mock analyze -> Ok(...):`, or record a real answer (a paid call) with `kora test --live app.ko`"),
        "{out}"
    );
    // Output of a failing test is shown under it.
    assert!(out.contains("--- output ---\n    top level ran"), "{out}");
    assert!(out.ends_with("\n2 passed, 3 failed\n"), "{out}");

    let r = kora(&d, &["test", "--filter", "mock", "app.ko"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.ends_with("\n1 passed, 0 failed, 4 skipped\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn check_errors_in_tests_stop_before_running() {
    let d = dir("check");
    std::fs::write(
        d.join("bad.ko"),
        "def f() -> int:\n    return 1\n\ntest \"mock outside\":\n    pass\n\nwith mock analyze -> 3:\n    pass\n",
    )
    .expect("program");
    let r = kora(&d, &["test", "bad.ko"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("E0703"), "{}", r.stderr);
    assert!(r.stderr.contains("E0705"), "{}", r.stderr);
    assert!(r.stdout.contains("its tests did not run"), "{}", r.stdout);
}

#[test]
fn a_folder_without_tests_fails() {
    let d = dir("none");
    std::fs::write(d.join("plain.ko"), "print(1)\n").expect("program");
    let r = kora(&d, &["test"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("no `test \"name\":` blocks found"),
        "{}",
        r.stdout
    );
}

#[test]
fn live_records_a_cassette_that_then_replays() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::AnswerWithUsage(
        r#"{"ok": {"title": "Printer fire", "priority": "high"}, "uncertain": null}"#.into(),
        120,
        30,
    ));
    let d = dir("live");
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[models]\ndefault = {{ name = \"fake-model\", endpoint = \"{}\" }}\ntimeout_secs = 2\n",
            fake.openai_endpoint()
        ),
    )
    .expect("config");
    let program = format!(
        "{TYPES}\ntest \"high priority goes to on-call\":\n    assert triage(\"printer on fire\") == \"high\"\n"
    );
    std::fs::write(d.join("app.ko"), program).expect("program");

    let r = kora(&d, &["test", "app.ko"]);
    assert_eq!(r.code, 1, "replay is the default: {}", r.stdout);
    assert!(r.stdout.contains("E1017"), "{}", r.stdout);
    assert_eq!(fake.count(), 0, "replay never calls the model");

    let r = kora(&d, &["test", "--live", "app.ko"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(fake.count(), 1);
    let cassette = std::fs::read_to_string(d.join("app.cassette.json")).expect("cassette written");
    assert!(cassette.contains("app.ko:triage#0"), "{cassette}");
    assert!(cassette.contains("Printer fire"), "{cassette}");
    drop(fake);

    let r = kora(&d, &["test", "app.ko"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stdout
            .contains("PASS app.ko: high priority goes to on-call"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.ends_with("\n1 passed, 0 failed\n"), "{}", r.stdout);
}
