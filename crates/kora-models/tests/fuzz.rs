//! Property tests: decoders and parsers never panic on arbitrary input, splitting never changes what a stream says, and the transport never hangs on garbage.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kora_models::response::{extract_json, parse_ollama, parse_openai};
use kora_models::schema::conform;
use kora_models::{
    call, decode_outcome, Assembler, ModelEntry, NdjsonDecoder, Request, Settings, Shape,
    SseDecoder, StreamDecoder, StreamEvent, Structured,
};
use kora_testkit::{Behaviour, FakeProvider};
use proptest::prelude::*;
use serde_json::{json, Value};

fn run_decoder(
    d: &mut dyn StreamDecoder,
    bytes: &[u8],
    cuts: &[usize],
) -> Result<Vec<StreamEvent>, String> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.sort_unstable();
    points.push(bytes.len());
    for p in points {
        if p < start {
            continue;
        }
        out.extend(d.feed(&bytes[start..p]).map_err(|e| e.0)?);
        start = p;
    }
    out.extend(d.finish().map_err(|e| e.0)?);
    Ok(out)
}

fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Piece(p) => Some(p.as_str()),
            _ => None,
        })
        .collect()
}

/// Frames a well-formed OpenAI stream would contain.
fn sse_frame() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(": keep-alive\n\n".to_string()),
        Just(
            "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\"}}]}\n\n"
                .to_string()
        ),
        "\\PC{0,12}".prop_map(|s| format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {"content": s}}]})
        )),
        (0u64..1000, 0u64..1000).prop_map(|(a, b)| format!(
            "data: {}\r\n\r\n",
            json!({"choices": [], "usage": {"prompt_tokens": a, "completion_tokens": b}})
        )),
    ]
}

fn ndjson_frame() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("\n".to_string()),
        "\\PC{0,12}".prop_map(|s| format!(
            "{}\n",
            json!({"message": {"role": "assistant", "content": s}, "done": false})
        )),
    ]
}

