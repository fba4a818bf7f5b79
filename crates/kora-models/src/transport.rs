//! The HTTP exchange: one model request sent with ureq, retried per `retry`, streamed through the decoders, bounded by a deadline.

use std::fmt;
use std::io::{ErrorKind, Read};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

use ureq::Agent;

use crate::config::{Api, ApiKey, ModelEntry, Settings};
use crate::request::{build_body, Request};
use crate::response::{error_message, parse_reply, Reply, Usage};
use crate::retry::{self, Jitter, Next, Stop};
use crate::stream::{Assembler, NdjsonDecoder, SseDecoder, StreamDecoder, StreamEvent};

/// The largest non-streamed reply read into memory.
const MAX_BODY: u64 = 64 * 1024 * 1024;
/// How much of an error body is read for its message.
const MAX_ERROR_BODY: u64 = 64 * 1024;

/// One HTTP attempt, for telemetry (one span per attempt).
#[derive(Clone, Debug, PartialEq)]
pub struct Attempt {
    /// The HTTP status, when a response arrived.
    pub status: Option<u16>,
    /// When the request was sent (wall clock, so spans line up with other systems').
    pub started: std::time::SystemTime,
    /// Tokens the provider reported for this attempt (a broken stream may still report some).
    pub usage: Usage,
    pub duration: Duration,
    /// Why the attempt failed; `None` for the one that succeeded.
    pub error: Option<String>,
}

/// A model call that produced no reply. `cause` is fit for `Failed(reason)`.
#[derive(Clone, Debug, PartialEq)]
pub struct CallFailure {
    /// e.g. `HTTP 503 from http://127.0.0.1:PORT/v1/chat/completions after 4 attempts: overloaded`.
    pub cause: String,
    /// Whether the last failure was of a retryable kind (as observed, before the shown-output
    /// and deadline rules were applied).
    pub retryable: bool,
    /// HTTP attempts made (0 when nothing was sent).
    pub attempts: u32,
    /// Whether any answer text reached the `on_piece` handler.
    pub shown_output: bool,
    /// Tokens reported across all attempts: spent tokens stay spent.
    pub usage: Usage,
    /// Whether the deadline ended the call (cut a request short or left no time to retry).
    pub deadline_reached: bool,
    /// The last HTTP status seen, if any.
    pub status: Option<u16>,
    /// One record per attempt.
    pub attempt_log: Vec<Attempt>,
}

impl fmt::Display for CallFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.cause)
    }
}

impl std::error::Error for CallFailure {}

/// Why one attempt failed, as observed.
struct Cause {
    /// `HTTP 503 from URL`, `timed out after 2s waiting for URL`, ...
    head: String,
    /// The provider's own words, when it gave any.
    detail: Option<String>,
    retryable: bool,
    status: Option<u16>,
    retry_after: Option<Duration>,
    usage: Usage,
    shown: bool,
    cut_by_deadline: bool,
}

impl Cause {
    fn new(head: String, retryable: bool) -> Cause {
        Cause {
            head,
            detail: None,
            retryable,
            status: None,
            retry_after: None,
            usage: Usage::default(),
            shown: false,
            cut_by_deadline: false,
        }
    }

    fn line(&self) -> String {
        match &self.detail {
            Some(d) => format!("{}: {d}", self.head),
            None => self.head.clone(),
        }
    }
}

/// Renders a duration the way a person writes it: `2s`, `1.5s`, `300ms`.
pub fn human_duration(d: Duration) -> String {
    if d >= Duration::from_secs(1) {
        if d.subsec_millis() == 0 {
            format!("{}s", d.as_secs())
        } else {
            let s = format!("{:.2}", d.as_secs_f64());
            format!("{}s", s.trim_end_matches('0').trim_end_matches('.'))
        }
    } else {
        format!("{}ms", d.as_millis())
    }
}

fn agent(loopback: bool) -> &'static Agent {
    static DIRECT: OnceLock<Agent> = OnceLock::new();
    static PROXIED: OnceLock<Agent> = OnceLock::new();
    let make = |proxy: bool| {
        let mut b = Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_redirects_will_error(false)
            .user_agent(concat!("kora/", env!("CARGO_PKG_VERSION")));
        if !proxy {
            b = b.proxy(None);
        }
        Agent::new_with_config(b.build())
    };
    if loopback {
        DIRECT.get_or_init(|| make(false))
    } else {
        PROXIED.get_or_init(|| make(true))
    }
}

