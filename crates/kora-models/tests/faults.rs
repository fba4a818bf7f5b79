//! The transport under faults, against the loopback `FakeProvider`: cancellation, the whole-call
//! timeout, truncation, refusals, streams cut after output, and echoed secrets.
//!
//! Elapsed times are asserted with generous bounds only (a bound is "far below what the old
//! behaviour took"), request counts exactly.

use std::time::{Duration, Instant};

use kora_models::{call, call_cancellable, Api, Cancel, ModelEntry, Request, Settings};
use kora_testkit::{Behaviour, FakeProvider};

fn settings(timeout: f64, call_timeout: f64, max_retries: u32) -> Settings {
    Settings {
        timeout_secs: timeout,
        call_timeout_secs: call_timeout,
        max_retries,
        retry_after_cap: Duration::from_secs(30),
        backoff_base: Duration::from_millis(1),
        backoff_max: Duration::from_millis(5),
    }
}

fn openai(fake: &FakeProvider) -> ModelEntry {
    ModelEntry::new("fake-model", fake.openai_endpoint())
}

fn ollama(fake: &FakeProvider) -> ModelEntry {
    ModelEntry {
        api: Api::Ollama,
        ..ModelEntry::new("llama-fake", fake.url())
    }
}

fn req(stream: bool) -> Request {
    Request {
        model: "fake-model".into(),
        prompt: "Say something.".into(),
        stream,
        ..Request::default()
    }
}

/// Cancels `token` after `after`, from another thread.
fn cancel_after(token: &Cancel, after: Duration) -> std::thread::JoinHandle<()> {
    let token = token.clone();
    std::thread::spawn(move || {
        std::thread::sleep(after);
        token.cancel();
    })
}

