//! The HTTP exchange: one model request sent with ureq, retried per `retry`, streamed through the decoders, bounded by a deadline.

use std::io::Read;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime};

use ureq::Agent;

use crate::cancel::Cancel;
use crate::config::{Api, ApiKey, ModelEntry, Settings};
use crate::failure::{
    at_limit, cancelled, classify, classify_read, failure, over_time, provider_detail, with_status,
    Cause, Limit, Wording,
};
pub use crate::failure::{human_duration, CallFailure};
use crate::redact::{display_url, Redactor};
use crate::request::{build_body, Request};
use crate::response::{parse_reply, Reply, Usage};
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

fn builder(loopback: bool) -> ureq::config::ConfigBuilder<ureq::typestate::AgentScope> {
    let mut b = Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .max_redirects_will_error(false)
        .user_agent(concat!("kora/", env!("CARGO_PKG_VERSION")));
    if loopback {
        b = b.proxy(None);
    }
    b
}

/// The agents calls share, one for loopback endpoints (no proxy) and one for the rest.
fn agent(loopback: bool) -> &'static Agent {
    static DIRECT: OnceLock<Agent> = OnceLock::new();
    static PROXIED: OnceLock<Agent> = OnceLock::new();
    let make = |loopback: bool| Agent::new_with_config(builder(loopback).build());
    if loopback {
        DIRECT.get_or_init(|| make(true))
    } else {
        PROXIED.get_or_init(|| make(false))
    }
}

impl Exchange<'_> {
    fn wording(&self) -> Wording<'_> {
        Wording {
            shown: &self.shown,
            redact: &self.redact,
        }
    }
}

/// What every attempt of one call shares.
struct Exchange<'a> {
    url: String,
    /// `url` without userinfo: what messages say.
    shown: String,
    entry: &'a ModelEntry,
    req: &'a Request,
    key: Option<ApiKey>,
    body: String,
    redact: Redactor,
}

/// Sends one model request, retrying per [`crate::retry`], and returns the reply.
///
/// - Retries wrap this one HTTP request; `settings.max_retries = 0` disables them.
/// - `deadline` (a budget's time) and `call_timeout_secs` bound everything: each request
///   gets `min(timeout, time left)`, no backoff sleeps past either, and a stream is cut
///   when either comes, however steadily it sends.
/// - With `req.stream`, answer text is handed to `on_piece` as it arrives; once any has been,
///   the call is never retried. A stream that showed nothing (keep-alives, role deltas, usage) is.
/// - `Reply::usage` and `CallFailure::usage` sum every attempt's reported usage.
pub fn call(
    entry: &ModelEntry,
    settings: &Settings,
    req: &Request,
    deadline: Option<Instant>,
    on_piece: Option<&mut dyn FnMut(&str)>,
) -> Result<Reply, CallFailure> {
    call_cancellable(entry, settings, req, deadline, None, on_piece)
}

