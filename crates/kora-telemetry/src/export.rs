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

use kora_models::redact::{display_url, Redactor};

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
/// `OTEL_EXPORTER_OTLP_TIMEOUT`'s default: ten seconds a request, and for the run's end.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How spans are encoded on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf`: `application/x-protobuf`, the OTLP default.
    Protobuf,
    /// `http/json`: OTLP JSON, `application/json`.
    Json,
}

impl Protocol {
    /// Reads an `OTEL_EXPORTER_OTLP_PROTOCOL` value; gRPC is refused by name.
    pub fn parse(s: &str) -> Result<Protocol, String> {
        match s.trim() {
            "http/protobuf" => Ok(Protocol::Protobuf),
            "http/json" => Ok(Protocol::Json),
            "grpc" => Err("gRPC is not supported: use http/protobuf or http/json, which collectors serve on port 4318".into()),
            other => Err(format!("unknown protocol {other:?}: use http/protobuf or http/json")),
        }
    }
}

/// Where and how a run's spans are exported.
#[derive(Clone, PartialEq, Eq)]
pub struct ExportConfig {
    /// The full URL requests are posted to (`.../v1/traces`).
    pub url: String,
    /// Extra headers (a hosted collector's key): never printed.
    pub headers: Vec<(String, String)>,
    pub protocol: Protocol,
    /// Each request's timeout, and how long the run's end waits for the rest.
    pub timeout: Duration,
}

impl std::fmt::Debug for ExportConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportConfig")
            .field("url", &display_url(&self.url))
            .field("headers", &self.headers.len())
            .field("protocol", &self.protocol)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The traces URL of a collector's base URL: `/v1/traces` added, unless already there.
