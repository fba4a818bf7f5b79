//! Why a model call failed, in words fit for `Failed(reason)`: transport errors classified
//! where they were observed, the provider's own explanation, and the limits (a deadline,
//! `call_timeout_secs`, a cancel) that end a call. Every reason leaves through the redaction.

use std::fmt;
use std::io::ErrorKind;
use std::time::{Duration, Instant};

use crate::config::Settings;
use crate::redact::Redactor;
use crate::response::{error_message, Usage};
use crate::retry::Stop;
use crate::transport::Attempt;

/// A model call that produced no reply. `cause` is fit for `Failed(reason)`: it has passed
/// the redaction (`redact.rs`), so it names no key, credential or URL password.
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
    /// Whether the caller's deadline (a budget's time) ended the call.
    pub deadline_reached: bool,
    /// Whether `call_timeout_secs` ended the call.
    pub call_timed_out: bool,
    /// Whether the caller cancelled the call (`Cancel`): a `first` race decided elsewhere.
    pub cancelled: bool,
    /// The last HTTP status seen, if any.
    pub status: Option<u16>,
    /// One record per attempt.
    pub attempt_log: Vec<Attempt>,
}

impl CallFailure {
    pub(crate) fn before_sending(cause: String) -> CallFailure {
        CallFailure {
            cause,
            retryable: false,
            attempts: 0,
            shown_output: false,
            usage: Usage::default(),
            deadline_reached: false,
            call_timed_out: false,
            cancelled: false,
            status: None,
            attempt_log: Vec::new(),
        }
    }
}

impl fmt::Display for CallFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.cause)
    }
}

impl std::error::Error for CallFailure {}

/// What a failure's words may name: the endpoint as shown (no userinfo), and the redaction
/// every reason passes.
pub(crate) struct Wording<'a> {
    pub shown: &'a str,
    pub redact: &'a Redactor,
}

/// Why one attempt failed, as observed.
pub(crate) struct Cause {
    /// `HTTP 503 from URL`, `timed out after 2s waiting for URL`, ...
    pub(crate) head: String,
    /// The provider's own words, when it gave any.
    pub(crate) detail: Option<String>,
    pub(crate) retryable: bool,
    pub(crate) status: Option<u16>,
    pub(crate) retry_after: Option<Duration>,
    pub(crate) usage: Usage,
    pub(crate) shown: bool,
    /// A timeout that fired because the call's limit (its deadline or `call_timeout_secs`)
    /// came, not because the provider went quiet for `timeout_secs`.
    pub(crate) at_limit: bool,
}

impl Cause {
    pub(crate) fn new(head: String, retryable: bool) -> Cause {
        Cause {
            head,
            detail: None,
            retryable,
            status: None,
            retry_after: None,
            usage: Usage::default(),
            shown: false,
            at_limit: false,
        }
    }

