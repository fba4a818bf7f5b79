//! Dev-only test helpers for Kora: `FakeProvider`, a scripted loopback model provider speaking OpenAI's and Ollama's chat shapes, and the random source edits of the property tests (`edits`).
//!
//! It records every request whole (path, headers, raw body), so it also stands in for an
//! OTLP collector: point an exporter at `fake.url()` and decode `raw_body`.
//!
//! ```no_run
//! use kora_testkit::{Behaviour, FakeProvider};
//! let fake = FakeProvider::start();
//! fake.push(Behaviour::Status(429, Some("0".into())));
//! fake.push(Behaviour::Answer(r#"{"ok": 1}"#.into()));
//! // point an OpenAI-shaped entry at fake.openai_endpoint(), an Ollama one at fake.url()
//! assert_eq!(fake.requests().len(), 0);
//! ```

pub mod edits;
pub mod http;
mod wire;

use std::collections::VecDeque;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::Value;

/// What the fake does with one request.
#[derive(Clone, Debug, PartialEq)]
pub enum Behaviour {
    /// Answers with this text as the model's content (JSON or prose). A streaming request gets
    /// it as a one-piece stream.
    Answer(String),
    /// As `Answer`, reporting `(input_tokens, output_tokens)`.
    AnswerWithUsage(String, u64, u64),
    /// Streams these pieces (SSE for OpenAI, NDJSON for Ollama), however the request asked.
    Stream(Vec<String>, StreamOpts),
    /// Answers with this status and an error body; the second field is a `Retry-After` value.
    Status(u16, Option<String>),
    /// Reads the request and says nothing for this long, then closes.
    Stall(Duration),
    /// Writes these raw bytes as the whole response, then closes.
    Malformed(Vec<u8>),
    /// Answers with tool calls `(name, arguments)` instead of content.
    ToolCalls(Vec<(String, Value)>),
    /// Starts a stream, sends these pieces, then drops the connection mid-body.
    StreamThenDrop(Vec<String>),
    /// The model declines: OpenAI's `refusal` field with this text and no content (a
    /// streaming request gets it as `refusal` deltas). Ollama has no such field: it answers
    /// the text as content.
    Refusal(String),
    /// Answers this text cut off at the token limit: `finish_reason: "length"` (Ollama:
    /// `done_reason: "length"`), streamed when the request asks for a stream.
    Truncated(String),
    /// Starts a stream and sends a frame with an empty piece every `every`, for `lasting`,
    /// never finishing it: a provider that keeps a call alive without answering.
    Trickle { every: Duration, lasting: Duration },
    /// Quotes the request's `Authorization` header back, as providers' 401s and proxies
    /// do: with a status other than 200 in the error message, with 200 as the answer.
    EchoAuth(u16),
    /// Waits this long after reading the request, then behaves as the inner behaviour.
    After(Duration, Box<Behaviour>),
}

/// How a `Stream` behaviour is framed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StreamOpts {
    /// A keep-alive (SSE comment / NDJSON blank line) before every frame.
    pub keep_alives: bool,
    /// A role-only delta first (no visible text).
    pub role_delta: bool,
    /// A usage frame `(input_tokens, output_tokens)` at the end.
    pub usage: Option<(u64, u64)>,
    /// Writes the body in chunks of this many bytes (splitting frames and UTF-8 sequences).
    pub split: Option<usize>,
    /// Ends the body without the terminating frame (`[DONE]` / `"done": true`).
    pub no_done: bool,
    /// Goes quiet for this long after the pieces, before finishing.
    pub stall: Option<Duration>,
}

/// One request the fake received.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Header names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`Null` when it was not JSON).
    pub body: Value,
    pub raw_body: Vec<u8>,
}

impl Recorded {
    /// The chat messages the request carried (both wire formats use `messages`).
    pub fn messages(&self) -> Vec<Value> {
        self.body
            .get("messages")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }

