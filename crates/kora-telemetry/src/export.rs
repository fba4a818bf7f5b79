//! OTLP/HTTP export: a run's spans sent to a collector as they accumulate and at the run's end,
//! as protobuf (opentelemetry-proto's prost types) or as OTLP JSON when asked.
//!
//! Where to send comes from `kora run --otlp URL`, the standard `OTEL_EXPORTER_OTLP_*`
//! variables, or `[telemetry]` in `kora.toml`, in that order (`ExportConfig::resolve`). The
//! local trace file stays the record of the run: export is best effort and never holds the
//! program back. Spans go to a thread of their own in batches of about `BATCH_BYTES`; a
//! batch that finds the queue full is dropped (and counted), and once the collector has
//! failed a request after `ATTEMPTS` tries no more are sent. The run's end waits for what is
//! queued, for at most the export timeout, and the CLI prints one warning if anything was
//! not delivered. Nothing of this changes a run's exit code.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;

use kora_models::redact::display_url;

pub use crate::export_config::{
    parse_headers, traces_url, ExportConfig, Protocol, DEFAULT_TIMEOUT,
};
use crate::otlp;
use crate::recorder::RunIds;

/// About how many bytes of encoded spans go in one request.
pub const BATCH_BYTES: usize = 256 * 1024;
/// Batches waiting for the sender at most; past that a batch is dropped, not waited for.
const QUEUED: usize = 4;
/// Tries of one request before the collector is taken to be down.
const ATTEMPTS: u32 = 3;
/// The longest a collector's `Retry-After` may hold the sender.
const RETRY_AFTER_CAP: Duration = Duration::from_secs(2);

/// What an export delivered, for the one warning the CLI prints when it fell short.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportReport {
    /// The collector's URL, without userinfo.
    pub url: String,
    pub requests: usize,
    pub spans: usize,
    /// Spans not delivered: the collector was down, fell behind, or the run's end came.
    pub dropped: usize,
    /// Why delivery stopped (redacted: no header value or URL password).
    pub error: Option<String>,
}

impl ExportReport {
    /// The warning to print, if anything was not delivered; `trace` is the local trace file.
    pub fn warning(&self, trace: Option<&std::path::Path>) -> Option<String> {
        if self.dropped == 0 && self.error.is_none() {
            return None;
        }
        let why = self
            .error
            .clone()
            .unwrap_or_else(|| "the collector fell behind".into());
        let spans = match self.dropped {
            1 => "1 span of the run was".to_string(),
            n => format!("{n} spans of the run were"),
        };
        let rest = match trace {
            Some(p) => format!("the local trace {} has all of them", p.display()),
            None => "no local trace was written (--no-trace)".to_string(),
        };
        Some(format!(
            "warning: {spans} not exported to {}: {why}; {rest}",
            self.url
        ))
    }
}

#[derive(Default)]
struct Shared {
    report: ExportReport,
    /// A request failed for good: later batches are not sent.
    down: bool,
    /// The run has ended: nothing is sent after this.
    give_up_at: Option<Instant>,
}

fn lock(m: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The encoder's side of an export: spans gathered into batches, handed to the sender.
pub(crate) struct Exporter {
    pending: Vec<Span>,
    bytes: usize,
    queue: Option<SyncSender<Vec<Span>>>,
    sender: Option<JoinHandle<()>>,
    shared: Arc<Mutex<Shared>>,
    timeout: Duration,
}

impl Exporter {
    /// Starts the sender's thread; `None` if it cannot start (the run goes on, unexported).
    pub(crate) fn start(cfg: ExportConfig, ids: RunIds, program: &str) -> Option<Exporter> {
        let shared = Arc::new(Mutex::new(Shared {
            report: ExportReport {
                url: display_url(&cfg.url).into_owned(),
                ..ExportReport::default()
            },
            ..Shared::default()
        }));
        let (queue, batches) = sync_channel::<Vec<Span>>(QUEUED);
        let timeout = cfg.timeout;
        let sender = {
            let shared = shared.clone();
            let program = program.to_string();
            std::thread::Builder::new()
                .name("kora-otlp".into())
                .spawn(move || send_all(&cfg, &ids, &program, &batches, &shared))
                .ok()?
        };
        Some(Exporter {
            pending: Vec::new(),
            bytes: 0,
            queue: Some(queue),
            sender: Some(sender),
            shared,
            timeout,
        })
    }

    pub(crate) fn push(&mut self, span: Span) {
        self.bytes += span.encoded_len();
        self.pending.push(span);
        if self.bytes >= BATCH_BYTES {
            self.hand(false);
        }
    }

    /// Hands the pending spans to the sender: dropped if its queue is full, unless it is the
    /// run's end, when it waits (the sender gives up at the timeout).
    fn hand(&mut self, at_end: bool) {
        if self.pending.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.pending);
        self.bytes = 0;
        let n = batch.len();
        let Some(q) = &self.queue else {
            lock(&self.shared).report.dropped += n;
            return;
        };
        let sent = if at_end {
            q.send(batch).is_ok()
        } else {
            match q.try_send(batch) {
                Ok(()) => true,
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
            }
        };
        if !sent {
            lock(&self.shared).report.dropped += n;
        }
    }

    /// Sends what is left and waits for the sender, for at most the export timeout.
    pub(crate) fn finish(mut self) -> ExportReport {
        lock(&self.shared).give_up_at = Some(Instant::now() + self.timeout);
        self.hand(true);
        drop(self.queue.take());
        if let Some(t) = self.sender.take() {
            let _ = t.join();
        }
        let report = lock(&self.shared).report.clone();
        report
    }
}

