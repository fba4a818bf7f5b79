//! One configured server over a run: started at its first use, started again after it died
//! (at the next call, never in the middle of one), its tools listed per connection.
//!
//! Starting and the handshake are retried, because nothing has run yet: up to three tries
//! while the deadline allows. A tool call is never retried: a timeout is exactly when whether
//! it ran is unknown, and calling again could act twice.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use kora_runtime::external::{find_tool_named, Reply, ToolInfo};

use crate::config::ServerConfig;
use crate::session::{Fail, Session};

const START_TRIES: u32 = 3;
/// Pages of `tools/list` followed at most: a server that never stops paging is refused.
const MAX_PAGES: usize = 100;

pub struct Server {
    pub cfg: ServerConfig,
    session: Mutex<Option<Arc<Session>>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Server {
    pub fn new(cfg: ServerConfig) -> Server {
        Server {
            cfg,
            session: Mutex::new(None),
        }
    }

    /// The deadline of one request: its own timeout, or the run's if that comes first.
    pub fn deadline(&self, run: Option<Instant>) -> Instant {
        let own = Instant::now() + self.cfg.timeout;
        run.map_or(own, |r| r.min(own))
    }

    /// The live connection, starting the server if it is not running.
    pub fn session(&self, deadline: Instant) -> Result<Arc<Session>, String> {
        let mut cur = lock(&self.session);
        if let Some(s) = cur.as_ref() {
            if s.closed().is_none() {
                return Ok(s.clone());
            }
        }
        if let Some(old) = cur.take() {
            old.stop();
        }
        let mut last = String::new();
        for attempt in 0..START_TRIES {
            if attempt > 0 {
                let pause = Duration::from_millis(200 * u64::from(attempt));
                if Instant::now() + pause >= deadline {
                    break;
                }
                std::thread::sleep(pause);
            }
            match Session::open(&self.cfg, deadline) {
                Ok(s) => {
                    let s = Arc::new(s);
                    *cur = Some(s.clone());
                    return Ok(s);
                }
                Err(why) => last = why,
            }
            if Instant::now() >= deadline {
                break;
            }
        }
        Err(format!(
            "cannot start the MCP server `{}`: {last}{}",
            self.cfg.name,
            self.log_hint()
        ))
    }

    fn log_hint(&self) -> String {
        match &self.cfg.transport {
            crate::config::Transport::Stdio { .. } => {
                format!(" (its standard error is in {})", self.cfg.log.display())
            }
            crate::config::Transport::Http { .. } => String::new(),
        }
    }

    /// The server's tools, listed once per connection (again after `tools/list_changed`).
    pub fn tools(&self, deadline: Instant) -> Result<Vec<ToolInfo>, String> {
        let s = self.session(deadline)?;
        self.tools_of(&s, deadline)
    }

    fn tools_of(&self, s: &Session, deadline: Instant) -> Result<Vec<ToolInfo>, String> {
        let changed = s.take_tools_changed();
        if let (false, Some(t)) = (changed, lock(&s.tools).clone()) {
            return Ok(t);
        }
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let page = s
                .request("tools/list", params, deadline)
                .map_err(|f| self.why(f, "tools/list"))?;
            let items = page
                .get("tools")
                .and_then(Json::as_array)
                .ok_or("protocol error: a `tools/list` result without `tools`")?;
            for t in items {
                tools.push(ToolInfo::from_json(t).ok_or_else(|| {
                    format!(
                        "protocol error: a tool without a name: {}",
                        crate::jsonrpc::clip(&t.to_string())
                    )
                })?);
            }
            match page.get("nextCursor").and_then(Json::as_str) {
                Some(next) if Some(next) != cursor.as_deref() => cursor = Some(next.to_string()),
                _ => {
                    *lock(&s.tools) = Some(tools.clone());
                    return Ok(tools);
                }
            }
        }
        Err(format!(
            "the MCP server `{}` listed more than {MAX_PAGES} pages of tools",
            self.cfg.name
        ))
    }

    fn why(&self, f: Fail, what: &str) -> String {
        match f {
            Fail::Timeout(d) => format!(
                "no answer from the MCP server `{}` to `{what}` within {:.1} s",
                self.cfg.name,
                d.as_secs_f64()
            ),
            Fail::Closed(why) => format!("{why} during `{what}`{}", self.log_hint()),
            Fail::Rpc(code, m) => format!(
                "the MCP server `{}` refused `{what}` ({code}): {m}",
                self.cfg.name
            ),
        }
    }

    /// Calls a tool once, with `arguments` checked against its input schema first. Starting
    /// the server, listing its tools and the call are each a request with a deadline of its
    /// own (`run`, a budget's, bounds them all).
    pub fn call(&self, member: &str, arguments: Json, run: Option<Instant>) -> Reply {
        let s = match self.session(self.deadline(run)) {
            Ok(s) => s,
            Err(why) => return Reply::Failed(why),
        };
        let tools = match self.tools_of(&s, self.deadline(run)) {
            Ok(t) => t,
            Err(why) => return Reply::Failed(why),
        };
        let Some(tool) = find_tool_named(&tools, member) else {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            return Reply::Err(format!(
                "the MCP server `{}` has no tool `{member}`; its tools are: {}",
                self.cfg.name,
                names.join(", ")
            ));
        };
        if let Err(why) = crate::schema_check::check(&tool.input_schema, &arguments) {
            return Reply::Err(format!("bad arguments for `{}`: {why}", tool.name));
        }
        let what = format!("tools/call {}", tool.name);
        let deadline = self.deadline(run);
        match s.request(
            "tools/call",
            json!({"name": tool.name, "arguments": arguments}),
            deadline,
        ) {
            Ok(result) => crate::result::reply_of(&result),
            // The server answered, and said no: that is an answer, not an outage.
            Err(Fail::Rpc(code, m)) => Reply::Err(format!("MCP error {code}: {m}")),
            Err(f @ Fail::Timeout(_)) => Reply::Failed(format!(
                "{}; the tool may still have acted, so it is not called again",
                self.why(f, &what)
            )),
            Err(f) => Reply::Failed(self.why(f, &what)),
        }
    }

    /// How long the current connection's start and handshake took.
    pub fn handshake(&self) -> Option<Duration> {
        lock(&self.session).as_ref().map(|s| s.handshake)
    }

    pub fn stop(&self) {
        if let Some(s) = lock(&self.session).take() {
            s.stop();
        }
    }
}