    /// The tool results the request carried back to the model, each parsed from its
    /// envelope text (`{"tool": name, "untrusted_result": ...}`), in order.
    pub fn tool_results(&self) -> Vec<Value> {
        self.messages()
            .iter()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("tool"))
            .map(|m| {
                let text = m.get("content").and_then(Value::as_str).unwrap_or("");
                serde_json::from_str(text).unwrap_or(Value::Null)
            })
            .collect()
    }

    /// The names of the tools the request offered.
    pub fn tool_names(&self) -> Vec<String> {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .map(|ts| {
                ts.iter()
                    .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }
}

struct State {
    /// Behaviours for requests whose body contains a text, checked before the queue.
    routes: Mutex<Vec<(String, Behaviour)>>,
    queue: Mutex<VecDeque<Behaviour>>,
    default: Mutex<Behaviour>,
    requests: Mutex<Vec<Recorded>>,
    stop: AtomicBool,
}

/// Locks ignoring poison: a panicking test thread must not wedge the fake for the others.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A loopback HTTP/1.1 model provider on `127.0.0.1:0`, scripted per request. Stops on drop.
pub struct FakeProvider {
    addr: SocketAddr,
    state: Arc<State>,
    acceptor: Option<JoinHandle<()>>,
}

impl FakeProvider {
    /// Starts a fake whose default behaviour is `Answer("ok")`.
    pub fn start() -> FakeProvider {
        FakeProvider::with_default(Behaviour::Answer("ok".into()))
    }

    /// Starts a fake that falls back to `default` whenever its queue is empty.
    pub fn with_default(default: Behaviour) -> FakeProvider {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(State {
            routes: Mutex::new(Vec::new()),
            queue: Mutex::new(VecDeque::new()),
            default: Mutex::new(default),
            requests: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
        });
        let st = Arc::clone(&state);
        let acceptor = std::thread::Builder::new()
            .name("fake-provider".into())
            .spawn(move || accept_loop(listener, st))
            .expect("spawn the fake provider");
        FakeProvider {
            addr,
            state,
            acceptor: Some(acceptor),
        }
    }

    /// `http://127.0.0.1:PORT` — the endpoint of an Ollama-shaped entry.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1` — the endpoint of an OpenAI-shaped entry.
    pub fn openai_endpoint(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// Queues a behaviour for the next request not yet scripted.
    pub fn push(&self, b: Behaviour) {
        lock(&self.state.queue).push_back(b);
    }

    /// Every request whose raw body contains `needle` gets `b`, whatever the queue holds:
    /// for concurrent requests (a `parallel for`) whose order of arrival is not fixed.
    pub fn route(&self, needle: &str, b: Behaviour) {
        lock(&self.state.routes).push((needle.to_string(), b));
    }

    pub fn set_default(&self, b: Behaviour) {
        *lock(&self.state.default) = b;
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.state.requests).clone()
    }

    /// How many requests arrived.
    pub fn count(&self) -> usize {
        lock(&self.state.requests).len()
    }

    /// Forgets the queue and the recorded requests.
    pub fn reset(&self) {
        lock(&self.state.queue).clear();
        lock(&self.state.requests).clear();
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(h) = self.acceptor.take() {
            let _ = h.join();
        }
    }
}

fn accept_loop(listener: TcpListener, state: Arc<State>) {
    for conn in listener.incoming() {
        if state.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(conn) = conn else { continue };
        let st = Arc::clone(&state);
        let _ = std::thread::Builder::new()
            .name("fake-provider-conn".into())
            .spawn(move || serve(conn, &st));
    }
}

fn serve(mut conn: TcpStream, state: &State) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = conn.set_nodelay(true);
    let Some(recorded) = http::read_request(&mut conn) else {
        return;
    };
    let ollama = recorded.path.starts_with("/api/");
    let wants_stream = recorded.body.get("stream").and_then(Value::as_bool) == Some(true);
    let auth = recorded.header("authorization").unwrap_or("").to_string();
    let routed = lock(&state.routes)
        .iter()
        .find(|(needle, _)| String::from_utf8_lossy(&recorded.raw_body).contains(needle.as_str()))
        .map(|(_, b)| b.clone());
    lock(&state.requests).push(recorded);
    let behaviour = routed.unwrap_or_else(|| {
        lock(&state.queue)
            .pop_front()
            .unwrap_or_else(|| lock(&state.default).clone())
    });
    let req = wire::Asked {
        ollama,
        wants_stream,
        auth: &auth,
    };
    let _ = wire::respond(&mut conn, &behaviour, &req, &state.stop);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn exchange(fake: &FakeProvider, raw: &[u8]) -> String {
        let mut s = TcpStream::connect(fake.addr).unwrap();
        s.write_all(raw).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn records_content_length_and_chunked_requests() {
        let fake = FakeProvider::start();
        fake.push(Behaviour::Answer("one".into()));
        let body = r#"{"model":"m","stream":false}"#;
        let raw = format!(
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nX-Thing: A\r\n\r\n{body}",
            body.len()
        );
        let out = exchange(&fake, raw.as_bytes());
        assert!(out.starts_with("HTTP/1.1 200 OK"), "{out}");
        assert!(out.contains("\"content\":\"one\""), "{out}");

        let raw = "POST /api/chat HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n";
        let out = exchange(&fake, raw.as_bytes());
        assert!(out.contains("\"done\":true"), "{out}");

        let reqs = fake.requests();
        assert_eq!(reqs.len(), 2);
        assert_eq!(reqs[0].header("x-thing"), Some("A"));
        assert_eq!(reqs[0].body["model"], "m");
        assert_eq!(reqs[1].path, "/api/chat");
        assert_eq!(reqs[1].body, serde_json::json!({"a": 1}));
    }

    #[test]
    fn status_and_stream_shapes() {
        let fake = FakeProvider::with_default(Behaviour::Status(429, Some("7".into())));
        let out = exchange(
            &fake,
            b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
        );
        assert!(out.starts_with("HTTP/1.1 429 Too Many Requests"), "{out}");
        assert!(out.contains("Retry-After: 7"));

        fake.push(Behaviour::Stream(
            vec!["a".into()],
            StreamOpts {
                keep_alives: true,
                usage: Some((1, 2)),
                ..StreamOpts::default()
            },
        ));
        let out = exchange(
            &fake,
            b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
        );
        assert!(out.contains("Transfer-Encoding: chunked"));
        assert!(out.contains(": keep-alive"));
        assert!(out.contains("data: [DONE]"));
        assert!(out.ends_with("0\r\n\r\n"));
        assert_eq!(fake.count(), 2);
    }
}
