//! What the fake says on the wire for each behaviour, in OpenAI's or Ollama's shape.

use std::io;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::http::{end_chunked, start_chunked, write_chunk, write_plain};
use crate::{Behaviour, StreamOpts};

/// What the request asked for, as far as the answer's shape depends on it.
pub struct Asked<'a> {
    pub ollama: bool,
    pub wants_stream: bool,
    /// The `Authorization` header as sent (empty when none was).
    pub auth: &'a str,
}

pub fn respond(
    conn: &mut TcpStream,
    behaviour: &Behaviour,
    asked: &Asked,
    stop: &AtomicBool,
) -> io::Result<()> {
    let ollama = asked.ollama;
    let plain = Finish::default();
    match behaviour {
        Behaviour::Answer(text) => answer(conn, text, (0, 0), asked, &plain, stop),
        Behaviour::AnswerWithUsage(text, i, o) => answer(conn, text, (*i, *o), asked, &plain, stop),
        Behaviour::Truncated(text) => {
            let cut = Finish {
                reason: "length",
                refusal: false,
            };
            answer(conn, text, (0, 0), asked, &cut, stop)
        }
        Behaviour::Refusal(text) => {
            let refusal = Finish {
                reason: "stop",
                refusal: true,
            };
            answer(conn, text, (0, 0), asked, &refusal, stop)
        }
        Behaviour::EchoAuth(200) => {
            let text = format!("You sent Authorization: {}", asked.auth);
            answer(conn, &text, (0, 0), asked, &plain, stop)
        }
        Behaviour::EchoAuth(code) => {
            let body = json!({"error": {"message": format!("Incorrect API key provided: {}", asked.auth), "type": "invalid_request_error"}});
            write_plain(
                conn,
                *code,
                "application/json",
                &[],
                body.to_string().as_bytes(),
            )
        }
        Behaviour::Trickle { every, lasting } => trickle(conn, *every, *lasting, ollama, stop),
        Behaviour::After(wait, then) => {
            let until = Instant::now() + *wait;
            while Instant::now() < until && !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            respond(conn, then, asked, stop)
        }
        Behaviour::Stream(pieces, opts) => stream(conn, pieces, opts, ollama, false, stop),
        Behaviour::StreamThenDrop(pieces) => {
            stream(conn, pieces, &StreamOpts::default(), ollama, true, stop)
        }
        Behaviour::Status(code, retry_after) => {
            let body = json!({"error": {"message": format!("fake status {code}"), "type": "fake"}});
            let extra: Vec<(&str, String)> = retry_after
                .iter()
                .map(|v| ("Retry-After", v.clone()))
                .collect();
            write_plain(
                conn,
                *code,
                "application/json",
                &extra,
                body.to_string().as_bytes(),
            )
        }
        Behaviour::Stall(d) => {
            let until = Instant::now() + *d;
            while Instant::now() < until && !stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
            conn.shutdown(Shutdown::Both)
        }
        Behaviour::Malformed(bytes) => {
            io::Write::write_all(conn, bytes)?;
            io::Write::flush(conn)?;
            conn.shutdown(Shutdown::Both)
        }
        Behaviour::ToolCalls(calls) => {
            let body = if ollama {
                let calls: Vec<Value> = calls
                    .iter()
                    .map(|(name, args)| json!({"function": {"name": name, "arguments": args}}))
                    .collect();
                json!({
                    "model": "fake",
                    "message": {"role": "assistant", "content": "", "tool_calls": calls},
                    "done": true,
                    "prompt_eval_count": 0,
                    "eval_count": 0,
                })
            } else {
                let calls: Vec<Value> = calls
                    .iter()
                    .enumerate()
                    .map(|(i, (name, args))| {
                        json!({
                            "id": format!("call_{i}"),
                            "type": "function",
                            "function": {"name": name, "arguments": args.to_string()},
                        })
                    })
                    .collect();
                json!({
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "choices": [{
                        "index": 0,
                        "message": {"role": "assistant", "content": null, "tool_calls": calls},
                        "finish_reason": "tool_calls",
                    }],
                    "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
                })
            };
            write_plain(
                conn,
                200,
                "application/json",
                &[],
                body.to_string().as_bytes(),
            )
        }
    }
}

/// How an answer ends: its finish reason, and whether its text is a refusal.
struct Finish {
    reason: &'static str,
    refusal: bool,
}

impl Default for Finish {
    fn default() -> Self {
        Finish {
            reason: "stop",
            refusal: false,
        }
    }
}

fn answer(
    conn: &mut TcpStream,
    text: &str,
    usage: (u64, u64),
    asked: &Asked,
    finish: &Finish,
    stop: &AtomicBool,
) -> io::Result<()> {
    let ollama = asked.ollama;
    if asked.wants_stream {
        let opts = StreamOpts {
            usage: Some(usage),
            ..StreamOpts::default()
        };
        return stream_as(
            conn,
            &[text.to_string()],
            &opts,
            ollama,
            false,
            finish,
            stop,
        );
    }
    let body = if ollama {
        json!({
            "model": "fake",
            "message": {"role": "assistant", "content": text},
            "done": true,
            "done_reason": finish.reason,
            "prompt_eval_count": usage.0,
            "eval_count": usage.1,
        })
    } else {
        let message = if finish.refusal {
            json!({"role": "assistant", "content": null, "refusal": text})
        } else {
            json!({"role": "assistant", "content": text})
        };
        json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": "fake",
            "choices": [{
                "index": 0,
                "message": message,
                "finish_reason": finish.reason,
            }],
            "usage": {
                "prompt_tokens": usage.0,
                "completion_tokens": usage.1,
                "total_tokens": usage.0 + usage.1,
            },
        })
    };
    write_plain(
        conn,
        200,
        "application/json",
        &[],
        body.to_string().as_bytes(),
    )
}

