//! `transport::call` against the loopback `FakeProvider`: retry rules, timeouts, deadlines, streams, both wire shapes.

use std::net::TcpListener;
use std::time::{Duration, Instant};

use kora_models::{
    call, decode_outcome, Api, Decoded, ImageData, ModelEntry, Reply, Request, Settings, Shape,
    Structured, ToolSpec, Usage,
};
use kora_testkit::{Behaviour, FakeProvider, StreamOpts};
use serde_json::json;

fn fast(max_retries: u32) -> Settings {
    Settings {
        timeout_secs: 5.0,
        call_timeout_secs: 60.0,
        max_retries,
        retry_after_cap: Duration::from_millis(50),
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

fn text_req() -> Request {
    Request {
        model: "fake-model".into(),
        prompt: "Say something.".into(),
        ..Request::default()
    }
}

fn typed_req(shape: Shape) -> Request {
    Request {
        model: "fake-model".into(),
        system: "You read receipts.".into(),
        prompt: "Extract the items.".into(),
        data: "{\"receipt\": \"<image>\"}".into(),
        schema: Some(shape),
        ..Request::default()
    }
}

fn items_shape() -> Shape {
    Shape::record(
        "Receipt",
        vec![(
            "items",
            Shape::list(Shape::record(
                "Item",
                vec![("name", Shape::Str, true), ("amount", Shape::Float, true)],
            )),
            true,
        )],
    )
}

fn run(
    entry: &ModelEntry,
    settings: &Settings,
    req: &Request,
) -> Result<Reply, kora_models::CallFailure> {
    call(entry, settings, req, None, None)
}

fn streamed(
    entry: &ModelEntry,
    settings: &Settings,
    req: &Request,
) -> (Result<Reply, kora_models::CallFailure>, String) {
    let mut shown = String::new();
    let mut sink = |p: &str| shown.push_str(p);
    let r = call(entry, settings, req, None, Some(&mut sink));
    (r, shown)
}

#[test]
fn plain_answer_openai_sends_no_key_and_parses() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Answer("hello there".into()));
    let r = run(&openai(&fake), &fast(3), &text_req()).unwrap();
    assert_eq!(r.content, "hello there");
    assert_eq!(r.attempts.len(), 1);
    assert_eq!(r.attempts[0].status, Some(200));
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].path, "/v1/chat/completions");
    assert_eq!(reqs[0].header("authorization"), None);
    assert_eq!(reqs[0].header("content-type"), Some("application/json"));
    assert_eq!(reqs[0].body["model"], "fake-model");
}

#[test]
fn rate_limited_then_answer_is_two_requests() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Status(429, Some("0".into())));
    fake.push(Behaviour::Answer("fine".into()));
    let r = run(&openai(&fake), &fast(3), &text_req()).unwrap();
    assert_eq!(r.content, "fine");
    assert_eq!(fake.count(), 2);
    let statuses: Vec<Option<u16>> = r.attempts.iter().map(|a| a.status).collect();
    assert_eq!(statuses, vec![Some(429), Some(200)]);
    assert!(r.attempts[0].error.as_deref().unwrap().contains("HTTP 429"));
}

#[test]
fn every_retryable_status_is_retried() {
    let fake = FakeProvider::start();
    for status in [408, 409, 500, 502, 503, 504] {
        fake.reset();
        fake.push(Behaviour::Status(status, None));
        fake.push(Behaviour::Answer("ok".into()));
        let r = run(&openai(&fake), &fast(3), &text_req());
        assert!(r.is_ok(), "{status}: {r:?}");
        assert_eq!(fake.count(), 2, "{status}");
    }
}

#[test]
fn client_errors_are_not_retried() {
    let fake = FakeProvider::start();
    for status in [400, 401, 404, 422] {
        fake.reset();
        fake.push(Behaviour::Status(status, None));
        let err = run(&openai(&fake), &fast(3), &text_req()).unwrap_err();
        assert_eq!(fake.count(), 1, "{status}");
        assert!(!err.retryable);
        assert_eq!(err.attempts, 1);
        assert_eq!(err.status, Some(status));
        let expected = format!(
            "HTTP {status} from {}/chat/completions",
            fake.openai_endpoint()
        );
        assert!(err.cause.starts_with(&expected), "{}", err.cause);
        assert!(
            err.cause.contains(&format!("fake status {status}")),
            "{}",
            err.cause
        );
    }
}

