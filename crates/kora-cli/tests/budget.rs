//! End to end: `budget(...)` blocks, `remaining(...)` and `ask_human` through the `kora` binary, against the loopback fake provider.
//!
//! What the fake received is the ground truth for "stops at exactly the
//! cap": a program could print the right words and still have sent a call.
//! No test asserts a duration; the deadline tests assert the outcome and that
//! the stalled request really reached the provider.

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use kora_testkit::{Behaviour, FakeProvider, StreamOpts};
use support::Run;

fn setup(name: &str, fake: &FakeProvider, program: &str) -> PathBuf {
    let d = support::temp_dir("kora-budget", name);
    support::write_config(
        &d,
        &fake.openai_endpoint(),
        Some("openai"),
        "timeout_secs = 30\nmax_retries = 0\n",
    );
    std::fs::write(d.join("main.ko"), program).expect("program");
    d
}

fn kora(d: &Path, stdin: Option<&str>) -> Run {
    kora_with(d, &[], stdin)
}

fn kora_with(d: &Path, flags: &[&str], stdin: Option<&str>) -> Run {
    support::collect(
        support::kora_cmd()
            .arg("run")
            .args(flags)
            .arg(d.join("main.ko")),
        stdin,
    )
}

/// Prints one line per outcome, so the test can read what every call returned.
const SHOW: &str = r#"def show(r: Result[str]) -> None:
    match r:
        case Ok(x):
            print("ok", x)
        case Exhausted(m):
            print("exhausted", m)
        case Failed(why):
            print("failed", why)
        case Uncertain(why):
            print("uncertain", why)
        case Err(why):
            print("err", why)
"#;

fn program(body: &str) -> String {
    format!("{SHOW}\n{body}")
}

#[test]
fn max_calls_stops_at_exactly_the_cap() {
    let fake = FakeProvider::with_default(Behaviour::Answer("fine".into()));
    let d = setup(
        "calls",
        &fake,
        &program(
            r#"done: list[int] = []
budget(max_calls=3):
    for i in range(5):
        r = analyze(i, "Say fine.")
        show(r)
        done.append(i)
print("kept", len(done))
"#,
        ),
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "ok fine\nok fine\nok fine\nexhausted calls\nexhausted calls\nkept 5\n"
    );
    assert_eq!(fake.count(), 3, "the provider saw exactly the cap");
}

