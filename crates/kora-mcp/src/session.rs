//! One connection to a server, from its `initialize` handshake to its end: requests with a
//! deadline each, `notifications/cancelled` for one that ran out, and the tools it listed.
//!
//! Notifications that come before a reply (real servers announce `tools/list_changed` before
//! they answer `initialize`) are routed as notifications, never taken for the reply: replies
//! are matched by id only.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::config::{ServerConfig, Transport};
use crate::http::HttpLink;
use crate::jsonrpc::{notification, request};
use crate::router::{Heard, Router};
use crate::stdio::StdioServer;
use crate::PROTOCOL_VERSIONS;
use kora_runtime::external::ToolInfo;

enum Link {
    Stdio(StdioServer),
    Http(HttpLink),
}

/// Why a request got no result.
#[derive(Debug, PartialEq)]
pub enum Fail {
    /// No reply by the deadline (the request was cancelled; a late reply will be dropped).
    Timeout(Duration),
    /// The connection ended, or broke the protocol, before the reply.
    Closed(String),
    /// The server answered with a JSON-RPC error.
    Rpc(i64, String),
}

pub struct Session {
    name: String,
    link: Link,
    router: Arc<Router>,
    /// The protocol version both sides settled on.
    pub protocol: String,
    /// How long starting and the handshake took.
    pub handshake: Duration,
    /// The tools listed on this connection, until the server says they changed.
    pub tools: Mutex<Option<Vec<ToolInfo>>>,
}

impl Session {
    /// Starts (or connects to) the server and shakes hands, all by `deadline`.
    pub fn open(cfg: &ServerConfig, deadline: Instant) -> Result<Session, String> {
        let started = Instant::now();
        let router = Arc::new(Router::default());
        let link = match &cfg.transport {
            Transport::Stdio { command, args, env } => Link::Stdio(StdioServer::start(
                &cfg.name,
                command,
                args,
                env,
                &cfg.dir,
                &cfg.log,
                router.clone(),
            )?),
            Transport::Http { url, headers } => Link::Http(HttpLink::new(&cfg.name, url, headers)?),
        };
        let mut s = Session {
            name: cfg.name.clone(),
            link,
            router,
            protocol: String::new(),
            handshake: Duration::ZERO,
            tools: Mutex::new(None),
        };
        let params = json!({
            "protocolVersion": PROTOCOL_VERSIONS[0],
            "capabilities": {},
            "clientInfo": {"name": "kora", "version": env!("CARGO_PKG_VERSION")},
        });
        let result = s
            .request("initialize", params, deadline)
            .map_err(|f| match f {
                Fail::Timeout(d) => {
                    format!("no answer to `initialize` within {:.1} s", d.as_secs_f64())
                }
                Fail::Closed(why) => why,
                Fail::Rpc(code, m) => format!("`initialize` was refused ({code}): {m}"),
            })?;
        let version = result
            .get("protocolVersion")
            .and_then(Json::as_str)
            .ok_or("protocol error: the `initialize` result has no `protocolVersion`")?;
        if !PROTOCOL_VERSIONS.contains(&version) {
            return Err(format!(
                "the server speaks MCP version {version}, which this Kora does not (it speaks {})",
                PROTOCOL_VERSIONS.join(", ")
            ));
        }
        s.protocol = version.to_string();
        if let Link::Http(h) = &s.link {
            h.set_protocol(version);
        }
        s.notify("notifications/initialized", None, deadline);
        s.handshake = started.elapsed();
        Ok(s)
    }

    fn send(&self, msg: Json, deadline: Instant) -> Result<(), String> {
        match &self.link {
            Link::Stdio(s) => s.send(msg),
            Link::Http(h) => h.send(msg, deadline, self.router.clone()),
        }
    }

    pub fn notify(&self, method: &str, params: Option<Json>, deadline: Instant) {
        let _ = self.send(notification(method, params), deadline);
    }

    /// One request; waits for its reply until `deadline`, never longer.
    pub fn request(&self, method: &str, params: Json, deadline: Instant) -> Result<Json, Fail> {
        let (id, rx) = self.router.wait_for().map_err(Fail::Closed)?;
        if let Err(why) = self.send(request(id, method, params), deadline) {
            self.router.forget(id);
            return Err(Fail::Closed(why));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let asked = Instant::now();
        match rx.recv_timeout(left) {
            Ok(Heard::Reply(Ok(r))) => Ok(r),
            Ok(Heard::Reply(Err((code, m)))) => Err(Fail::Rpc(code, m)),
            Ok(Heard::Closed(why)) => Err(Fail::Closed(why)),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                // Not waiting any more: a reply that still comes is dropped by id.
                self.router.forget(id);
                let params = json!({"requestId": id, "reason": "the client's deadline passed"});
                self.notify(
                    "notifications/cancelled",
                    Some(params),
                    Instant::now() + Duration::from_secs(2),
                );
                Err(Fail::Timeout(asked.elapsed()))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err(Fail::Closed(format!(
                "the connection to the MCP server `{}` ended",
                self.name
            ))),
        }
    }

    /// Why this connection is over, if it is.
    pub fn closed(&self) -> Option<String> {
        self.router.is_closed()
    }

    /// Whether the server said its tools changed since they were listed.
    pub fn take_tools_changed(&self) -> bool {
        self.router
            .tools_changed
            .swap(false, std::sync::atomic::Ordering::SeqCst)
    }

    /// Late replies dropped so far.
    pub fn dropped(&self) -> u64 {
        self.router
            .dropped
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn stop(&self) {
        self.router.close("stopped");
        match &self.link {
            Link::Stdio(s) => s.stop(),
            Link::Http(h) => h.stop(),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Link::Http(h) = &self.link {
            h.stop();
        }
    }
}