#[test]
fn max_retries_zero_disables_retrying() {
    let fake = FakeProvider::with_default(Behaviour::Status(503, None));
    let err = run(&openai(&fake), &fast(0), &text_req()).unwrap_err();
    assert_eq!(fake.count(), 1);
    assert!(err.retryable);
    assert_eq!(err.attempts, 1);
}

#[test]
fn exhausted_retries_carry_the_last_cause() {
    let fake = FakeProvider::with_default(Behaviour::Status(503, None));
    let err = run(&openai(&fake), &fast(3), &text_req()).unwrap_err();
    assert_eq!(fake.count(), 4);
    assert_eq!(err.attempts, 4);
    assert_eq!(err.attempt_log.len(), 4);
    let expected = format!(
        "HTTP 503 from {}/chat/completions after 4 attempts",
        fake.openai_endpoint()
    );
    assert!(err.cause.starts_with(&expected), "{}", err.cause);
}

#[test]
fn huge_retry_after_is_capped() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Status(429, Some("3600".into())));
    fake.push(Behaviour::Answer("ok".into()));
    let start = Instant::now();
    let r = run(&openai(&fake), &fast(3), &text_req());
    assert!(r.is_ok());
    assert_eq!(fake.count(), 2);
    // The cap is 50 ms; anything near an hour would mean it was ignored.
    assert!(start.elapsed() < Duration::from_secs(20));
}

#[test]
fn retry_after_is_honoured_up_to_the_cap() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Status(503, Some("1".into())));
    fake.push(Behaviour::Answer("ok".into()));
    let settings = Settings {
        retry_after_cap: Duration::from_secs(30),
        ..fast(3)
    };
    let start = Instant::now();
    run(&openai(&fake), &settings, &text_req()).unwrap();
    // The provider asked for a second; local backoff (≤ 5 ms) would have been far shorter.
    assert!(start.elapsed() >= Duration::from_secs(1));
}

#[test]
fn backoff_stops_at_the_deadline_instead_of_sleeping_past_it() {
    let fake = FakeProvider::with_default(Behaviour::Status(429, Some("20".into())));
    let settings = Settings {
        retry_after_cap: Duration::from_secs(30),
        ..fast(3)
    };
    let start = Instant::now();
    let deadline = Some(start + Duration::from_millis(500));
    let err = call(&openai(&fake), &settings, &text_req(), deadline, None).unwrap_err();
    assert_eq!(fake.count(), 1);
    assert!(err.deadline_reached);
    assert!(err.cause.contains("HTTP 429"), "{}", err.cause);
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_stall_past_the_timeout_fails_with_timed_out() {
    let fake = FakeProvider::with_default(Behaviour::Stall(Duration::from_secs(5)));
    let settings = Settings {
        timeout_secs: 0.3,
        ..fast(0)
    };
    let err = run(&openai(&fake), &settings, &text_req()).unwrap_err();
    assert!(
        err.cause.starts_with("timed out after 300ms"),
        "{}",
        err.cause
    );
    assert!(err.retryable);
    assert_eq!(fake.count(), 1);
}

#[test]
fn a_timeout_is_retried() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Stall(Duration::from_secs(5)));
    fake.push(Behaviour::Answer("late but fine".into()));
    let settings = Settings {
        timeout_secs: 0.3,
        ..fast(1)
    };
    let r = run(&openai(&fake), &settings, &text_req()).unwrap();
    assert_eq!(r.content, "late but fine");
    assert_eq!(fake.count(), 2);
}

#[test]
fn the_deadline_shortens_the_timeout() {
    let fake = FakeProvider::with_default(Behaviour::Stall(Duration::from_secs(10)));
    let settings = Settings {
        timeout_secs: 60.0,
        ..fast(3)
    };
    let start = Instant::now();
    let err = call(
        &openai(&fake),
        &settings,
        &text_req(),
        Some(start + Duration::from_millis(400)),
        None,
    )
    .unwrap_err();
    assert!(err.cause.contains("timed out"), "{}", err.cause);
    assert!(err.deadline_reached);
    assert!(start.elapsed() < Duration::from_secs(8));
}

