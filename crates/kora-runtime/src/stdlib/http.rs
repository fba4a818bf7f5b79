//! `http`: GET and POST with a timeout always set, GET retried with jittered backoff, failures as `Err`.
//!
//! The defect fixed: `requests.get(url)` waits forever by default and never
//! retries, and a 404 is a normal return that is easy to miss. Here every
//! call has a timeout (30 s unless given), a GET is retried on connection
//! failures, timeouts, 429 and 5xx (honouring `Retry-After`), and a status of
//! 400 or more is an `Err` carrying the status and the start of the body.
//! In a durable run a POST carries an `Idempotency-Key` derived from the run and
//! the effect, so a person who resumes with `--retry` after a kill repeats it
//! safely against a server that honours the header.

use std::time::{Duration, Instant, SystemTime};

use serde_json::Value as Json;
use ureq::Agent;

use kora_check::std_api::StdFn;

use super::{err, ok, Args};
use crate::durable::effect::{Intent, Kind, Observation, Recordable, Sending};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::{Dict, Key, Value};

const ATTEMPTS: u32 = 3;
const MAX_BODY: u64 = 64 << 20;
const DEFAULT_TIMEOUT: f64 = 30.0;

struct Resp {
    status: u16,
    body: String,
    headers: Vec<(String, String)>,
}

impl Recordable for Resp {
    fn to_record(&self) -> Json {
        serde_json::json!({ "status": self.status, "body": self.body, "headers": self.headers })
    }
    fn from_record(j: &Json) -> Option<Resp> {
        let headers = j
            .get("headers")?
            .as_array()?
            .iter()
            .map(|h| {
                Some((
                    h.get(0)?.as_str()?.to_string(),
                    h.get(1)?.as_str()?.to_string(),
                ))
            })
            .collect::<Option<_>>()?;
        Some(Resp {
            status: u16::try_from(j.get("status")?.as_u64()?).ok()?,
            body: j.get("body")?.as_str()?.to_string(),
            headers,
        })
    }
}

/// Why one attempt failed, and whether another may help.
struct Failure {
    why: String,
    retry: bool,
    after: Option<Duration>,
}

fn agent(loopback: bool) -> Agent {
    let mut b = Agent::config_builder()
        .http_status_as_error(false)
        .user_agent(concat!("kora/", env!("CARGO_PKG_VERSION")));
    if loopback {
        b = b.proxy(None);
    }
    Agent::new_with_config(b.build())
}

fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map(|x| x.1).unwrap_or(url);
    let host = rest.split(['/', '?']).next().unwrap_or("");
    let host = host.rsplit_once('@').map(|x| x.1).unwrap_or(host);
    host.starts_with("127.") || host.starts_with("localhost") || host.starts_with("[::1]")
}

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    let name = a.name();
    let url = a.str(0)?.to_string();
    let post = a.func == StdFn::HttpPost;
    let (hi, ti) = if post { (2, 3) } else { (1, 2) };
    let headers = a.str_dict(hi)?;
    let timeout = a.float(ti, DEFAULT_TIMEOUT)?;
    if !(timeout > 0.0 && timeout <= 3600.0) {
        return Err(RtError::new(
            codes::STD_VALUE,
            format!("`{name}`: timeout must be between 0 and 3600 seconds, got {timeout}"),
        ));
    }
    let timeout = Duration::from_secs_f64(timeout);
    let body = if post {
        match a.get(1) {
            None => Some((String::new(), None)),
            Some(Value::Str(s)) => {
                Some((s.as_str().to_string(), Some("text/plain; charset=utf-8")))
            }
            Some(v) => {
                let mut s = String::new();
                super::json::encode(&it.prog, v, None, 0, &mut s)
                    .map_err(|m| RtError::new(codes::NOT_ENCODABLE, m))?;
                Some((s, Some("application/json")))
            }
        }
    } else {
        None
    };
    let _ = it.flush_out();
    // A budget's `max_seconds` bounds each request and every wait between them.
    let deadline = it.budget_chain().deadline();
    let host = it.host();
    let mut jitter = host.rng.clone();
    let run = host.run_id.clone();
    let mut headers = headers;
    let r = host.effect(&a.effect(Kind::Http, &url, &name), |s| {
        if post {
            // Nothing on this machine says whether a POST happened: a person decides, and
            // "it happened" replays a response that was never seen (status 0, no body).
            let named = s.intent(&Intent {
                check: None,
                done_as: Some(serde_json::json!({"ok": {"status": 0, "body": "", "headers": []}})),
            });
            let given = headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("idempotency-key"));
            if let (Some(effect), false) = (named, given) {
                headers.push(("Idempotency-Key".into(), idempotency_key(&run, &effect)));
            }
        }
        let agent = agent(is_loopback(&url));
        loop {
            let Some(this_timeout) =
                kora_models::retry::request_timeout(timeout, deadline, Instant::now())
            else {
                return Err(format!(
                    "the budget's time ran out before the request to {url} was sent"
                ));
            };
            match attempt(&agent, &url, &headers, body.as_ref(), this_timeout) {
                Ok(resp) => {
                    s.observe(Observation::Response {
                        status: resp.status,
                        bytes: resp.body.len() as u64,
                    });
                    return Ok(resp);
                }
                Err(f) if f.retry && !post && s.attempt() < ATTEMPTS => {
                    let wait = delay(s, f.after, &mut jitter);
                    if deadline.is_some_and(|d| Instant::now() + wait >= d) {
                        return Err(format!(
                            "{} (the budget's time left no room to retry)",
                            f.why
                        ));
                    }
                    std::thread::sleep(wait);
                    s.retry();
                }
                Err(f) => {
                    let tries = s.attempt();
                    let why = if tries > 1 {
                        format!("{} (after {tries} attempts)", f.why)
                    } else {
                        f.why
                    };
                    return Err(why);
                }
            }
        }
    })?;
    let resp = match r {
        Ok(r) => r,
        Err(why) => return Ok(err(why)),
    };
    if resp.status >= 400 {
        let mut excerpt: String = resp.body.chars().take(200).collect();
        if resp.body.chars().count() > 200 {
            excerpt.push_str("...");
        }
        return Ok(err(format!(
            "HTTP {} from {url}: {}",
            resp.status,
            excerpt.trim()
        )));
    }
    let mut hd = Dict::default();
    for (k, v) in &resp.headers {
        hd.insert(Key(Value::str(k.as_str())), Value::str(v.as_str()));
    }
    // Seam for labels: the body becomes `unverified` here.
    let fields = vec![
        Value::Int(resp.status as i64),
        Value::str(resp.body),
        Value::dict(hd),
    ];
    Ok(ok(match it.host().types.response {
        Some(t) => it.std_record(t, fields),
        None => Value::tuple(fields),
    }))
}