/// A stream that sends an empty piece every `every` and never finishes, for `lasting`.
fn trickle(
    conn: &mut TcpStream,
    every: Duration,
    lasting: Duration,
    ollama: bool,
    stop: &AtomicBool,
) -> io::Result<()> {
    let content_type = if ollama {
        "application/x-ndjson"
    } else {
        "text/event-stream"
    };
    start_chunked(conn, content_type)?;
    let frame = if ollama {
        format!(
            "{}\n",
            json!({"model": "fake", "message": {"role": "assistant", "content": ""}, "done": false})
        )
    } else {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-fake", "model": "fake", "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": null}]})
        )
    };
    let until = Instant::now() + lasting;
    while Instant::now() < until && !stop.load(Ordering::SeqCst) {
        write_chunk(conn, frame.as_bytes())?;
        let next = Instant::now() + every;
        while Instant::now() < next && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    conn.shutdown(Shutdown::Both)
}

/// The frames of a stream, each a complete SSE event or NDJSON line: those carrying the
/// role delta and the pieces, then those that finish it (empty when it is cut short).
fn frames(
    pieces: &[String],
    opts: &StreamOpts,
    ollama: bool,
    drop: bool,
    finish: &Finish,
) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let keep_alive: &[u8] = if ollama { b"\n" } else { b": keep-alive\n\n" };
    let sse = |v: Value| format!("data: {v}\n\n").into_bytes();
    let line = |v: Value| format!("{v}\n").into_bytes();
    let mut out = Vec::new();
    let push = |out: &mut Vec<Vec<u8>>, frame: Vec<u8>| {
        if opts.keep_alives {
            out.push(keep_alive.to_vec());
        }
        out.push(frame);
    };
    if opts.role_delta {
        let f = if ollama {
            line(
                json!({"model": "fake", "message": {"role": "assistant", "content": ""}, "done": false}),
            )
        } else {
            sse(
                json!({"id": "chatcmpl-fake", "model": "fake", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}),
            )
        };
        push(&mut out, f);
    }
    for p in pieces {
        let f = if ollama {
            line(
                json!({"model": "fake", "message": {"role": "assistant", "content": p}, "done": false}),
            )
        } else {
            let key = if finish.refusal { "refusal" } else { "content" };
            sse(
                json!({"id": "chatcmpl-fake", "model": "fake", "choices": [{"index": 0, "delta": {key: p}, "finish_reason": null}]}),
            )
        };
        push(&mut out, f);
    }
    let head = std::mem::take(&mut out);
    if drop || opts.no_done {
        return (head, out);
    }
    let (i, o) = opts.usage.unwrap_or((0, 0));
    if ollama {
        push(
            &mut out,
            line(json!({
                "model": "fake",
                "message": {"role": "assistant", "content": ""},
                "done": true,
                "done_reason": finish.reason,
                "prompt_eval_count": i,
                "eval_count": o,
            })),
        );
    } else {
        push(
            &mut out,
            sse(
                json!({"id": "chatcmpl-fake", "model": "fake", "choices": [{"index": 0, "delta": {}, "finish_reason": finish.reason}]}),
            ),
        );
        if opts.usage.is_some() {
            push(
                &mut out,
                sse(
                    json!({"choices": [], "usage": {"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o}}),
                ),
            );
        }
        push(&mut out, b"data: [DONE]\n\n".to_vec());
    }
    (head, out)
}

fn write_frames(conn: &mut TcpStream, frames: &[Vec<u8>], split: Option<usize>) -> io::Result<()> {
    match split {
        Some(n) if n > 0 => {
            let all: Vec<u8> = frames.concat();
            for chunk in all.chunks(n) {
                write_chunk(conn, chunk)?;
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        _ => {
            for f in frames {
                write_chunk(conn, f)?;
            }
        }
    }
    Ok(())
}

fn stream(
    conn: &mut TcpStream,
    pieces: &[String],
    opts: &StreamOpts,
    ollama: bool,
    drop: bool,
    stop: &AtomicBool,
) -> io::Result<()> {
    stream_as(conn, pieces, opts, ollama, drop, &Finish::default(), stop)
}

fn stream_as(
    conn: &mut TcpStream,
    pieces: &[String],
    opts: &StreamOpts,
    ollama: bool,
    drop: bool,
    finish: &Finish,
    stop: &AtomicBool,
) -> io::Result<()> {
    let content_type = if ollama {
        "application/x-ndjson"
    } else {
        "text/event-stream"
    };
    start_chunked(conn, content_type)?;
    let (head, tail) = frames(pieces, opts, ollama, drop, finish);
    write_frames(conn, &head, opts.split)?;
    if let Some(d) = opts.stall {
        let until = Instant::now() + d;
        while Instant::now() < until && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    write_frames(conn, &tail, opts.split)?;
    if drop {
        // Let the pieces arrive, then cut the body short: no terminating chunk.
        std::thread::sleep(Duration::from_millis(20));
        return conn.shutdown(Shutdown::Both);
    }
    end_chunked(conn)
}