#[test]
fn a_passed_deadline_sends_nothing() {
    let fake = FakeProvider::start();
    let err = call(
        &openai(&fake),
        &fast(3),
        &text_req(),
        Some(Instant::now()),
        None,
    )
    .unwrap_err();
    assert_eq!(err.attempts, 0);
    assert!(err.deadline_reached);
    assert_eq!(fake.count(), 0);
}

#[test]
fn connection_refused_is_retried_then_fails() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let entry = ModelEntry::new("m", format!("http://127.0.0.1:{port}/v1"));
    let err = run(&entry, &fast(2), &text_req()).unwrap_err();
    assert!(err.cause.contains("connection refused"), "{}", err.cause);
    assert!(err.cause.contains("after 3 attempts"), "{}", err.cause);
    assert_eq!(err.attempts, 3);
    assert!(err.retryable);
}

#[test]
fn garbage_instead_of_http_is_a_failure_not_a_panic() {
    let fake = FakeProvider::with_default(Behaviour::Malformed(
        b"\x00\xffnot http at all\r\n\r\n".to_vec(),
    ));
    let err = run(&openai(&fake), &fast(1), &text_req()).unwrap_err();
    assert_eq!(fake.count(), 2, "{}", err.cause);
}

#[test]
fn a_200_with_a_body_that_is_not_a_reply_is_not_retried() {
    let body = "{\"choices\": oops";
    let raw = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let fake = FakeProvider::with_default(Behaviour::Malformed(raw.into_bytes()));
    let err = run(&openai(&fake), &fast(3), &text_req()).unwrap_err();
    assert_eq!(fake.count(), 1);
    assert!(err.cause.contains("malformed reply"), "{}", err.cause);
}

#[test]
fn api_key_is_sent_as_bearer_and_never_echoed() {
    std::env::set_var("KORA_TEST_FAKE_KEY_1", "sk-test-very-secret");
    let fake = FakeProvider::start();
    fake.push(Behaviour::Answer("ok".into()));
    fake.push(Behaviour::Status(401, None));
    let entry = ModelEntry {
        api_key_env: Some("KORA_TEST_FAKE_KEY_1".into()),
        ..openai(&fake)
    };
    run(&entry, &fast(0), &text_req()).unwrap();
    assert_eq!(
        fake.requests()[0].header("authorization"),
        Some("Bearer sk-test-very-secret")
    );
    let err = run(&entry, &fast(0), &text_req()).unwrap_err();
    let all = format!("{err:?} {err}");
    assert!(!all.contains("sk-test"), "{all}");
}

#[test]
fn an_unset_key_variable_is_named_and_nothing_is_sent() {
    let fake = FakeProvider::start();
    let entry = ModelEntry {
        api_key_env: Some("KORA_TEST_DEFINITELY_UNSET_KEY".into()),
        ..openai(&fake)
    };
    let err = run(&entry, &fast(3), &text_req()).unwrap_err();
    assert!(
        err.cause.contains("KORA_TEST_DEFINITELY_UNSET_KEY"),
        "{}",
        err.cause
    );
    assert_eq!(err.attempts, 0);
    assert_eq!(fake.count(), 0);
}

#[test]
fn stream_hands_over_pieces_and_usage() {
    let fake = FakeProvider::start();
    let opts = StreamOpts {
        keep_alives: true,
        role_delta: true,
        usage: Some((21, 4)),
        ..StreamOpts::default()
    };
    fake.push(Behaviour::Stream(
        vec!["Hel".into(), "lo".into(), "!".into()],
        opts,
    ));
    let req = Request {
        stream: true,
        ..text_req()
    };
    let (r, shown) = streamed(&openai(&fake), &fast(3), &req);
    let r = r.unwrap();
    assert_eq!(shown, "Hello!");
    assert_eq!(r.content, "Hello!");
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 21,
            output_tokens: 4
        }
    );
    let body = &fake.requests()[0].body;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
}