#[test]
fn max_tokens_counts_reported_usage() {
    let fake = FakeProvider::with_default(Behaviour::AnswerWithUsage("fine".into(), 40, 20));
    let d = setup(
        "tokens",
        &fake,
        &program(
            r#"budget(max_tokens=100):
    print(remaining("tokens"))
    for i in range(4):
        show(analyze(i, "Say fine."))
        print(remaining("tokens"))
"#,
        ),
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // 60 tokens, then 120: the second call crossed the cap and was charged in full.
    assert_eq!(
        r.stdout,
        "100\nok fine\n40\nok fine\n0\nexhausted tokens\n0\nexhausted tokens\n0\n"
    );
    assert_eq!(fake.count(), 2);
}

#[test]
fn a_nested_budget_tightens_and_its_spending_reaches_the_outer_one() {
    let fake = FakeProvider::with_default(Behaviour::Answer("fine".into()));
    let d = setup(
        "nested",
        &fake,
        &program(
            r#"budget(max_calls=4):
    budget(max_calls=1):
        show(analyze(1, "a"))
        show(analyze(2, "b"))
        print("inner left", remaining("calls"))
    print("outer left", remaining("calls"))
    for i in range(4):
        show(analyze(i, "c"))
print("unbudgeted", remaining("calls"))
"#,
        ),
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "ok fine\nexhausted calls\ninner left 0\nouter left 3\n\
         ok fine\nok fine\nok fine\nexhausted calls\nunbudgeted None\n"
    );
    assert_eq!(fake.count(), 4);
}

#[test]
fn a_literal_loosening_is_a_check_error() {
    let fake = FakeProvider::start();
    let d = setup(
        "loosen-literal",
        &fake,
        "budget(max_tokens=100):\n    budget(max_tokens=500):\n        print(analyze(1, \"x\"))\n",
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("E0801"), "{}", r.stderr);
    assert!(r.stderr.contains("max_tokens"), "{}", r.stderr);
    assert_eq!(fake.count(), 0);
}

#[test]
fn a_loosening_through_a_variable_is_a_runtime_error() {
    let fake = FakeProvider::with_default(Behaviour::Answer("fine".into()));
    let d = setup(
        "loosen-runtime",
        &fake,
        r#"def inner(n: int) -> None:
    budget(max_calls=n):
        print(analyze(1, "x"))

budget(max_calls=2):
    inner(1)
    inner(5)
"#,
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("E1321"), "{}", r.stderr);
    assert!(r.stderr.contains("max_calls=5"), "{}", r.stderr);
    assert_eq!(
        fake.count(),
        1,
        "the tightening call ran, the loosening one did not"
    );
}

#[test]
fn max_seconds_cuts_a_stalled_request() {
    let fake = FakeProvider::with_default(Behaviour::Stall(Duration::from_secs(20)));
    let d = setup(
        "stall",
        &fake,
        &program(
            r#"budget(max_seconds=1):
    show(analyze(1, "Answer slowly."))
print("after")
"#,
        ),
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "exhausted time\nafter\n");
    assert_eq!(
        fake.count(),
        1,
        "the request was in flight when time ran out"
    );
}

#[test]
fn time_is_named_first_when_several_meters_ran_out() {
    let fake = FakeProvider::with_default(Behaviour::Stall(Duration::from_secs(20)));
    let d = setup(
        "time-first",
        &fake,
        &program(
            r#"budget(max_seconds=1, max_calls=1):
    show(analyze(1, "slow"))
    print("calls left", remaining("calls"))
    show(analyze(2, "never sent"))
"#,
        ),
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout, "exhausted time\ncalls left 0\nexhausted time\n",
        "calls are out too, but time is what stopped it"
    );
    assert_eq!(fake.count(), 1);
}

#[test]
fn remaining_reads_each_meter_and_none_outside_a_budget() {
    let fake = FakeProvider::start();
    let d = setup(
        "remaining",
        &fake,
        r#"print(remaining("tokens"), remaining("seconds"))
budget(max_tokens=50, max_steps=7, max_seconds=60):
    print(remaining("tokens"), remaining("calls"), remaining("steps"))
    s = remaining("seconds")
    print(s > 0, s <= 60)
"#,
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "None None\n50 None 7\nTrue True\n");
}

#[test]
fn an_unknown_meter_is_a_check_error() {
    let fake = FakeProvider::start();
    let d = setup("bad-meter", &fake, "print(remaining(\"dollars\"))\n");
    let r = kora(&d, None);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("E0803"), "{}", r.stderr);
}

#[test]
fn an_unknown_budget_argument_is_a_check_error() {
    let fake = FakeProvider::start();
    let d = setup("bad-arg", &fake, "budget(max_time=5):\n    print(1)\n");
    let r = kora(&d, None);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("E0802"), "{}", r.stderr);
}

