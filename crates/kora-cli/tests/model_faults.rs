//! End to end: model calls under real faults, through the `kora` binary against the loopback fake.
//!
//! One test per fault of issue 27: a decided `first` race, echoed secrets, a stream dropped
//! after output, a refusal, a stream that never ends, an answer cut at the token limit, and
//! settings out of range. Request counts are asserted exactly where the program decides them;
//! elapsed times only with bounds far from what the fault used to cost.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kora_testkit::{Behaviour, FakeProvider};
use support::Run;

fn setup(name: &str, fake: &FakeProvider, api: &str, settings: &str, program: &str) -> PathBuf {
    let d = support::temp_dir("kora-faults", name);
    let endpoint = if api == "ollama" {
        fake.url()
    } else {
        fake.openai_endpoint()
    };
    support::write_config(&d, &endpoint, Some(api), settings);
    std::fs::write(d.join("main.ko"), program).expect("program");
    d
}

fn kora(d: &Path, args: &[&str]) -> Run {
    support::collect(
        support::kora_cmd()
            .arg("run")
            .args(args)
            .arg(d.join("main.ko")),
        None,
    )
}

/// Prints one line per outcome.
const SHOW: &str = r#"def show(r: Result[str]) -> None:
    match r:
        case Ok(x):
            print("ok", x)
        case Uncertain(why):
            print("uncertain", why)
        case Exhausted(m):
            print("exhausted", m)
        case Failed(why):
            print("failed", why)
"#;

const RACE: &str = r#"budget(max_calls=20):
    winner = parallel for i in [0, 1, 2, 3, 4, 5] first:
        r: Result[str] = analyze(f"item-{i}", "Answer.")
        match r:
            case Ok(t):
                return t
            case _:
                pass
    print(winner)
    print("calls left", remaining("calls"))
"#;

/// The calls the race's budget charged, read from the program's `calls left` line after it
/// printed `winner`.
fn charged_calls(r: &Run, winner: &str) -> usize {
    let left = r
        .stdout
        .strip_prefix(&format!("{winner}\ncalls left "))
        .and_then(|rest| rest.trim_end().parse::<usize>().ok())
        .unwrap_or_else(|| panic!("unexpected output: {}{}", r.stdout, r.stderr));
    20 - left
}

#[test]
fn a_decided_first_race_abandons_the_losers_at_once() {
    let fake = FakeProvider::with_default(Behaviour::Stall(Duration::from_secs(60)));
    fake.route("item-0", Behaviour::Answer("zero".into()));
    // Retries of a 5 s timeout would hold each loser for 20 s and more.
    let d = setup(
        "race",
        &fake,
        "openai",
        "timeout_secs = 5\nmax_retries = 3\n",
        RACE,
    );
    let start = Instant::now();
    let r = kora(&d, &[]);
    let took = start.elapsed();
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let sent = fake.count();
    assert!(
        (1..=6).contains(&sent),
        "one request per branch at most, no retry: {sent}"
    );
    // A call is charged once its attempt started: the losers that never started one cost
    // nothing. An attempt cut while its bytes were on the way is charged though the fake may
    // never have read all of it, so the charge is at least what the fake saw, never more than
    // one per branch.
    let charged = charged_calls(&r, "zero");
    assert!(
        sent <= charged && charged <= 6,
        "{charged} charged, {sent} sent"
    );
    assert!(took < Duration::from_secs(4), "the loop took {took:?}");
}