pub fn traces_url(base: &str) -> String {
    let base = base.trim();
    if base.trim_end_matches('/').ends_with("/v1/traces") {
        return base.to_string();
    }
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

fn is_http(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://")) && url.len() > "http://".len()
}

impl ExportConfig {
    /// What the command line, the environment and `[telemetry]` ask for, in that order of
    /// strength; `Ok(None)` when nothing asks for export. `Err` names the setting that is
    /// wrong (the run goes on without export).
    pub fn resolve(
        flag: Option<&str>,
        toml_endpoint: Option<&str>,
        toml_protocol: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<ExportConfig>, String> {
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none"))
        {
            if flag.is_none() {
                return Ok(None);
            }
        }
        let (url, from) = if let Some(f) = flag {
            (traces_url(f), "--otlp".to_string())
        } else if let Some(u) = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            (u.trim().to_string(), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT".into())
        } else if let Some(u) = var("OTEL_EXPORTER_OTLP_ENDPOINT") {
            (traces_url(&u), "OTEL_EXPORTER_OTLP_ENDPOINT".into())
        } else if let Some(u) = toml_endpoint {
            (traces_url(u), "[telemetry] endpoint".into())
        } else {
            return Ok(None);
        };
        if !is_http(&url) {
            return Err(format!(
                "{from} is not an http:// or https:// URL: {:?}",
                display_url(&url)
            ));
        }
        let protocol = match var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .map(|p| (p, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL").map(|p| (p, "OTEL_EXPORTER_OTLP_PROTOCOL")))
        {
            Some((p, name)) => Protocol::parse(&p).map_err(|e| format!("{name}: {e}"))?,
            None => match toml_protocol {
                Some(p) => Protocol::parse(p).map_err(|e| format!("[telemetry] protocol: {e}"))?,
                None => Protocol::Protobuf,
            },
        };
        let timeout = match var("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
            .map(|t| (t, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"))
            .or_else(|| var("OTEL_EXPORTER_OTLP_TIMEOUT").map(|t| (t, "OTEL_EXPORTER_OTLP_TIMEOUT")))
        {
            Some((t, name)) => match t.trim().parse::<u64>() {
                Ok(ms) if (1..=600_000).contains(&ms) => Duration::from_millis(ms),
                _ => {
                    return Err(format!(
                        "{name}={t:?} is not a timeout: give milliseconds from 1 to 600000"
                    ))
                }
            },
            None => DEFAULT_TIMEOUT,
        };
        let mut headers = Vec::new();
        for name in ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"] {
            if let Some(h) = var(name) {
                for (k, v) in parse_headers(&h).map_err(|e| format!("{name}: {e}"))? {
                    // The traces-only variable overrides the general one, key by key.
                    headers.retain(|(old, _): &(String, String)| !old.eq_ignore_ascii_case(&k));
                    headers.push((k, v));
                }
            }
        }
        Ok(Some(ExportConfig {
            url,
            headers,
            protocol,
            timeout,
        }))
    }

    fn redactor(&self) -> Redactor {
        let mut r = Redactor::default();
        r.add_url(&self.url);
        for (_, v) in &self.headers {
            r.add(v);
        }
        r
    }
}

/// `key1=value1,key2=value2`, values percent-decoded. An entry without `=` or with an empty
/// key is an error naming its position (never its value, which may be a key).
pub fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (i, part) in text.split(',').enumerate() {
        if part.trim().is_empty() {
            continue;
        }
        let Some((k, v)) = part.split_once('=') else {
            return Err(format!("entry {} has no `=`: write key=value,key=value", i + 1));
        };
        let k = k.trim();
        if k.is_empty() || !k.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
            return Err(format!("entry {} has no usable header name", i + 1));
        }
        let v = percent_decode(v.trim());
        if v.bytes().any(|b| b == b'\r' || b == b'\n') {
            return Err(format!("entry {} has a line break in its value", i + 1));
        }
        out.push((k.to_string(), v));
    }
    Ok(out)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            ) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

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
    /// The warning to print, if anything was not delivered.
    pub fn warning(&self) -> Option<String> {
        if self.dropped == 0 && self.error.is_none() {
            return None;
        }
        let why = self
            .error
            .clone()
            .unwrap_or_else(|| "the collector fell behind".into());
        Some(format!(
            "warning: {} of the run's spans were not exported to {}: {why}; the local trace file has all of them",
            self.dropped, self.url
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
    for attempt in 1..=ATTEMPTS {
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
                    format!("HTTP {status} from {shown}")
                } else {
                    format!("HTTP {status} from {shown}: {text}")
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
                        format!("connection refused by {shown} (is the collector running?)")
                    }
                    ureq::Error::ConnectionFailed => {
                        format!("could not connect to {shown} (is the collector running?)")
                    }
                    ureq::Error::Timeout(_) => format!(
                        "{shown} did not answer within {} ms",
                        cfg.timeout.as_millis()
                    ),
                    ureq::Error::HostNotFound => {
                        return Err(format!("host not found for {shown}"))
                    }
                    other => format!("request to {shown} failed: {other}"),
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
    Err(format!("{last} (after up to {ATTEMPTS} tries)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_string())
        }
    }

    #[test]
    fn the_flag_beats_the_environment_which_beats_the_file() {
        let e = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-key=a%3Db,other = 1 "),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "X-KEY=c"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        ]);
        let c = ExportConfig::resolve(Some("http://flag:4318/"), Some("http://file"), None, &e)
            .unwrap()
            .unwrap();
        assert_eq!(c.url, "http://flag:4318/v1/traces");
        assert_eq!(c.protocol, Protocol::Json);
        assert_eq!(c.timeout, Duration::from_millis(2500));
        assert_eq!(
            c.headers,
            vec![("other".into(), "1".into()), ("X-KEY".into(), "c".into())]
        );
        let c = ExportConfig::resolve(None, Some("http://file"), None, &e)
            .unwrap()
            .unwrap();
        assert_eq!(c.url, "http://env:4318/v1/traces");
        let traces = env(&[
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/custom/path"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
        ]);
        let c = ExportConfig::resolve(None, None, None, &traces).unwrap().unwrap();
        assert_eq!(c.url, "http://t:1/custom/path", "used as given");
        let c = ExportConfig::resolve(None, Some("http://file/v1/traces"), Some("http/json"), &env(&[]))
            .unwrap()
            .unwrap();
        assert_eq!((c.url.as_str(), c.protocol), ("http://file/v1/traces", Protocol::Json));
        assert_eq!(c.timeout, DEFAULT_TIMEOUT);
        assert!(ExportConfig::resolve(None, None, None, &env(&[])).unwrap().is_none());
        let off = env(&[
            ("OTEL_SDK_DISABLED", "true"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
        ]);
        assert!(ExportConfig::resolve(None, None, None, &off).unwrap().is_none());
    }

    #[test]
    fn bad_settings_name_themselves_and_never_a_header_value() {
        let grpc = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]);
        let e = ExportConfig::resolve(None, None, None, &grpc).unwrap_err();
        assert!(e.contains("OTEL_EXPORTER_OTLP_PROTOCOL") && e.contains("4318"), "{e}");
        let bad = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=s3cret,broken"),
        ]);
        let e = ExportConfig::resolve(None, None, None, &bad).unwrap_err();
        assert!(e.contains("entry 2") && !e.contains("s3cret"), "{e}");
        let e = ExportConfig::resolve(None, None, None, &env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318")]))
            .unwrap_err();
        assert!(e.contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{e}");
        let e = ExportConfig::resolve(
            None,
            None,
            None,
            &env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://e"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon"),
            ]),
        )
        .unwrap_err();
        assert!(e.contains("OTEL_EXPORTER_OTLP_TIMEOUT"), "{e}");
    }

    #[test]
    fn a_report_warns_only_when_something_was_lost() {
        let mut r = ExportReport {
            url: "http://c/v1/traces".into(),
            requests: 2,
            spans: 10,
            ..ExportReport::default()
        };
        assert_eq!(r.warning(), None);
        r.dropped = 3;
        r.error = Some("connection refused".into());
        let w = r.warning().unwrap();
        assert!(w.starts_with("warning: 3 of the run's spans") && w.contains("connection refused"), "{w}");
    }

    proptest! {
        #[test]
        fn header_text_never_panics(s in ".{0,60}") {
            let _ = parse_headers(&s);
        }
    }
}