fn shape() -> impl Strategy<Value = Shape> {
    let leaf = prop_oneof![
        Just(Shape::Str),
        Just(Shape::Int),
        Just(Shape::Float),
        Just(Shape::Bool),
        Just(Shape::Null),
        Just(Shape::Any),
        Just(Shape::Literal(vec!["a".into(), "b".into()])),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(Shape::list),
            inner.clone().prop_map(Shape::dict),
            inner.clone().prop_map(Shape::optional),
            prop::collection::vec(inner.clone(), 0..3).prop_map(Shape::Tuple),
            prop::collection::vec(inner.clone(), 1..3).prop_map(Shape::Union),
            prop::collection::vec(("[a-c]", inner, any::<bool>()), 0..3).prop_map(|fs| {
                Shape::record(
                    "R",
                    fs.iter()
                        .map(|(n, s, r)| (n.as_str(), s.clone(), *r))
                        .collect(),
                )
            }),
        ]
    })
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        "[a-c]{0,3}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-c]", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn decoders_never_panic_on_random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512), cuts in prop::collection::vec(any::<usize>(), 0..8)) {
        let _ = run_decoder(&mut SseDecoder::new(), &bytes, &cuts);
        let _ = run_decoder(&mut NdjsonDecoder::new(), &bytes, &cuts);
    }

    #[test]
    fn decoders_never_panic_on_framed_garbage(lines in prop::collection::vec("(data: |:|event: |)\\PC{0,40}", 0..10), cuts in prop::collection::vec(any::<usize>(), 0..8)) {
        let text = lines.join("\n");
        let _ = run_decoder(&mut SseDecoder::new(), text.as_bytes(), &cuts);
        let _ = run_decoder(&mut NdjsonDecoder::new(), text.as_bytes(), &cuts);
    }

    #[test]
    fn sse_splitting_never_changes_the_text(frames in prop::collection::vec(sse_frame(), 0..12), cuts in prop::collection::vec(any::<usize>(), 0..12)) {
        let body = format!("{}data: [DONE]\n\n", frames.concat());
        let whole = run_decoder(&mut SseDecoder::new(), body.as_bytes(), &[]).unwrap();
        let split = run_decoder(&mut SseDecoder::new(), body.as_bytes(), &cuts).unwrap();
        prop_assert_eq!(&whole, &split);
        prop_assert_eq!(whole.last(), Some(&StreamEvent::Done));
        let mut a = Assembler::new();
        split.iter().for_each(|e| a.push(e));
        prop_assert_eq!(a.finish().content, text_of(&whole));
    }

    #[test]
    fn ndjson_splitting_never_changes_the_text(frames in prop::collection::vec(ndjson_frame(), 0..12), cuts in prop::collection::vec(any::<usize>(), 0..12)) {
        let body = format!("{}{}\n", frames.concat(), json!({"done": true, "eval_count": 3}));
        let whole = run_decoder(&mut NdjsonDecoder::new(), body.as_bytes(), &[]).unwrap();
        let split = run_decoder(&mut NdjsonDecoder::new(), body.as_bytes(), &cuts).unwrap();
        prop_assert_eq!(&whole, &split);
        prop_assert_eq!(whole.last(), Some(&StreamEvent::Done));
    }

    #[test]
    fn reply_parsers_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse_openai(&bytes);
        let _ = parse_ollama(&bytes);
    }

    #[test]
    fn reply_parsers_never_panic_on_json(v in json_value()) {
        let body = v.to_string();
        let _ = parse_openai(body.as_bytes());
        let _ = parse_ollama(body.as_bytes());
        let wrapped = json!({"choices": [{"message": v.clone()}], "message": v});
        let _ = parse_openai(wrapped.to_string().as_bytes());
        let _ = parse_ollama(wrapped.to_string().as_bytes());
    }

    #[test]
    fn decode_and_validate_never_panic(s in shape(), v in json_value(), text in "\\PC{0,80}") {
        let _ = conform(&s, v.clone());
        let env = json!({"ok": v}).to_string();
        for mode in [Structured::JsonSchema, Structured::JsonObject, Structured::Prompt] {
            let _ = decode_outcome(&env, &s, mode);
            let _ = decode_outcome(&text, &s, mode);
        }
        let _ = extract_json(&text);
        let _ = kora_models::json_schema(&s);
        let _ = kora_models::envelope_schema(&s);
    }

    #[test]
    fn a_mismatch_always_names_a_path(s in shape(), v in json_value()) {
        if let Err(msg) = conform(&s, v) {
            prop_assert!(msg.starts_with('$'), "{}", msg);
        }
    }
}

fn shared_fake() -> &'static FakeProvider {
    static FAKE: OnceLock<FakeProvider> = OnceLock::new();
    FAKE.get_or_init(FakeProvider::start)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Whatever bytes come back, the call returns (bounded by its timeout) without panicking.
    #[test]
    fn transport_never_hangs_on_garbage(bytes in prop::collection::vec(any::<u8>(), 0..200), stream in any::<bool>(), header in any::<bool>()) {
        let fake = shared_fake();
        let payload = if header {
            let mut b = format!("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {}\r\n\r\n", bytes.len()).into_bytes();
            b.extend_from_slice(&bytes);
            b
        } else {
            bytes
        };
        fake.push(Behaviour::Malformed(payload));
        let entry = ModelEntry::new("m", fake.openai_endpoint());
        let settings = Settings { timeout_secs: 1.0, max_retries: 0, ..Settings::default() };
        let req = Request { model: "m".into(), prompt: "p".into(), stream, ..Request::default() };
        let start = Instant::now();
        let mut sink = |_: &str| {};
        let _ = call(&entry, &settings, &req, None, Some(&mut sink));
        prop_assert!(start.elapsed() < Duration::from_secs(5));
    }
}