#[test]
fn ask_human_reads_a_piped_answer() {
    let fake = FakeProvider::start();
    let d = setup(
        "ask-piped",
        &fake,
        r#"a = ask_human("Approve the refund?")
b = ask_human("Reason?")
print("got", a, "/", b)
"#,
    );
    let r = kora(&d, Some("yes\nduplicate charge\n"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "Approve the refund?\nReason?\ngot yes / duplicate charge\n"
    );
}

#[test]
fn ask_human_with_no_input_is_a_clear_error() {
    let fake = FakeProvider::start();
    let d = setup(
        "ask-closed",
        &fake,
        "a = ask_human(\"Approve?\")\nprint(\"never\", a)\n",
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("E1324"), "{}", r.stderr);
    assert!(r.stderr.contains("--durable"), "{}", r.stderr);
    assert!(!r.stdout.contains("never"));
}

#[test]
fn max_seconds_bounds_an_http_request_and_its_retries() {
    let fake = FakeProvider::with_default(Behaviour::Stall(Duration::from_secs(20)));
    let d = setup(
        "http-stall",
        &fake,
        &format!(
            r#"use http
budget(max_seconds=1):
    r = http.get("{}/slow", timeout=30.0)
    match r:
        case Ok(x):
            print("ok")
        case Err(why):
            print(why)
"#,
            fake.url()
        ),
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Cut by the budget, not by its own 30 s timeout, and not retried past the deadline.
    assert!(r.stdout.contains("timed out after"), "{}", r.stdout);
    assert!(!r.stdout.contains("30.000"), "{}", r.stdout);
    assert!(r.stdout.contains("no room to retry"), "{}", r.stdout);
    assert_eq!(fake.count(), 1);
}

#[test]
fn a_cassette_answer_passes_the_budget_like_a_live_one() {
    let fake = FakeProvider::with_default(Behaviour::AnswerWithUsage("fine".into(), 7, 3));
    let d = setup(
        "cassette",
        &fake,
        &program(
            r#"budget(max_calls=2, max_tokens=1000):
    for i in range(3):
        show(analyze(i, "Say fine."))
    print("calls left", remaining("calls"), "tokens left", remaining("tokens"))
"#,
        ),
    );
    let live = kora_with(&d, &["--record"], None);
    assert_eq!(live.code, 0, "{}", live.stderr);
    assert_eq!(
        live.stdout,
        "ok fine\nok fine\nexhausted calls\ncalls left 0 tokens left 980\n"
    );
    assert_eq!(fake.count(), 2);
    // Replayed: the two recorded answers are admitted and charged the tokens they were
    // recorded with, and the third call is
    // refused by the budget before the cassette could report a miss.
    let replayed = kora_with(&d, &["--replay"], None);
    assert_eq!(replayed.code, 0, "{}", replayed.stderr);
    assert_eq!(replayed.stdout, live.stdout);
    assert_eq!(fake.count(), 2, "the replay reached no provider");
}

#[test]
fn max_steps_counts_model_turns() {
    let fake = FakeProvider::with_default(Behaviour::Answer("fine".into()));
    let d = setup(
        "steps",
        &fake,
        &program(
            r#"budget(max_steps=2):
    for i in range(3):
        show(analyze(i, "Say fine."))
    print("steps left", remaining("steps"))
"#,
        ),
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "ok fine\nok fine\nexhausted steps\nsteps left 0\n"
    );
    assert_eq!(fake.count(), 2);
}

#[test]
fn a_computed_limit_that_is_negative_is_a_runtime_error() {
    let fake = FakeProvider::start();
    let d = setup(
        "negative",
        &fake,
        "n = 3 - 5\nbudget(max_calls=n):\n    print(\"never\")\n",
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("E1322"), "{}", r.stderr);
    assert!(!r.stdout.contains("never"));
}

#[test]
fn one_budget_is_shared_by_every_branch_of_a_parallel_for() {
    let fake = FakeProvider::with_default(Behaviour::Answer("fine".into()));
    let d = setup(
        "parallel",
        &fake,
        r#"def ask(i: int) -> str:
    r: Result[str] = analyze(i, "Say fine.")
    match r:
        case Ok(x):
            return "ok"
        case Exhausted(m):
            return "exhausted " + m
        case _:
            return "other"

budget(max_calls=5):
    answers: list[str] = parallel for i in range(8):
        return ask(i)
    print(len([a for a in answers if a == "ok"]), "ok")
    print(len([a for a in answers if a == "exhausted calls"]), "exhausted")
    print(remaining("calls"))
"#,
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "5 ok\n3 exhausted\n0\n");
    assert_eq!(fake.count(), 5, "eight branches, one cap of five calls");
}

/// A tool loop whose model asks for the tool on every turn unless told otherwise.
const TOOL_LOOP: &str = r#"type Weather:
    city: str
    celsius: int

tool temperature(city: str) -> int:
    "The current temperature in a city, in degrees Celsius."
    print("tool ran for", city)
    return 21

def weather(city: str) -> None:
    w: Result[Weather] = analyze(city, "What is the weather?", tools=[temperature])
    match w:
        case Ok(x):
            print("ok", x.city, x.celsius)
        case Exhausted(m):
            print("exhausted", m)
        case other:
            print("other", other)
"#;

fn asks_for_the_tool() -> Behaviour {
    Behaviour::ToolCalls(vec![(
        "temperature".to_string(),
        serde_json::json!({"city": "Paris"}),
    )])
}

#[test]
fn max_steps_stops_a_tool_loop_between_turns() {
    let fake = FakeProvider::with_default(asks_for_the_tool());
    let d = setup(
        "tool-steps",
        &fake,
        &format!("{TOOL_LOOP}\nbudget(max_steps=2):\n    weather(\"Paris\")\n    print(remaining(\"steps\"))\n"),
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Two turns were admitted, each ran the tool; the third was refused before it was sent.
    assert_eq!(
        r.stdout,
        "tool ran for Paris\ntool ran for Paris\nexhausted steps\n0\n"
    );
    assert_eq!(fake.count(), 2, "the provider saw exactly the cap");
}

#[test]
fn a_tool_loop_is_one_call_of_max_calls() {
    let fake = FakeProvider::start();
    fake.push(asks_for_the_tool());
    fake.push(Behaviour::Answer(
        r#"{"ok": {"city": "Paris", "celsius": 21}, "uncertain": null}"#.into(),
    ));
    let d = setup(
        "tool-calls",
        &fake,
        &format!(
            "{TOOL_LOOP}\nbudget(max_calls=1):\n    weather(\"Paris\")\n    weather(\"Rome\")\n"
        ),
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "tool ran for Paris\nok Paris 21\nexhausted calls\n"
    );
    assert_eq!(fake.count(), 2, "two turns of the one admitted call");
}

#[test]
fn max_seconds_cuts_a_stalled_tool_loop_turn() {
    let fake = FakeProvider::with_default(Behaviour::Stall(Duration::from_secs(20)));
    fake.push(asks_for_the_tool());
    let d = setup(
        "tool-stall",
        &fake,
        &format!("{TOOL_LOOP}\nbudget(max_seconds=1):\n    weather(\"Paris\")\nprint(\"after\")\n"),
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "tool ran for Paris\nexhausted time\nafter\n");
    assert_eq!(
        fake.count(),
        2,
        "the second turn was in flight when time ran out"
    );
}

#[test]
fn a_tool_loop_is_charged_the_tokens_of_its_turns() {
    let fake = FakeProvider::start();
    fake.push(asks_for_the_tool());
    fake.push(Behaviour::AnswerWithUsage(
        r#"{"ok": {"city": "Paris", "celsius": 21}, "uncertain": null}"#.into(),
        40,
        20,
    ));
    let d = setup(
        "tool-tokens",
        &fake,
        &format!("{TOOL_LOOP}\nbudget(max_tokens=100):\n    weather(\"Paris\")\n    print(remaining(\"tokens\"))\n"),
    );
    let r = kora(&d, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "tool ran for Paris\nok Paris 21\n40\n");
}

#[test]
fn a_stream_that_reports_no_usage_is_charged_an_estimate() {
    // llama.cpp's Python server streams without a usage frame; charging nothing would let a
    // streamed call through any token budget for free.
    let program = "budget(max_tokens=100000):\n    r: Result[str] = analyze(\"a ticket about a crash\", \"Headline?\")\n        on token(piece):\n            pass\n    print(remaining(\"tokens\") < 100000)\n";
    let silent = FakeProvider::start();
    silent.push(Behaviour::Stream(
        vec!["Export ".into(), "crashes".into()],
        StreamOpts::default(),
    ));
    let r = kora(&setup("stream-no-usage", &silent, program), None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "True\n", "an estimate was charged");

    let honest = FakeProvider::start();
    honest.push(Behaviour::Stream(
        vec!["Export ".into(), "crashes".into()],
        StreamOpts {
            usage: Some((0, 0)),
            ..StreamOpts::default()
        },
    ));
    let r = kora(&setup("stream-zero-usage", &honest, program), None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "False\n", "a reported count stands, even zero");
}