/// [`call`], which `cancel` can end from another thread: no attempt starts once it is
/// cancelled, a wait between attempts ends at once, and an attempt in flight loses its
/// connection. The failure then says `cancelled`.
pub fn call_cancellable(
    entry: &ModelEntry,
    settings: &Settings,
    req: &Request,
    deadline: Option<Instant>,
    cancel: Option<&Cancel>,
    mut on_piece: Option<&mut dyn FnMut(&str)>,
) -> Result<Reply, CallFailure> {
    let key = entry
        .api_key()
        .map_err(|e| CallFailure::before_sending(e.to_string()))?;
    let url = entry.url();
    let ex = Exchange {
        shown: display_url(&url).into_owned(),
        url,
        entry,
        req,
        redact: Redactor::with_key(entry, key.as_ref()),
        key,
        body: build_body(entry, req).to_string(),
    };
    let shared = agent(entry.is_loopback());
    let mut rng = Jitter::from_entropy();
    let mut log: Vec<Attempt> = Vec::new();
    let mut total = Usage::default();
    let began = Instant::now();
    let call_limit = began.checked_add(settings.call_timeout());
    // Whichever comes first bounds the call; the other is never reached.
    let (limit, binding) = match (deadline, call_limit) {
        (Some(d), Some(c)) if c < d => (Some(c), Limit::CallTimeout),
        (Some(d), _) => (Some(d), Limit::Deadline),
        (None, c) => (c, Limit::CallTimeout),
    };
    let ended = |cause: String, log: Vec<Attempt>, total: Usage| CallFailure {
        cause: ex.redact.cleaned(&cause),
        retryable: false,
        attempts: log.len() as u32,
        shown_output: false,
        usage: total,
        deadline_reached: binding == Limit::Deadline,
        call_timed_out: binding == Limit::CallTimeout,
        cancelled: false,
        status: log.last().and_then(|a| a.status),
        attempt_log: log,
    };

    loop {
        if cancel.is_some_and(Cancel::is_cancelled) {
            return Err(cancelled(&ex.wording(), log, total));
        }
        let now = Instant::now();
        let started = std::time::SystemTime::now();
        let Some(timeout) = retry::request_timeout(settings.timeout(), limit, now) else {
            let cause = match (binding, log.len()) {
                (Limit::Deadline, 0) => {
                    format!(
                        "the deadline passed before the request to {} was sent",
                        ex.shown
                    )
                }
                (Limit::Deadline, n) => {
                    format!("the deadline passed after {n} attempts to {}", ex.shown)
                }
                (Limit::CallTimeout, n) => over_time(&ex.wording(), settings, n as u32),
            };
            return Err(ended(cause, log, total));
        };
        // A call that can be cancelled gets an agent of its own, so shutting it down
        // closes this call's connection and no other's.
        let own = cancel.map(|_| Agent::new_with_config(builder(entry.is_loopback()).build()));
        let registered = match (cancel, &own) {
            (Some(c), Some(a)) => match c.register(a) {
                Some(r) => Some(r),
                None => return Err(cancelled(&ex.wording(), log, total)),
            },
            _ => None,
        };
        let outcome = attempt(
            own.as_ref().unwrap_or(shared),
            &ex,
            timeout,
            limit,
            &mut on_piece,
        );
        drop(registered);
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
                if ex.redact.has_secrets() {
                    // A provider that echoes the key into an answer does not get it to the program.
                    if let std::borrow::Cow::Owned(c) = ex.redact.clean_secrets(&reply.content) {
                        reply.content = c;
                    }
                    for tc in &mut reply.tool_calls {
                        scrub_json(&ex.redact, &mut tc.arguments);
                    }
                }
                for said in [
                    &mut reply.refusal,
                    &mut reply.response_id,
                    &mut reply.response_model,
                    &mut reply.finish_reason,
                ]
                .into_iter()
                .flatten()
                {
                    ex.redact.clean_in_place(said);
                }
                return Ok(reply);
            }
            Err(mut cause) => {
                if cancel.is_some_and(Cancel::is_cancelled) {
                    // The request was sent and abandoned: the provider may have read the
                    // prompt, so it is charged what reading it costs.
                    if cause.usage.is_zero() {
                        cause.usage.input_tokens =
                            crate::token_estimate::request_tokens(entry, req);
                    }
                    total.add(cause.usage);
                    log.push(Attempt {
                        status: cause.status,
                        started,
                        usage: cause.usage,
                        duration,
                        error: Some("cancelled".into()),
                    });
                    let mut f = cancelled(&ex.wording(), log, total);
                    f.shown_output = cause.shown;
                    return Err(f);
                }
                cause.at_limit &= limit.is_some();
                total.add(cause.usage);
                log.push(Attempt {
                    status: cause.status,
                    started,
                    usage: cause.usage,
                    duration,
                    error: Some(ex.redact.cleaned(&cause.line())),
                });
                let attempts = log.len() as u32;
                if cause.at_limit {
                    return Err(at_limit(
                        &ex.wording(),
                        cause,
                        binding,
                        settings,
                        total,
                        log,
                    ));
                }
                let next = if cause.shown {
                    Next::Stop(Stop::NotRetryable)
                } else {
                    retry::plan(
                        attempts,
                        cause.retryable,
                        cause.retry_after,
                        settings,
                        limit,
                        &mut rng,
                    )
                };
                match next {
                    Next::RetryAfter(delay) => {
                        let woke = match cancel {
                            Some(c) => c.sleep(delay),
                            None => {
                                if !delay.is_zero() {
                                    std::thread::sleep(delay);
                                }
                                true
                            }
                        };
                        if !woke {
                            return Err(cancelled(&ex.wording(), log, total));
                        }
                    }
                    Next::Stop(stop) => {
                        return Err(failure(
                            &ex.wording(),
                            cause,
                            stop,
                            binding,
                            settings,
                            total,
                            log,
                        ));
                    }
                }
            }
        }
    }
}