#[test]
fn sse_split_at_arbitrary_bytes_reassembles() {
    let pieces: Vec<String> = ["héllo ", "wörld ", "🌍🌏 ", "ça va"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for split in [1, 2, 3, 5, 7] {
        let fake = FakeProvider::start();
        let opts = StreamOpts {
            keep_alives: true,
            role_delta: true,
            usage: Some((1, 2)),
            split: Some(split),
            ..StreamOpts::default()
        };
        fake.push(Behaviour::Stream(pieces.clone(), opts));
        let req = Request {
            stream: true,
            ..text_req()
        };
        let (r, shown) = streamed(&openai(&fake), &fast(0), &req);
        let r = r.unwrap_or_else(|e| panic!("split {split}: {e}"));
        assert_eq!(shown, "héllo wörld 🌍🌏 ça va", "split {split}");
        assert_eq!(r.usage.output_tokens, 2);
    }
}

#[test]
fn a_stream_that_showed_nothing_is_retried() {
    let fake = FakeProvider::start();
    // Only a keep-alive and a role-only delta, then the body ends without finishing.
    fake.push(Behaviour::Stream(
        vec![],
        StreamOpts {
            keep_alives: true,
            role_delta: true,
            no_done: true,
            ..StreamOpts::default()
        },
    ));
    // Nothing at all, then the connection drops.
    fake.push(Behaviour::StreamThenDrop(vec![]));
    fake.push(Behaviour::Stream(
        vec!["third time".into()],
        StreamOpts::default(),
    ));
    let req = Request {
        stream: true,
        ..text_req()
    };
    let (r, shown) = streamed(&openai(&fake), &fast(3), &req);
    assert_eq!(r.unwrap().content, "third time");
    assert_eq!(shown, "third time");
    assert_eq!(fake.count(), 3);
}

#[test]
fn a_stream_that_showed_a_piece_is_never_retried() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::StreamThenDrop(vec![
        "partial ".into(),
        "answ".into(),
    ]));
    fake.push(Behaviour::Answer("should not be asked".into()));
    let req = Request {
        stream: true,
        ..text_req()
    };
    let (r, shown) = streamed(&openai(&fake), &fast(3), &req);
    let err = r.unwrap_err();
    assert!(err.shown_output);
    assert_eq!(err.attempts, 1);
    assert_eq!(shown, "partial answ");
    assert_eq!(fake.count(), 1);
    assert!(err.cause.contains("not retried"), "{}", err.cause);
}

#[test]
fn a_stream_ending_without_done_after_output_fails_without_retry() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Stream(
        vec!["half".into()],
        StreamOpts {
            no_done: true,
            ..StreamOpts::default()
        },
    ));
    let req = Request {
        stream: true,
        ..text_req()
    };
    let (r, shown) = streamed(&openai(&fake), &fast(3), &req);
    let err = r.unwrap_err();
    assert!(err.shown_output);
    assert_eq!(shown, "half");
    assert!(
        err.cause.contains("ended before the answer was complete"),
        "{}",
        err.cause
    );
    assert_eq!(fake.count(), 1);
}

#[test]
fn a_stream_without_a_handler_shows_nothing_so_may_retry() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::StreamThenDrop(vec!["lost".into()]));
    fake.push(Behaviour::Stream(
        vec!["kept".into()],
        StreamOpts::default(),
    ));
    let req = Request {
        stream: true,
        ..text_req()
    };
    let r = call(&openai(&fake), &fast(3), &req, None, None).unwrap();
    assert_eq!(r.content, "kept");
    assert_eq!(fake.count(), 2);
}