/// The same for every attempt of one effect of one run, different for any other.
fn idempotency_key(run: &str, effect: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(run.as_bytes());
    h.update([0]);
    h.update(effect.as_bytes());
    let hex: String = h.finalize()[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("kora-{hex}")
}

/// Exponential backoff with jitter (0.25 s, 0.5 s, ...), or the server's `Retry-After` (at most 10 s).
fn delay(s: &Sending, after: Option<Duration>, rng: &mut fastrand::Rng) -> Duration {
    if let Some(d) = after {
        return d.min(Duration::from_secs(10));
    }
    let base = 250u64 << (s.attempt() - 1).min(6);
    Duration::from_millis(base / 2 + rng.u64(0..=base / 2))
}

fn attempt(
    agent: &Agent,
    url: &str,
    headers: &[(String, String)],
    body: Option<&(String, Option<&str>)>,
    timeout: Duration,
) -> Result<Resp, Failure> {
    let sent = match body {
        None => {
            let mut rb = agent
                .get(url)
                .config()
                .timeout_global(Some(timeout))
                .build();
            for (k, v) in headers {
                rb = rb.header(k.as_str(), v.as_str());
            }
            rb.call()
        }
        Some((text, ctype)) => {
            let mut rb = agent
                .post(url)
                .config()
                .timeout_global(Some(timeout))
                .build();
            let mut has_type = false;
            for (k, v) in headers {
                has_type |= k.eq_ignore_ascii_case("content-type");
                rb = rb.header(k.as_str(), v.as_str());
            }
            if let (false, Some(t)) = (has_type, ctype) {
                rb = rb.header("content-type", *t);
            }
            rb.send(text.as_bytes())
        }
    };
    let mut resp = sent.map_err(|e| failure(e, url, timeout))?;
    let status = resp.status().as_u16();
    let headers: Vec<(String, String)> = resp
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            )
        })
        .collect();
    let after = headers
        .iter()
        .find(|(k, _)| k == "retry-after")
        .and_then(|(_, v)| kora_models::retry::parse_retry_after(v, SystemTime::now()));
    let body = resp
        .body_mut()
        .with_config()
        .limit(MAX_BODY)
        .lossy_utf8(true)
        .read_to_string()
        .map_err(|e| failure(e, url, timeout))?;
    if kora_models::retry::status_retryable(status) {
        return Err(Failure {
            why: format!("HTTP {status} from {url}"),
            retry: true,
            after,
        });
    }
    Ok(Resp {
        status,
        body,
        headers,
    })
}

fn failure(e: ureq::Error, url: &str, timeout: Duration) -> Failure {
    let (why, retry) = match e {
        ureq::Error::Timeout(_) => (
            format!(
                "timed out after {:.3} s waiting for {url}",
                timeout.as_secs_f64()
            ),
            true,
        ),
        ureq::Error::Io(io)
            if io.kind() == std::io::ErrorKind::TimedOut
                || io.kind() == std::io::ErrorKind::WouldBlock =>
        {
            (
                format!(
                    "timed out after {:.3} s waiting for {url}",
                    timeout.as_secs_f64()
                ),
                true,
            )
        }
        ureq::Error::Io(io) => (format!("{url}: {io}"), true),
        ureq::Error::ConnectionFailed => (format!("could not connect to {url}"), true),
        ureq::Error::HostNotFound => (format!("host not found for {url}"), false),
        ureq::Error::BodyExceedsLimit(n) => (
            format!("the response from {url} is larger than {n} bytes"),
            false,
        ),
        ureq::Error::BadUri(u) => (format!("bad URL {u:?}"), false),
        other => (format!("{url}: {other}"), false),
    };
    Failure {
        why,
        retry,
        after: None,
    }
}