fn header(resp: &ureq::http::Response<ureq::Body>, name: &str) -> Option<String> {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

fn attempt(
    agent: &Agent,
    ex: &Exchange,
    timeout: Duration,
    limit: Option<Instant>,
    on_piece: &mut Option<&mut dyn FnMut(&str)>,
) -> Result<(u16, Reply), Cause> {
    let (url, api, stream) = (ex.shown.as_str(), ex.entry.api, ex.req.stream);
    let mut cfg = agent
        .post(&ex.url)
        .config()
        .timeout_connect(Some(timeout))
        .timeout_send_request(Some(timeout))
        .timeout_send_body(Some(timeout));
    cfg = if stream {
        // A stream may run longer than one timeout; it is bounded by silence and the limit.
        let left = limit.and_then(|d| d.checked_duration_since(Instant::now()));
        cfg.timeout_global(left)
            .timeout_recv_response(Some(timeout))
            .timeout_per_read(Some(timeout))
    } else {
        cfg.timeout_global(Some(timeout))
    };
    let mut rb = cfg.build().header("content-type", "application/json");
    if let Some(key) = &ex.key {
        rb = rb.header("authorization", format!("Bearer {}", key.expose()));
    }
    if stream && api == Api::OpenAi {
        rb = rb.header("accept", "text/event-stream");
    }
    let mut resp = rb
        .send(ex.body.as_bytes())
        .map_err(|e| classify(e, url, timeout, limit))?;
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
        c.detail = provider_detail(&ex.redact.clean(&text));
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
            .map_err(|e| with_status(classify(e, url, timeout, limit), status))?;
        let reply = parse_reply(api, &bytes).map_err(|e| {
            let mut c = Cause::new(format!("malformed reply from {url}"), false);
            c.detail = Some(e.0);
            c.status = Some(status);
            c
        })?;
        // A server that ignored `stream: true` still hands its answer over, in one piece.
        if stream && !reply.content.is_empty() {
            if let Some(f) = on_piece.as_mut() {
                f(&ex.redact.clean_secrets(&reply.content));
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
        // A stream cut short after part of an answer arrived spent tokens on it: what it
        // reported, or the estimate a reply reporting nothing is charged.
        c.usage = if assembler.usage_reported() || !assembler.has_answer() {
            assembler.usage()
        } else {
            crate::usage_estimate::usage_or_estimate(&assembler.partial(), ex.entry, ex.req)
        };
        c
    };
    loop {
        let (events, eof) = match reader.read(&mut buf) {
            Ok(0) => (decoder.finish(), true),
            Ok(n) => (decoder.feed(&buf[..n]), false),
            Err(e) => {
                return Err(fail(
                    classify_read(e, url, timeout, limit),
                    shown,
                    &assembler,
                ))
            }
        };
        let events = events.map_err(|e| {
            let mut c = Cause::new(format!("stream from {url} broke"), true);
            c.detail = Some(e.0);
            fail(c, shown, &assembler)
        })?;
        for ev in &events {
            if let StreamEvent::Piece(text) = ev {
                if let Some(f) = on_piece.as_mut() {
                    f(&ex.redact.clean_secrets(text));
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

/// Every string inside a JSON value with the configured secrets replaced.
fn scrub_json(redact: &Redactor, v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => {
            if let std::borrow::Cow::Owned(c) = redact.clean_secrets(s) {
                *s = c;
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|i| scrub_json(redact, i)),
        serde_json::Value::Object(m) => m.values_mut().for_each(|i| scrub_json(redact, i)),
        _ => {}
    }
}