#[test]
fn ollama_stream_split_and_usage() {
    let fake = FakeProvider::start();
    let opts = StreamOpts {
        keep_alives: true,
        role_delta: true,
        usage: Some((8, 3)),
        split: Some(4),
        ..StreamOpts::default()
    };
    fake.push(Behaviour::Stream(
        vec!["Grüß ".into(), "Gott 👋".into()],
        opts,
    ));
    let req = Request {
        stream: true,
        ..text_req()
    };
    let (r, shown) = streamed(&ollama(&fake), &fast(0), &req);
    let r = r.unwrap();
    assert_eq!(shown, "Grüß Gott 👋");
    assert_eq!(
        r.usage,
        Usage {
            input_tokens: 8,
            output_tokens: 3
        }
    );
    let rec = &fake.requests()[0];
    assert_eq!(rec.path, "/api/chat");
    assert_eq!(rec.body["stream"], true);
}

#[test]
fn ollama_plain_answer_and_stream_flag_off() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Answer("hi".into()));
    let r = run(&ollama(&fake), &fast(0), &text_req()).unwrap();
    assert_eq!(r.content, "hi");
    assert_eq!(fake.requests()[0].body["stream"], false);
}

#[test]
fn schema_mismatch_names_the_path() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Answer(
        r#"{"ok": {"items": [{"name": "tea", "amount": 3.5}, {"name": "cake", "amount": "4"}]}, "uncertain": null}"#.into(),
    ));
    let r = run(&openai(&fake), &fast(0), &typed_req(items_shape())).unwrap();
    let body = &fake.requests()[0].body;
    assert_eq!(
        body["response_format"]["json_schema"]["name"],
        "kora_result"
    );
    assert_eq!(body["response_format"]["json_schema"]["strict"], true);
    assert_eq!(
        decode_outcome(&r.content, &items_shape(), Structured::JsonSchema),
        Decoded::Mismatch("$.items[1].amount: expected number, found string".into())
    );
}

#[test]
fn typed_ok_and_uncertain_in_both_shapes() {
    for entry_of in [openai as fn(&FakeProvider) -> ModelEntry, ollama] {
        let fake = FakeProvider::start();
        let entry = entry_of(&fake);
        fake.push(Behaviour::Answer(
            r#"{"ok": {"items": [{"name": "tea", "amount": 3}]}}"#.into(),
        ));
        fake.push(Behaviour::Answer(
            r#"{"uncertain": "the receipt is blurred"}"#.into(),
        ));
        let r = run(&entry, &fast(0), &typed_req(items_shape())).unwrap();
        assert_eq!(
            decode_outcome(&r.content, &items_shape(), entry.structured),
            Decoded::Ok(json!({"items": [{"name": "tea", "amount": 3.0}]}))
        );
        let r = run(&entry, &fast(0), &typed_req(items_shape())).unwrap();
        assert_eq!(
            decode_outcome(&r.content, &items_shape(), entry.structured),
            Decoded::Uncertain("the receipt is blurred".into())
        );
        let sys = fake.requests()[0].body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(sys.contains("Choose uncertain rather than guess"), "{sys}");
    }
}

#[test]
fn tool_calls_in_both_shapes() {
    let tools = vec![ToolSpec {
        name: "lookup".into(),
        description: "Looks up a price.".into(),
        parameters: Shape::record("lookup", vec![("item", Shape::Str, true)]),
    }];
    for entry_of in [openai as fn(&FakeProvider) -> ModelEntry, ollama] {
        let fake = FakeProvider::start();
        let entry = entry_of(&fake);
        fake.push(Behaviour::ToolCalls(vec![
            ("lookup".into(), json!({"item": "tea"})),
            ("lookup".into(), json!({"item": "cake"})),
        ]));
        let req = Request {
            tools: tools.clone(),
            ..text_req()
        };
        let r = run(&entry, &fast(0), &req).unwrap();
        assert_eq!(r.tool_calls.len(), 2, "{:?}", entry.api);
        assert_eq!(r.tool_calls[0].name, "lookup");
        assert_eq!(r.tool_calls[0].arguments, json!({"item": "tea"}));
        assert_eq!(r.tool_calls[1].arguments, json!({"item": "cake"}));
        assert_ne!(r.tool_calls[0].id, r.tool_calls[1].id);
        let body = &fake.requests()[0].body;
        assert_eq!(body["tools"][0]["function"]["name"], "lookup");
    }
}