/// Sends one model request, retrying per [`crate::retry`], and returns the reply.
///
/// - Retries wrap this one HTTP request; `settings.max_retries = 0` disables them.
/// - `deadline` bounds everything: each request gets `min(timeout, time left)`, and no backoff
///   sleeps past it.
/// - With `req.stream`, answer text is handed to `on_piece` as it arrives; once any has been,
///   the call is never retried. A stream that showed nothing (keep-alives, role deltas, usage) is.
/// - `Reply::usage` and `CallFailure::usage` sum every attempt's reported usage.
pub fn call(
    entry: &ModelEntry,
    settings: &Settings,
    req: &Request,
    deadline: Option<Instant>,
    mut on_piece: Option<&mut dyn FnMut(&str)>,
) -> Result<Reply, CallFailure> {
    let url = entry.url();
    let key = entry.api_key().map_err(|e| CallFailure {
        cause: e.to_string(),
        retryable: false,
        attempts: 0,
        shown_output: false,
        usage: Usage::default(),
        deadline_reached: false,
        status: None,
        attempt_log: Vec::new(),
    })?;
    let body = build_body(entry, req).to_string();
    let agent = agent(entry.is_loopback());
    let mut rng = Jitter::from_entropy();
    let mut log: Vec<Attempt> = Vec::new();
    let mut total = Usage::default();

    loop {
        let now = Instant::now();
        let started = std::time::SystemTime::now();
        let Some(timeout) = retry::request_timeout(settings.timeout(), deadline, now) else {
            return Err(CallFailure {
                cause: if log.is_empty() {
                    format!("the deadline passed before the request to {url} was sent")
                } else {
                    format!("the deadline passed after {} attempts to {url}", log.len())
                },
                retryable: false,
                attempts: log.len() as u32,
                shown_output: false,
                usage: total,
                deadline_reached: true,
                status: log.last().and_then(|a| a.status),
                attempt_log: log,
            });
        };
        let cut_by_deadline = timeout < settings.timeout();
        let outcome = attempt(
            agent,
            &url,
            entry.api,
            key.as_ref(),
            &body,
            req.stream,
            timeout,
            deadline,
            &mut on_piece,
        );
        let duration = now.elapsed();
        match outcome {
            Ok((status, mut reply)) => {
                reply.usage = crate::usage_estimate::usage_or_estimate(&reply, entry, req);
                total.add(reply.usage);
                log.push(Attempt {
                    status: Some(status),
                    started,
                    usage: reply.usage,
                    duration,
                    error: None,
                });
                reply.usage = total;
                reply.attempts = log;
                return Ok(reply);
            }
            Err(mut cause) => {
                cause.cut_by_deadline |= cut_by_deadline && cause.head.starts_with("timed out");
                total.add(cause.usage);
                log.push(Attempt {
                    status: cause.status,
                    started,
                    usage: cause.usage,
                    duration,
                    error: Some(cause.line()),
                });
                let attempts = log.len() as u32;
                let next = if cause.shown {
                    Next::Stop(Stop::NotRetryable)
                } else {
                    retry::plan(
                        attempts,
                        cause.retryable,
                        cause.retry_after,
                        settings,
                        deadline,
                        &mut rng,
                    )
                };
                match next {
                    Next::RetryAfter(delay) => {
                        if !delay.is_zero() {
                            std::thread::sleep(delay);
                        }
                    }
                    Next::Stop(stop) => {
                        return Err(failure(cause, stop, attempts, total, log));
                    }
                }
            }
        }
    }
}

fn failure(
    cause: Cause,
    stop: Stop,
    attempts: u32,
    usage: Usage,
    log: Vec<Attempt>,
) -> CallFailure {
    let mut text = cause.head.clone();
    if attempts > 1 {
        text.push_str(&format!(" after {attempts} attempts"));
    }
    if let Some(d) = &cause.detail {
        text.push_str(": ");
        text.push_str(d);
    }
    let deadline_reached = stop == Stop::Deadline || cause.cut_by_deadline;
    if stop == Stop::Deadline {
        text.push_str(" (the deadline left no time to retry)");
    } else if cause.shown {
        text.push_str(" (output was already shown, so it was not retried)");
    }
    CallFailure {
        cause: text,
        retryable: cause.retryable,
        attempts,
        shown_output: cause.shown,
        usage,
        deadline_reached,
        status: cause.status,
        attempt_log: log,
    }
}

