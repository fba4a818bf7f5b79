//! Fuzzing what a model provider sends back, through the real `kora` binary: whatever the
//! bytes, a run ends with an outcome or a clear error, never a panic or a hang.
//!
//! Each case starts from a well-formed answer in one of the shapes a server sends (a
//! whole JSON reply, an SSE or NDJSON stream, a raw HTTP response) and mutates it: bytes
//! flipped, inserted, cut, frames split mid-UTF-8, nesting deepened, numbers blown up.
//! Seeds are fixed, so a failure names the case that reproduces it.

mod support;

use std::path::Path;

use kora_testkit::{Behaviour, FakeProvider, StreamOpts};
use support::temp_dir;

/// Four calls of different expected types, plain and streamed; every ending is printed.
const PROGRAM: &str = r#"type Item:
    name: str
    qty: int
    tags: list[str]

def show(label: str, r: Result[str]) -> None:
    match r:
        case Ok(v):
            print(label, "ok", len(v))
        case Uncertain(why) | Failed(why) | Err(why):
            print(label, "not ok", len(why) > 0)
        case Exhausted(m):
            print(label, "exhausted", m)

def main() -> None:
    a: Result[Item] = analyze("x", "An item.")
    match a:
        case Ok(item):
            print("record ok", item.qty)
        case _:
            print("record not ok")
    b: Result[list[int]] = analyze("y", "Numbers.")
    match b:
        case Ok(xs):
            print("list ok", len(xs))
        case _:
            print("list not ok")
    c: Result["low" | "high"] = analyze("z", "Level.")
    match c:
        case Ok(level):
            print("literal ok", level)
        case _:
            print("literal not ok")
    pieces: list[str] = []
    d: Result[str] = analyze("w", "Say it.")
        on token(piece):
            pieces.append(piece)
    show("stream", d)

main()
"#;

const GOOD: [&str; 4] = [
    r#"{"ok": {"name": "bolt", "qty": 3, "tags": ["a", "é"]}}"#,
    r#"{"ok": [1, 2, 3]}"#,
    r#"{"ok": "low"}"#,
    "plain text answer",
];

fn mutate(rng: &mut fastrand::Rng, text: &str) -> Vec<u8> {
    let mut b = text.as_bytes().to_vec();
    for _ in 0..rng.usize(1..4) {
        match rng.u8(0..7) {
            0 if !b.is_empty() => {
                let i = rng.usize(0..b.len());
                b[i] = rng.u8(..);
            }
            1 => {
                let i = rng.usize(0..=b.len());
                let junk = [
                    b'{', b'}', b'[', b']', b'"', b'\\', b',', b':', 0xC3, 0xFF, b'\n',
                ];
                b.insert(i, junk[rng.usize(0..junk.len())]);
            }
            2 if !b.is_empty() => b.truncate(rng.usize(0..b.len())),
            3 => {
                let depth = rng.usize(1..400);
                let mut nested = "[".repeat(depth).into_bytes();
                nested.extend_from_slice(&b);
                b = nested;
            }
            4 => b = br#"{"ok": 1e999999}"#.to_vec(),
            5 => {
                b = br#"{"ok": {"name": "n", "qty": 99999999999999999999999, "tags": []}}"#.to_vec()
            }
            _ => b.extend_from_slice(b"\xE2\x82"),
        }
    }
    b
}

fn behaviour(rng: &mut fastrand::Rng, good: &str) -> Behaviour {
    let body = mutate(rng, good);
    let text = String::from_utf8_lossy(&body).into_owned();
    match rng.u8(0..4) {
        0 => Behaviour::Answer(text),
        1 => {
            let cut = rng.usize(0..=text.len());
            let cut = (0..=cut)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            Behaviour::Stream(
                vec![text[..cut].to_string(), text[cut..].to_string()],
                StreamOpts {
                    keep_alives: rng.bool(),
                    role_delta: rng.bool(),
                    usage: rng.bool().then(|| (rng.u64(0..u64::MAX), 5)),
                    split: rng.bool().then(|| rng.usize(1..7)),
                    no_done: rng.bool(),
                    stall: None,
                },
            )
        }
        2 => {
            let mut raw = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                body.len() + rng.usize(0..3)
            )
            .into_bytes();
            raw.extend_from_slice(&body);
            Behaviour::Malformed(raw)
        }
        _ => Behaviour::Malformed(body),
    }
}

fn setup(d: &Path, endpoint: &str, api: &str) {
    support::write_config(
        d,
        endpoint,
        Some(api),
        "max_retries = 0\ntimeout_secs = 2\n",
    );
    std::fs::write(d.join("main.ko"), PROGRAM).expect("program");
}

#[test]
fn mutated_provider_replies_end_in_outcomes_never_in_panics() {
    let fake = FakeProvider::with_default(Behaviour::Status(500, None));
    let (mut accepted, mut refused) = (0, 0);
    for (api, endpoint) in [("openai", fake.openai_endpoint()), ("ollama", fake.url())] {
        let d = temp_dir("kora-provider-fuzz", api);
        setup(&d, &endpoint, api);
        for seed in 0..40u64 {
            let mut rng = fastrand::Rng::with_seed(seed);
            fake.reset();
            for good in GOOD {
                fake.push(behaviour(&mut rng, good));
            }
            let out = support::kora_main(&d, &["run", "--record"]);
            let case = format!("api {api}, seed {seed}");
            assert!(
                out.code == 0 || out.code == 1,
                "{case}: exit {}\n{}",
                out.code,
                out.stderr
            );
            assert!(!out.stderr.contains("panicked"), "{case}: {}", out.stderr);
            if out.code == 0 {
                // Every call ended in a value the program matched on.
                assert_eq!(out.stdout.lines().count(), 4, "{case}: {}", out.stdout);
                for line in out.stdout.lines() {
                    if line.contains("not ok") {
                        refused += 1;
                    } else if line.contains(" ok") {
                        accepted += 1;
                    }
                }
            } else {
                assert!(out.stderr.contains("error"), "{case}: {}", out.stderr);
            }
        }
    }
    // The mutations must reach both endings, or the cases test nothing.
    assert!(
        accepted > 0 && refused > 0,
        "{accepted} calls accepted, {refused} refused"
    );
}