#[test]
fn images_in_both_shapes() {
    let png = vec![0x89, b'P', b'N', b'G', 0, 1, 2, 3];
    let req = Request {
        images: vec![ImageData {
            mime: "image/png".into(),
            bytes: png,
        }],
        ..typed_req(items_shape())
    };
    let fake = FakeProvider::start();
    run(&openai(&fake), &fast(0), &req).unwrap();
    let body = &fake.requests()[0].body;
    let parts = body["messages"][1]["content"].as_array().unwrap();
    assert!(parts[0]["text"].as_str().unwrap().contains("<image>"));
    assert_eq!(parts[1]["type"], "image_url");
    assert_eq!(
        parts[1]["image_url"]["url"],
        "data:image/png;base64,iVBORwABAgM="
    );

    let fake = FakeProvider::start();
    run(&ollama(&fake), &fast(0), &req).unwrap();
    let body = &fake.requests()[0].body;
    assert_eq!(body["messages"][1]["images"], json!(["iVBORwABAgM="]));
    assert!(body["format"]["anyOf"].is_array());
}

#[test]
fn usage_in_both_shapes() {
    for entry_of in [openai as fn(&FakeProvider) -> ModelEntry, ollama] {
        let fake = FakeProvider::start();
        fake.push(Behaviour::AnswerWithUsage("x".into(), 11, 7));
        let r = run(&entry_of(&fake), &fast(0), &text_req()).unwrap();
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 11,
                output_tokens: 7
            }
        );
        assert_eq!(r.attempts[0].usage.output_tokens, 7);
    }
}

#[test]
fn a_server_that_ignores_stream_true_still_answers() {
    let fake = FakeProvider::start();
    let body = r#"{"choices":[{"message":{"role":"assistant","content":"whole"}}]}"#;
    let raw = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    fake.push(Behaviour::Malformed(raw.into_bytes()));
    let req = Request {
        stream: true,
        ..text_req()
    };
    let (r, shown) = streamed(&openai(&fake), &fast(0), &req);
    assert_eq!(r.unwrap().content, "whole");
    assert_eq!(shown, "whole");
}

#[test]
fn a_stream_that_goes_quiet_after_a_piece_times_out_without_retry() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Stream(
        vec!["started".into()],
        StreamOpts {
            stall: Some(Duration::from_secs(5)),
            ..StreamOpts::default()
        },
    ));
    let settings = Settings {
        timeout_secs: 0.3,
        ..fast(3)
    };
    let req = Request {
        stream: true,
        ..text_req()
    };
    let (r, shown) = streamed(&openai(&fake), &settings, &req);
    let err = r.unwrap_err();
    assert!(err.cause.contains("timed out"), "{}", err.cause);
    assert!(err.shown_output);
    assert_eq!(shown, "started");
    assert_eq!(fake.count(), 1);
}

#[test]
fn a_stream_that_goes_quiet_before_any_text_is_retried() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Stream(
        vec![],
        StreamOpts {
            keep_alives: true,
            role_delta: true,
            stall: Some(Duration::from_secs(5)),
            ..StreamOpts::default()
        },
    ));
    fake.push(Behaviour::Stream(
        vec!["second".into()],
        StreamOpts::default(),
    ));
    let settings = Settings {
        timeout_secs: 0.3,
        ..fast(3)
    };
    let req = Request {
        stream: true,
        ..text_req()
    };
    let (r, shown) = streamed(&ollama(&fake), &settings, &req);
    assert_eq!(r.unwrap().content, "second");
    assert_eq!(shown, "second");
    assert_eq!(fake.count(), 2);
}

#[test]
fn an_https_endpoint_speaks_tls() {
    // The fake speaks plain HTTP, so the handshake fails: proof that TLS was attempted, and that
    // a failed handshake is a value rather than a panic.
    let fake = FakeProvider::start();
    let endpoint = fake.openai_endpoint().replace("http://", "https://");
    let entry = ModelEntry::new("m", endpoint);
    let err = run(&entry, &fast(0), &text_req()).unwrap_err();
    assert!(err.cause.contains("https://127.0.0.1"), "{}", err.cause);
    assert_eq!(fake.count(), 0);
    eprintln!("{}", err.cause);
}