    pub(crate) fn line(&self) -> String {
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

/// Which limit a call ran into.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Limit {
    /// The caller's deadline (a budget's time).
    Deadline,
    /// `call_timeout_secs`.
    CallTimeout,
}

/// `call_timeout_secs` ran out.
pub(crate) fn over_time(ex: &Wording, settings: &Settings, attempts: u32) -> String {
    let mut text = format!(
        "the call to {} took longer than call_timeout_secs ({})",
        ex.shown,
        human_duration(settings.call_timeout())
    );
    if attempts > 1 {
        text.push_str(&format!(" over {attempts} attempts"));
    }
    text
}

pub(crate) fn cancelled(ex: &Wording, log: Vec<Attempt>, usage: Usage) -> CallFailure {
    CallFailure {
        cause: format!(
            "the call to {} was cancelled: its answer is no longer needed",
            ex.shown
        ),
        retryable: false,
        attempts: log.len() as u32,
        shown_output: false,
        usage,
        deadline_reached: false,
        call_timed_out: false,
        cancelled: true,
        status: log.last().and_then(|a| a.status),
        attempt_log: log,
    }
}

/// An attempt cut off by the call's limit rather than by silence.
pub(crate) fn at_limit(
    ex: &Wording,
    cause: Cause,
    binding: Limit,
    settings: &Settings,
    usage: Usage,
    log: Vec<Attempt>,
) -> CallFailure {
    let attempts = log.len() as u32;
    let text = match binding {
        Limit::Deadline => format!("{} (the deadline came)", cause.head),
        Limit::CallTimeout => over_time(ex, settings, attempts),
    };
    CallFailure {
        cause: ex.redact.cleaned(&text),
        retryable: false,
        attempts,
        shown_output: cause.shown,
        usage,
        deadline_reached: binding == Limit::Deadline,
        call_timed_out: binding == Limit::CallTimeout,
        cancelled: false,
        status: cause.status,
        attempt_log: log,
    }
}

pub(crate) fn failure(
    ex: &Wording,
    cause: Cause,
    stop: Stop,
    binding: Limit,
    settings: &Settings,
    usage: Usage,
    log: Vec<Attempt>,
) -> CallFailure {
    let attempts = log.len() as u32;
    let mut text = cause.head.clone();
    if attempts > 1 {
        text.push_str(&format!(" after {attempts} attempts"));
    }
    if let Some(d) = &cause.detail {
        text.push_str(": ");
        text.push_str(d);
    }
    let at_deadline = stop == Stop::Deadline;
    if at_deadline {
        text.push_str(&match binding {
            Limit::Deadline => " (the deadline left no time to retry)".to_string(),
            Limit::CallTimeout => format!(
                " (call_timeout_secs = {} left no time to retry)",
                human_duration(settings.call_timeout())
            ),
        });
    } else if cause.shown {
        text.push_str(" (output was already shown, so it was not retried)");
    }
    CallFailure {
        cause: ex.redact.cleaned(&text),
        retryable: cause.retryable,
        attempts,
        shown_output: cause.shown,
        usage,
        deadline_reached: at_deadline && binding == Limit::Deadline,
        call_timed_out: at_deadline && binding == Limit::CallTimeout,
        cancelled: false,
        status: cause.status,
        attempt_log: log,
    }
}

/// Maps a transport error to a cause, classified where it was observed.
pub(crate) fn classify(
    err: ureq::Error,
    url: &str,
    timeout: Duration,
    limit: Option<Instant>,
) -> Cause {
    let timed_out = || {
        let mut c = Cause::new(
            format!(
                "timed out after {} waiting for {url}",
                human_duration(timeout)
            ),
            true,
        );
        // Near the limit, the limit is what fired (a stream's global timeout, or a
        // request timeout the limit had shortened).
        c.at_limit = limit.is_some_and(|l| Instant::now() + Duration::from_millis(20) >= l);
        c
    };
    match err {
        ureq::Error::Timeout(_) => timed_out(),
        ureq::Error::Io(e) => match e.kind() {
            ErrorKind::TimedOut | ErrorKind::WouldBlock => timed_out(),
            _ => classify_io(&e, url),
        },
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
        ureq::Error::BadUri(_) => Cause::new(format!("bad endpoint URL {url:?}"), false),
        other => {
            let mut c = Cause::new(format!("request to {url} failed"), false);
            c.detail = Some(other.to_string());
            c
        }
    }
}

pub(crate) fn classify_io(e: &std::io::Error, url: &str) -> Cause {
    match e.kind() {
        ErrorKind::ConnectionRefused => Cause::new(format!("connection refused by {url}"), true),
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
pub(crate) fn classify_read(
    e: std::io::Error,
    url: &str,
    timeout: Duration,
    limit: Option<Instant>,
) -> Cause {
    classify(ureq::Error::from(e), url, timeout, limit)
}

pub(crate) fn with_status(mut c: Cause, status: u16) -> Cause {
    c.status = Some(status);
    c
}

/// The provider's own explanation from an error body, shortened for a one-line reason.
pub(crate) fn provider_detail(text: &str) -> Option<String> {
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