/// Maps a transport error to a cause, classified where it was observed.
fn classify(err: ureq::Error, url: &str, timeout: Duration) -> Cause {
    let timed_out = || {
        Cause::new(
            format!(
                "timed out after {} waiting for {url}",
                human_duration(timeout)
            ),
            true,
        )
    };
    match err {
        ureq::Error::Timeout(_) => timed_out(),
        ureq::Error::Io(e) => classify_io(&e, url, timeout),
        ureq::Error::ConnectionFailed => Cause::new(format!("could not connect to {url}"), true),
        ureq::Error::HostNotFound => Cause::new(format!("host not found for {url}"), false),
        ureq::Error::Protocol(e) => {
            let mut c = Cause::new(format!("malformed HTTP from {url}"), true);
            c.detail = Some(e.to_string());
            c
        }
        ureq::Error::BodyExceedsLimit(n) => {
            Cause::new(format!("reply from {url} is larger than {n} bytes"), false)
        }
        ureq::Error::BadUri(u) => Cause::new(format!("bad endpoint URL {u:?}"), false),
        other => {
            let mut c = Cause::new(format!("request to {url} failed"), false);
            c.detail = Some(other.to_string());
            c
        }
    }
}

fn classify_io(e: &std::io::Error, url: &str, timeout: Duration) -> Cause {
    match e.kind() {
        ErrorKind::ConnectionRefused => Cause::new(format!("connection refused by {url}"), true),
        ErrorKind::TimedOut | ErrorKind::WouldBlock => Cause::new(
            format!(
                "timed out after {} waiting for {url}",
                human_duration(timeout)
            ),
            true,
        ),
        ErrorKind::ConnectionReset
        | ErrorKind::ConnectionAborted
        | ErrorKind::BrokenPipe
        | ErrorKind::UnexpectedEof
        | ErrorKind::NotConnected => {
            let mut c = Cause::new(format!("connection to {url} dropped"), true);
            c.detail = Some(e.to_string());
            c
        }
        _ => {
            let mut c = Cause::new(format!("I/O error talking to {url}"), true);
            c.detail = Some(e.to_string());
            c
        }
    }
}

/// An I/O error from a body reader, which may wrap a ureq error (timeouts do).
fn classify_read(e: std::io::Error, url: &str, timeout: Duration) -> Cause {
    classify(ureq::Error::from(e), url, timeout)
}

