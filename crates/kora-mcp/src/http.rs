//! The Streamable HTTP transport: each message is a POST to the server's URL; the answer comes
//! back as JSON or as an event stream that may carry notifications before it.
//!
//! Each POST runs on a thread of its own with the request's deadline as its whole timeout, and
//! what it reads is routed exactly as a stdio server's output is, so the caller waits the same
//! way. The session id the server gives at `initialize` (`Mcp-Session-Id`) and the negotiated
//! version (`MCP-Protocol-Version`) ride on every later request. A failure of one request
//! (a refused connection, an error status) is told to that request alone; a `404` for a
//! session means the server forgot it, which ends the connection (the next call starts anew).

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value as Json;

use crate::config::expand;
use crate::jsonrpc::clip;
use crate::router::Router;
use crate::sse::SseReader;

pub struct HttpLink {
    name: String,
    url: String,
    headers: Vec<(String, String)>,
    shared: Arc<Shared>,
    agent: ureq::Agent,
}

#[derive(Default)]
struct Shared {
    session_id: Mutex<Option<String>>,
    protocol: Mutex<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl HttpLink {
    pub fn new(
        name: &str,
        url: &str,
        headers: &BTreeMap<String, String>,
    ) -> Result<HttpLink, String> {
        let mut hs = Vec::new();
        for (k, v) in headers {
            hs.push((k.clone(), expand(v, &format!("[mcp.{name}].headers.{k}"))?));
        }
        let loopback =
            url.contains("://127.") || url.contains("://localhost") || url.contains("://[::1]");
        let mut b = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .user_agent(concat!("kora/", env!("CARGO_PKG_VERSION")));
        if loopback {
            b = b.proxy(None);
        }
        Ok(HttpLink {
            name: name.to_string(),
            url: url.to_string(),
            headers: hs,
            shared: Arc::new(Shared::default()),
            agent: ureq::Agent::new_with_config(b.build()),
        })
    }

    /// The version `initialize` settled on, sent as a header from then on.
    pub fn set_protocol(&self, v: &str) {
        *lock(&self.shared.protocol) = Some(v.to_string());
    }

    /// Posts one message; what comes back is routed to `router` from the posting thread.
    pub fn send(&self, msg: Json, deadline: Instant, router: Arc<Router>) -> Result<(), String> {
        let id = msg.get("id").and_then(Json::as_u64);
        let agent = self.agent.clone();
        let url = self.url.clone();
        let name = self.name.clone();
        let mut headers = self.headers.clone();
        if let Some(s) = lock(&self.shared.session_id).clone() {
            headers.push(("mcp-session-id".into(), s));
        }
        if let Some(p) = lock(&self.shared.protocol).clone() {
            headers.push(("mcp-protocol-version".into(), p));
        }
        let shared = self.shared.clone();
        std::thread::Builder::new()
            .name(format!("mcp-{name}-post"))
            .spawn(move || {
                if let Err(why) = post(&agent, &url, &headers, &msg, id, deadline, &router, &shared)
                {
                    match (id, why) {
                        (_, Failure::SessionGone(w)) => router.close(&w),
                        (Some(id), Failure::Request(w)) => router.fail(id, &w),
                        (None, Failure::Request(_)) => {}
                    }
                }
            })
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        Ok(())
    }

    /// Ends the server's session, as the protocol asks of a client that is done.
    pub fn stop(&self) {
        let Some(s) = lock(&self.shared.session_id).take() else {
            return;
        };
        let _ = self
            .agent
            .delete(&self.url)
            .config()
            .timeout_global(Some(Duration::from_secs(2)))
            .build()
            .header("mcp-session-id", &s)
            .call();
    }
}

enum Failure {
    Request(String),
    SessionGone(String),
}

#[allow(clippy::too_many_arguments)]
fn post(
    agent: &ureq::Agent,
    url: &str,
    headers: &[(String, String)],
    msg: &Json,
    id: Option<u64>,
    deadline: Instant,
    router: &Router,
    shared: &Shared,
) -> Result<(), Failure> {
    let left = deadline
        .checked_duration_since(Instant::now())
        .unwrap_or(Duration::from_millis(1));
    let mut rb = agent
        .post(url)
        .config()
        .timeout_global(Some(left))
        .build()
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    let had_session = headers.iter().any(|(k, _)| k == "mcp-session-id");
    for (k, v) in headers {
        rb = rb.header(k.as_str(), v.as_str());
    }
    let resp = rb
        .send(msg.to_string().as_bytes())
        .map_err(|e| Failure::Request(format!("cannot reach {url}: {e}")))?;
    let status = resp.status().as_u16();
    if let Some(s) = resp
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        *lock(&shared.session_id) = Some(s.to_string());
    }
    if status == 404 && had_session {
        return Err(Failure::SessionGone(format!(
            "the MCP server at {url} no longer knows this session (404)"
        )));
    }
    if status == 202 || status == 204 {
        return Ok(());
    }
    let is_sse = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|c| c.starts_with("text/event-stream"));
    let mut reader = resp.into_body().into_with_config().limit(64 << 20).reader();
    if !(200..300).contains(&status) {
        let mut text = String::new();
        let _ = reader.read_to_string(&mut text);
        return Err(Failure::Request(format!(
            "the MCP server at {url} answered HTTP {status}: {}",
            clip(text.trim())
        )));
    }
    let deliver = |text: &str| -> Result<(), Failure> {
        let j: Json = serde_json::from_str(text).map_err(|_| {
            Failure::Request(format!(
                "protocol error: {url} sent something that is not JSON: {:?}",
                clip(text)
            ))
        })?;
        let items = match j {
            Json::Array(xs) => xs,
            one => vec![one],
        };
        for m in items {
            // A server request over this response cannot be answered on it: ignored.
            router.route(&m, &|_| {}).map_err(Failure::Request)?;
        }
        Ok(())
    };
    if !is_sse {
        let mut text = String::new();
        reader
            .read_to_string(&mut text)
            .map_err(|e| Failure::Request(format!("reading the answer of {url} failed: {e}")))?;
        if text.trim().is_empty() {
            return Ok(());
        }
        return deliver(&text);
    }
    let mut sse = SseReader::default();
    let mut buf = [0u8; 8192];
    loop {
        let n = reader.read(&mut buf).map_err(|e| {
            Failure::Request(format!("reading the event stream of {url} failed: {e}"))
        })?;
        let events = if n == 0 {
            sse.finish()
        } else {
            sse.feed(&buf[..n])
        };
        for e in events {
            deliver(&e)?;
        }
        // The answer came: a stream the server keeps open has nothing more for this request.
        if n == 0 || id.is_some_and(|id| !router.is_waiting(id)) {
            return Ok(());
        }
    }
}