#[test]
fn a_later_candidate_stops_the_rest_but_an_earlier_branch_still_wins() {
    let fake = FakeProvider::with_default(Behaviour::Stall(Duration::from_secs(60)));
    // Branch 0 answers after a while; branch 1 at once. Branch 1 cannot know it has won, so
    // branch 0 runs on; branches 2.. can win nothing once branch 1 has answered.
    fake.route(
        "item-0",
        Behaviour::After(
            Duration::from_millis(600),
            Box::new(Behaviour::Answer("zero".into())),
        ),
    );
    fake.route("item-1", Behaviour::Answer("one".into()));
    let d = setup(
        "race-order",
        &fake,
        "openai",
        "timeout_secs = 5\nmax_retries = 3\n",
        RACE,
    );
    let start = Instant::now();
    let r = kora(&d, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let sent = fake.count();
    assert!(sent <= 6, "{sent} requests");
    let charged = charged_calls(&r, "zero");
    assert!(
        sent <= charged && charged <= 6,
        "{charged} charged, {sent} sent"
    );
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn an_echoed_key_and_url_password_appear_in_no_output_trace_or_cassette() {
    let key = "SECRETKEY-0a1b2c3d4e5f";
    let password = "hunter2-PASSWORD";
    // Base64 of `ann:hunter2-PASSWORD`, as a `Basic` header carries it.
    let basic = "YW5uOmh1bnRlcjItUEFTU1dPUkQ=";
    let fake = FakeProvider::with_default(Behaviour::EchoAuth(200));
    fake.route("refused", Behaviour::EchoAuth(401));
    let d = support::temp_dir("kora-faults", "secrets");
    let with_key = fake.openai_endpoint();
    let with_password = fake
        .openai_endpoint()
        .replace("http://", &format!("http://ann:{password}@"));
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[models]\ndefault = {{ name = \"fake-model\", endpoint = \"{with_key}\", api_key_env = \"KORA_TEST_SECRET\" }}\nbasic = {{ name = \"fake-model\", endpoint = \"{with_password}\" }}\nmax_retries = 0\ntimeout_secs = 5\n"
        ),
    )
    .expect("kora.toml");
    let program = format!(
        r#"type Reply:
    text: str

{SHOW}
a: Result[str] = analyze("refused", "Answer.")
show(a)
b: Result[str] = analyze("plain", "Answer.")
show(b)
c: Result[str] = analyze("streamed", "Answer.") stream
show(c)
e: Result[str] = analyze("refused", "Answer.", model="basic")
show(e)
t: Result[Reply] = analyze("typed", "Answer.")
match t:
    case Failed(why):
        print("typed failed", why)
    case _:
        print("typed other")
last: Result[str] = analyze("refused", "Answer.", model="basic")
match last:
    case Failed(why):
        assert False, why
    case _:
        pass
"#
    );
    std::fs::write(d.join("main.ko"), program).expect("program");
    let r = support::collect(
        support::kora_cmd()
            .args(["run", "--record"])
            .arg(d.join("main.ko"))
            .env("KORA_TEST_SECRET", key),
        None,
    );
    // The program raised with the last reason on purpose: its message is on stderr and in
    // the run span's status.
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("failed HTTP 401"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("ok You sent Authorization: Bearer [redacted]"),
        "{}",
        r.stdout
    );
    assert!(r.stderr.contains("[redacted]"), "{}", r.stderr);
    let mut seen = vec![("stdout", r.stdout.clone()), ("stderr", r.stderr.clone())];
    for dir in [d.clone(), d.join(".kora/traces")] {
        for f in std::fs::read_dir(&dir).expect("folder").flatten() {
            // The configuration holds the password by the user's own choice.
            let own = f.file_name() == "kora.toml" || f.file_name() == "main.ko";
            if f.path().is_file() && !own {
                let text = std::fs::read_to_string(f.path()).unwrap_or_default();
                seen.push(("file", format!("{}: {text}", f.path().display())));
            }
        }
    }
    assert!(
        d.join("main.cassette.json").exists(),
        "the answers were recorded"
    );
    assert!(
        seen.iter().any(|(_, t)| t.contains("\"traceId\"")),
        "a trace was written"
    );
    for (what, text) in &seen {
        for secret in [key, "SECRETKEY", password, basic] {
            assert!(!text.contains(secret), "{what} holds {secret}:\n{text}");
        }
    }
    // Each request still carried its credential.
    let reqs = fake.requests();
    assert!(reqs
        .iter()
        .any(|q| q.header("authorization") == Some(&format!("Bearer {key}"))));
    assert!(reqs.iter().any(|q| q
        .header("authorization")
        .is_some_and(|a| a.starts_with("Basic "))));
}

#[test]
fn a_provider_that_keeps_dropping_streams_cannot_overrun_a_token_budget() {
    let fake = FakeProvider::with_default(Behaviour::StreamThenDrop(vec![
        "Here is a long answer, ".into(),
        "cut off before its end by a dropped connection. ".repeat(8),
    ]));
    let program = format!(
        r#"{SHOW}
budget(max_tokens=400):
    for i in range(50):
        r: Result[str] = analyze(f"ask {{i}}", "Tell me a long story.") stream
        match r:
            case Exhausted(m):
                print("exhausted", m)
                break
            case _:
                pass
print("sent before the stop")
"#
    );
    let d = setup("dropped", &fake, "openai", "max_retries = 3\n", &program);
    let r = kora(&d, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("exhausted tokens"), "{}", r.stdout);
    // Each dropped stream is charged its estimate (about 110 tokens here), and shown output
    // is never retried: the budget stops the loop after a handful of calls, not fifty.
    let sent = fake.count();
    assert!((2..=6).contains(&sent), "{sent} requests:\n{}", r.stdout);
}

#[test]
fn a_refusal_is_uncertain_with_the_models_words() {
    for stream in ["", " stream"] {
        let fake = FakeProvider::with_default(Behaviour::Refusal(
            "I can't help with that request.".into(),
        ));
        let program = format!(
            r#"type Ticket:
    title: str

{SHOW}
a: Result[str] = analyze("x", "Answer."){stream}
show(a)
t: Result[Ticket] = analyze("y", "Triage.")
match t:
    case Uncertain(why):
        print("typed uncertain", why)
    case _:
        print("typed other")
"#
        );
        let d = setup("refusal", &fake, "openai", "max_retries = 0\n", &program);
        let r = kora(&d, &[]);
        assert_eq!(r.code, 0, "{}", r.stderr);
        assert_eq!(
            r.stdout,
            "uncertain I can't help with that request.\ntyped uncertain I can't help with that request.\n",
            "{stream}"
        );
        assert_eq!(fake.count(), 2, "a refusal is an answer, not retried");
    }
}

#[test]
fn a_stream_that_never_finishes_ends_at_the_whole_call_timeout_or_the_budget() {
    let fake = FakeProvider::with_default(Behaviour::Trickle {
        every: Duration::from_millis(200),
        lasting: Duration::from_secs(120),
    });
    let program = format!(
        r#"{SHOW}
a: Result[str] = analyze("a", "Answer.") stream
show(a)
budget(max_seconds=1):
    b: Result[str] = analyze("b", "Answer.") stream
    show(b)
"#
    );
    let d = setup(
        "trickle",
        &fake,
        "openai",
        "timeout_secs = 5\ncall_timeout_secs = 2\nmax_retries = 3\n",
        &program,
    );
    let start = Instant::now();
    let r = kora(&d, &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    assert!(
        lines[0].starts_with("failed the call to http://127.0.0.1:")
            && lines[0].ends_with("took longer than call_timeout_secs (2s)"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1], "exhausted time");
    assert_eq!(fake.count(), 2, "a limit is not retried");
    // Without the limits the first stream alone would have run for two minutes.
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn an_answer_cut_at_the_token_limit_is_failed_truncated() {
    for api in ["openai", "ollama"] {
        let fake = FakeProvider::with_default(Behaviour::Truncated("Once upon a time".into()));
        let d = support::temp_dir("kora-faults", &format!("truncated-{api}"));
        let endpoint = if api == "ollama" {
            fake.url()
        } else {
            fake.openai_endpoint()
        };
        std::fs::write(
            d.join("kora.toml"),
            format!(
                "[models]\ndefault = {{ name = \"fake-model\", endpoint = \"{endpoint}\", api = \"{api}\", max_output_tokens = 64 }}\nmax_retries = 2\n"
            ),
        )
        .expect("kora.toml");
        std::fs::write(
            d.join("main.ko"),
            format!("{SHOW}\na: Result[str] = analyze(\"x\", \"Tell a story.\")\nshow(a)\nb: Result[str] = analyze(\"y\", \"Tell a story.\") stream\nshow(b)\n"),
        )
        .expect("program");
        let r = kora(&d, &[]);
        assert_eq!(r.code, 0, "{api}: {}", r.stderr);
        let lines: Vec<&str> = r.stdout.lines().collect();
        let cut = "failed truncated: the answer reached the output limit of 64 tokens (`max_output_tokens` of the `fake-model` model entry)";
        // The streamed call printed its text before it ended.
        assert!(lines[0].starts_with(cut), "{api}: {}", r.stdout);
        assert!(
            r.stdout.contains("Once upon a time\n"),
            "{api}: {}",
            r.stdout
        );
        assert!(
            lines.last().is_some_and(|l| l.starts_with(cut)),
            "{api}: {}",
            r.stdout
        );
        assert_eq!(fake.count(), 2, "{api}: not retried");
        // The trace names the kind.
        let trace = support::collect(support::kora_cmd().arg("trace").current_dir(&d), None);
        assert!(trace.stdout.contains("-> failed"), "{}", trace.stdout);
        let file = std::fs::read_dir(d.join(".kora/traces"))
            .expect("traces")
            .flatten()
            .find(|e| e.path().extension().is_some_and(|x| x == "json"))
            .map(|e| std::fs::read_to_string(e.path()).expect("trace"))
            .expect("a trace file");
        assert!(file.contains("\"stringValue\":\"truncated\""), "{file}");
        assert!(file.contains("gen_ai.response.finish_reasons"), "{file}");
    }
}

#[test]
fn settings_out_of_range_are_refused_with_file_and_line() {
    let fake = FakeProvider::start();
    for (setting, key) in [
        ("timeout_secs = 1e30", "timeout_secs"),
        ("call_timeout_secs = 0", "call_timeout_secs"),
        ("max_retries = 1000", "max_retries"),
        ("timeout_secs = nan", "timeout_secs"),
    ] {
        let d = setup(
            "ranges",
            &fake,
            "openai",
            &format!("{setting}\n"),
            "print(1)\n",
        );
        let r = kora(&d, &[]);
        assert_eq!(r.code, 2, "{setting}: {}", r.stderr);
        assert!(
            r.stderr.contains("kora.toml:3:")
                && r.stderr.contains(key)
                && r.stderr.contains(" to "),
            "{setting}: {}",
            r.stderr
        );
        assert_eq!(r.stdout, "");
    }
    assert_eq!(fake.count(), 0);
}