fn header(resp: &ureq::http::Response<ureq::Body>, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

#[allow(clippy::too_many_arguments)]
fn attempt(
    agent: &Agent,
    url: &str,
    api: Api,
    key: Option<&ApiKey>,
    body: &str,
    stream: bool,
    timeout: Duration,
    deadline: Option<Instant>,
    on_piece: &mut Option<&mut dyn FnMut(&str)>,
) -> Result<(u16, Reply), Cause> {
    let mut cfg = agent
        .post(url)
        .config()
        .timeout_connect(Some(timeout))
        .timeout_send_request(Some(timeout))
        .timeout_send_body(Some(timeout));
    cfg = if stream {
        // A stream may run longer than one timeout; it is bounded by silence and the deadline.
        let left = deadline.and_then(|d| d.checked_duration_since(Instant::now()));
        cfg.timeout_global(left)
            .timeout_recv_response(Some(timeout))
            .timeout_per_read(Some(timeout))
    } else {
        cfg.timeout_global(Some(timeout))
    };
    let mut rb = cfg.build().header("content-type", "application/json");
    if let Some(key) = key {
        rb = rb.header("authorization", format!("Bearer {}", key.expose()));
    }
    if stream && api == Api::OpenAi {
        rb = rb.header("accept", "text/event-stream");
    }
    let mut resp = rb
        .send(body.as_bytes())
        .map_err(|e| classify(e, url, timeout))?;
    let status = resp.status().as_u16();

    if !(200..300).contains(&status) {
        let retry_after = header(&resp, "retry-after-ms")
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_millis)
            .or_else(|| {
                header(&resp, "retry-after")
                    .and_then(|v| retry::parse_retry_after(&v, SystemTime::now()))
            });
        let text = resp
            .body_mut()
            .with_config()
            .limit(MAX_ERROR_BODY)
            .lossy_utf8(true)
            .read_to_string()
            .unwrap_or_default();
        let mut c = Cause::new(
            format!("HTTP {status} from {url}"),
            retry::status_retryable(status),
        );
        c.status = Some(status);
        c.retry_after = retry_after;
        c.detail = provider_detail(&text);
        return Err(c);
    }

    let content_type = header(&resp, "content-type").unwrap_or_default();
    let streamed = stream && (api == Api::Ollama || content_type.contains("event-stream"));
    if !streamed {
        let bytes = resp
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_vec()
            .map_err(|e| with_status(classify(e, url, timeout), status))?;
        let reply = parse_reply(api, &bytes).map_err(|e| {
            let mut c = Cause::new(format!("malformed reply from {url}"), false);
            c.detail = Some(e.0);
            c.status = Some(status);
            c
        })?;
        // A server that ignored `stream: true` still hands its answer over, in one piece.
        if stream && !reply.content.is_empty() {
            if let Some(f) = on_piece.as_mut() {
                f(&reply.content);
            }
        }
        return Ok((status, reply));
    }

    let mut decoder: Box<dyn StreamDecoder> = match api {
        Api::OpenAi => Box::new(SseDecoder::new()),
        Api::Ollama => Box::new(NdjsonDecoder::new()),
    };
    let mut assembler = Assembler::new();
    let mut shown = false;
    let mut reader = resp.into_body().into_with_config().limit(u64::MAX).reader();
    let mut buf = vec![0u8; 16 * 1024];
    let fail = |mut c: Cause, shown: bool, assembler: &Assembler| {
        c.status = Some(status);
        c.shown = shown;
        c.usage = assembler.usage();
        c
    };
    loop {
        let (events, eof) = match reader.read(&mut buf) {
            Ok(0) => (decoder.finish(), true),
            Ok(n) => (decoder.feed(&buf[..n]), false),
            Err(e) => return Err(fail(classify_read(e, url, timeout), shown, &assembler)),
        };
        let events = events.map_err(|e| {
            let mut c = Cause::new(format!("stream from {url} broke"), true);
            c.detail = Some(e.0);
            fail(c, shown, &assembler)
        })?;
        for ev in &events {
            if let StreamEvent::Piece(text) = ev {
                if let Some(f) = on_piece.as_mut() {
                    f(text);
                    shown = true;
                }
            }
            assembler.push(ev);
        }
        if assembler.is_done() {
            return Ok((status, assembler.finish()));
        }
        if eof {
            let c = Cause::new(
                format!("stream from {url} ended before the answer was complete"),
                true,
            );
            return Err(fail(c, shown, &assembler));
        }
    }
}

fn with_status(mut c: Cause, status: u16) -> Cause {
    c.status = Some(status);
    c
}

/// The provider's own explanation from an error body, shortened for a one-line reason.
fn provider_detail(text: &str) -> Option<String> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    let msg = serde_json::from_str::<serde_json::Value>(t)
        .ok()
        .and_then(|v| error_message(&v))
        .unwrap_or_else(|| t.to_string());
    let one_line: String = msg.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut short: String = one_line.chars().take(200).collect();
    if short.len() < one_line.len() {
        short.push_str("...");
    }
    Some(short)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_a_person_wrote_them() {
        assert_eq!(human_duration(Duration::from_secs(2)), "2s");
        assert_eq!(human_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(human_duration(Duration::from_millis(300)), "300ms");
        assert_eq!(human_duration(Duration::from_millis(60_250)), "60.25s");
    }

    #[test]
    fn provider_detail_prefers_the_message() {
        assert_eq!(
            provider_detail(r#"{"error":{"message":"Rate limit\nreached","type":"x"}}"#).as_deref(),
            Some("Rate limit reached")
        );
        assert_eq!(provider_detail("  ").as_deref(), None);
        assert_eq!(
            provider_detail("<html>bad gateway</html>").as_deref(),
            Some("<html>bad gateway</html>")
        );
        assert!(provider_detail(&"x".repeat(500)).unwrap().ends_with("..."));
    }
}