/// The sender's loop: one request per batch, until the queue closes.
fn send_all(
    cfg: &ExportConfig,
    ids: &RunIds,
    program: &str,
    batches: &Receiver<Vec<Span>>,
    shared: &Mutex<Shared>,
) {
    let redact = cfg.redactor();
    let agent = agent(cfg);
    while let Ok(batch) = batches.recv() {
        let n = batch.len();
        let give_up_at = {
            let s = lock(shared);
            let late = s.give_up_at.is_some_and(|t| Instant::now() >= t);
            if s.down || late {
                drop(s);
                let mut s = lock(shared);
                s.report.dropped += n;
                if late && s.report.error.is_none() {
                    s.report.error = Some("the run ended before they could be sent".into());
                }
                continue;
            }
            s.give_up_at
        };
        let req = otlp::envelope(ids, program, batch);
        let (body, content_type) = match cfg.protocol {
            Protocol::Protobuf => (req.encode_to_vec(), "application/x-protobuf"),
            Protocol::Json => (otlp::to_json(&req).into_bytes(), "application/json"),
        };
        let r = post(&agent, cfg, &body, content_type, give_up_at, shared);
        let mut s = lock(shared);
        match r {
            Ok(()) => {
                s.report.requests += 1;
                s.report.spans += n;
            }
            Err(why) => {
                s.down = true;
                s.report.dropped += n;
                s.report.error = Some(redact.cleaned(&why));
            }
        }
    }
}

fn agent(cfg: &ExportConfig) -> ureq::Agent {
    let mut b = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(cfg.timeout))
        .user_agent(concat!("kora/", env!("CARGO_PKG_VERSION")));
    if kora_models::ModelEntry::new("", cfg.url.as_str()).is_loopback() {
        b = b.proxy(None);
    }
    ureq::Agent::new_with_config(b.build())
}

/// One request, tried up to `ATTEMPTS` times when the failure is one a retry can fix.
fn post(
    agent: &ureq::Agent,
    cfg: &ExportConfig,
    body: &[u8],
    content_type: &str,
    give_up_at: Option<Instant>,
    shared: &Mutex<Shared>,
) -> Result<(), String> {
    let shown = display_url(&cfg.url);
    let mut last = String::new();
    let mut tries = 0;
    for attempt in 1..=ATTEMPTS {
        tries = attempt;
        let mut rb = agent.post(&cfg.url).header("content-type", content_type);
        for (k, v) in &cfg.headers {
            rb = rb.header(k.as_str(), v.as_str());
        }
        let (retry, wait) = match rb.send(body) {
            Ok(mut resp) => {
                let status = resp.status().as_u16();
                if (200..300).contains(&status) {
                    return Ok(());
                }
                let text = resp
                    .body_mut()
                    .with_config()
                    .limit(4096)
                    .lossy_utf8(true)
                    .read_to_string()
                    .unwrap_or_default();
                let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
                let text: String = text.chars().take(200).collect();
                last = if text.is_empty() {
                    format!("HTTP {status}")
                } else {
                    format!("HTTP {status}: {text}")
                };
                let after = resp
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .map(Duration::from_secs);
                (matches!(status, 429 | 502 | 503 | 504), after)
            }
            Err(e) => {
                last = match e {
                    ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
                        "connection refused (is the collector running?)".to_string()
                    }
                    ureq::Error::ConnectionFailed => {
                        "could not connect (is the collector running?)".to_string()
                    }
                    ureq::Error::Timeout(_) => {
                        format!("no answer within {} ms", cfg.timeout.as_millis())
                    }
                    ureq::Error::HostNotFound => return Err(format!("host not found for {shown}")),
                    other => format!("the request failed: {other}"),
                };
                (true, None)
            }
        };
        if !retry || attempt == ATTEMPTS {
            break;
        }
        let wait = wait
            .unwrap_or(Duration::from_millis(100 << attempt))
            .min(RETRY_AFTER_CAP);
        let deadline = give_up_at.or_else(|| lock(shared).give_up_at);
        if deadline.is_some_and(|t| Instant::now() + wait >= t) {
            break;
        }
        std::thread::sleep(wait);
    }
    Err(match tries {
        1 => last,
        n => format!("{last}, {n} tries"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_warns_only_when_something_was_lost() {
        let mut r = ExportReport {
            url: "http://c/v1/traces".into(),
            requests: 2,
            spans: 10,
            ..ExportReport::default()
        };
        assert_eq!(r.warning(None), None);
        r.dropped = 3;
        r.error = Some("connection refused".into());
        assert_eq!(
            r.warning(Some(std::path::Path::new(".kora/traces/x.json"))).as_deref(),
            Some("warning: 3 spans of the run were not exported to http://c/v1/traces: connection refused; the local trace .kora/traces/x.json has all of them")
        );
    }
}