#[test]
fn a_cancelled_call_abandons_its_request_at_once_and_never_retries() {
    let fake = FakeProvider::with_default(Behaviour::Stall(Duration::from_secs(60)));
    let token = Cancel::new();
    let t = cancel_after(&token, Duration::from_millis(200));
    let start = Instant::now();
    let err = call_cancellable(
        &openai(&fake),
        &settings(30.0, 300.0, 3),
        &req(false),
        None,
        Some(&token),
        None,
    )
    .unwrap_err();
    t.join().expect("joins");
    assert!(err.cancelled, "{}", err.cause);
    assert!(err.cause.contains("cancelled"), "{}", err.cause);
    assert_eq!(fake.count(), 1, "no retry after the cancel");
    assert_eq!(err.attempts, 1);
    // The request was read by the provider: its prompt is charged as an estimate.
    assert!(err.usage.input_tokens > 0);
    // Far below one 30 s timeout.
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_cancel_during_a_backoff_wakes_it() {
    // The provider asks for 20 s before a retry; the cancel comes first.
    let fake = FakeProvider::with_default(Behaviour::Status(503, Some("20".into())));
    let token = Cancel::new();
    let t = cancel_after(&token, Duration::from_millis(200));
    let start = Instant::now();
    let err = call_cancellable(
        &openai(&fake),
        &settings(5.0, 300.0, 3),
        &req(false),
        None,
        Some(&token),
        None,
    )
    .unwrap_err();
    t.join().expect("joins");
    assert!(err.cancelled);
    assert_eq!(fake.count(), 1);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_call_cancelled_before_it_starts_sends_nothing() {
    let fake = FakeProvider::start();
    let token = Cancel::new();
    token.cancel();
    let err = call_cancellable(
        &openai(&fake),
        &settings(5.0, 300.0, 3),
        &req(false),
        None,
        Some(&token),
        None,
    )
    .unwrap_err();
    assert!(err.cancelled);
    assert_eq!((err.attempts, fake.count()), (0, 0));
    assert!(err.usage.is_zero(), "a call never made costs nothing");
}

#[test]
fn a_stream_that_never_finishes_is_cut_at_the_whole_call_timeout() {
    for entry in [openai as fn(&FakeProvider) -> ModelEntry, ollama] {
        let fake = FakeProvider::with_default(Behaviour::Trickle {
            every: Duration::from_millis(100),
            lasting: Duration::from_secs(60),
        });
        let start = Instant::now();
        let mut pieces = 0;
        let mut on_piece = |_: &str| pieces += 1;
        let err = call(
            &entry(&fake),
            &settings(5.0, 1.0, 3),
            &req(true),
            None,
            Some(&mut on_piece),
        )
        .unwrap_err();
        assert!(err.call_timed_out, "{}", err.cause);
        assert!(!err.deadline_reached);
        assert!(
            err.cause.contains("call_timeout_secs (1s)"),
            "{}",
            err.cause
        );
        assert_eq!(fake.count(), 1, "{}", err.cause);
        // Silence never came (a frame every 100 ms), so only the 1 s limit can have ended it.
        assert!(
            start.elapsed() < Duration::from_secs(8),
            "{:?}",
            start.elapsed()
        );
    }
}

#[test]
fn the_whole_call_timeout_bounds_retries_too() {
    let fake = FakeProvider::with_default(Behaviour::Stall(Duration::from_secs(60)));
    let start = Instant::now();
    let err = call(
        &openai(&fake),
        &settings(0.4, 1.0, 10),
        &req(false),
        None,
        None,
    )
    .unwrap_err();
    assert!(err.call_timed_out, "{}", err.cause);
    // Ten retries of 0.4 s would take over 4 s; the call gets 1 s in all.
    assert!(fake.count() <= 3, "{} requests", fake.count());
    assert!(
        start.elapsed() < Duration::from_secs(4),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_budget_deadline_before_the_call_timeout_is_the_one_reported() {
    let fake = FakeProvider::with_default(Behaviour::Trickle {
        every: Duration::from_millis(100),
        lasting: Duration::from_secs(60),
    });
    let deadline = Some(Instant::now() + Duration::from_millis(500));
    let err = call(
        &openai(&fake),
        &settings(5.0, 30.0, 3),
        &req(true),
        deadline,
        None,
    )
    .unwrap_err();
    assert!(err.deadline_reached, "{}", err.cause);
    assert!(!err.call_timed_out);
}

#[test]
fn an_answer_cut_at_the_token_limit_says_so_in_both_wire_formats() {
    for entry in [openai as fn(&FakeProvider) -> ModelEntry, ollama] {
        for stream in [false, true] {
            let fake = FakeProvider::with_default(Behaviour::Truncated("Once upon a".into()));
            let r = call(
                &entry(&fake),
                &settings(5.0, 30.0, 0),
                &req(stream),
                None,
                None,
            )
            .expect("a reply");
            assert!(r.truncated(), "stream {stream}: {:?}", r.finish_reason);
            assert_eq!(r.content, "Once upon a");
        }
    }
}

#[test]
fn a_refusal_is_read_streamed_or_not() {
    for stream in [false, true] {
        let fake = FakeProvider::with_default(Behaviour::Refusal("I can't help with that.".into()));
        let mut shown = String::new();
        let mut on_piece = |p: &str| shown.push_str(p);
        let r = call(
            &openai(&fake),
            &settings(5.0, 30.0, 0),
            &req(stream),
            None,
            Some(&mut on_piece),
        )
        .expect("a reply");
        assert_eq!(r.refusal.as_deref(), Some("I can't help with that."));
        assert_eq!(r.content, "");
        assert_eq!(shown, "", "a refusal is not shown as the answer");
        assert_eq!(r.response_id.as_deref(), Some("chatcmpl-fake"));
    }
}

#[test]
fn a_stream_cut_after_output_is_charged_an_estimate() {
    let fake = FakeProvider::with_default(Behaviour::StreamThenDrop(vec![
        "A long answer that ".into(),
        "was cut off".into(),
    ]));
    let mut on_piece = |_: &str| {};
    let err = call(
        &openai(&fake),
        &settings(5.0, 30.0, 3),
        &req(true),
        None,
        Some(&mut on_piece),
    )
    .unwrap_err();
    assert!(err.shown_output);
    assert_eq!(fake.count(), 1, "shown output is never retried");
    assert!(err.usage.input_tokens > 0, "{:?}", err.usage);
    assert!(err.usage.output_tokens > 0, "{:?}", err.usage);
}

#[test]
fn an_echoed_key_and_url_password_never_reach_a_reason_or_an_answer() {
    let var = "KORA_FAULTS_TEST_KEY";
    let key = "SECRETKEY-a1b2c3d4e5f6";
    std::env::set_var(var, key);
    for (status, stream) in [(401, false), (200, false), (200, true)] {
        let fake = FakeProvider::with_default(Behaviour::EchoAuth(status));
        let mut entry = openai(&fake);
        entry.api_key_env = Some(var.into());
        let r = call(&entry, &settings(5.0, 30.0, 0), &req(stream), None, None);
        let said = match r {
            Ok(reply) => reply.content,
            Err(f) => format!("{} {:?}", f.cause, f.attempt_log),
        };
        assert!(!said.contains("SECRETKEY"), "{status}: {said}");
        assert!(said.contains("[redacted]"), "{status}: {said}");
        assert_eq!(
            fake.requests()[0].header("authorization"),
            Some(format!("Bearer {key}").as_str()),
            "the key is still sent"
        );
    }
    // A password in the endpoint: sent as Basic, never said back.
    let fake = FakeProvider::with_default(Behaviour::EchoAuth(401));
    let with_password = fake
        .openai_endpoint()
        .replace("http://", "http://ann:PASSWORD-xyz@");
    let entry = ModelEntry::new("fake-model", with_password);
    let f = call(&entry, &settings(5.0, 30.0, 0), &req(false), None, None).unwrap_err();
    assert!(fake.requests()[0]
        .header("authorization")
        .is_some_and(|a| a.starts_with("Basic ")));
    let said = format!("{} {:?}", f.cause, f.attempt_log);
    assert!(
        !said.contains("PASSWORD-xyz") && !said.contains("ann:"),
        "{said}"
    );
    assert!(
        !said.contains("YW5uOlBBU1NXT1JELXh5eg"),
        "the Basic form: {said}"
    );
}
