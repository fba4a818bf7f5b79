//! The spans of one model call: what `analyze` observed, reported to the tracer as a
//! `chat {model}` span (GenAI semantic conventions) with one child span per HTTP attempt.
//!
//! Every attempt carries its own status and token usage, and the call's
//! usage is the sum over its attempts, so a retried call's cost is never
//! hidden behind its final answer.

use std::time::SystemTime;

use kora_check::hir::AnalyzeCall;
use kora_models::{Api, Attempt, ModelEntry, Reply};
use kora_syntax::ast::FuncKind;

use crate::error::RtResult;
use crate::eval::interp::Interp;
use crate::observe::trace::{
    AttrValue, ModelCallSpan, SpanId, SpanKind, SpanStatus, Spend, Tracer,
};
use crate::value::Value;

/// Who answered a model call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Answered {
    /// Nothing answered: the call stopped before (a configuration error, a mock mismatch).
    #[default]
    Nobody,
    Mock,
    Cassette,
    Model,
}

/// What `analyze` saw while making one call, filled in as it goes.
#[derive(Default)]
pub(crate) struct ModelObs {
    pub model: Option<String>,
    pub provider: Option<&'static str>,
    pub answered: Answered,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub attempts: Vec<Attempt>,
    /// Why the call ended `Failed`, when it did.
    pub failure: Option<String>,
    /// The most earlier exchanges the context fence left out of one request.
    pub dropped_exchanges: usize,
    /// Model requests a tool loop made (0 for a call without tools).
    pub turns: u64,
    /// When the call began, when it is traced.
    pub start: Option<SystemTime>,
    /// The call's span, once its model is known and the span is open.
    pub span: Option<SpanId>,
    /// `error.type` when the runtime knows the kind of failure better than the last attempt
    /// does: `schema`, `truncated`, `call_timeout`, `cancelled`.
    pub error_kind: Option<&'static str>,
    /// What the provider said about its (last) reply: already redacted by the transport.
    pub response_id: Option<String>,
    pub response_model: Option<String>,
    pub finish_reasons: Vec<String>,
    /// The entry's endpoint host and port (`server.address`, `server.port`).
    pub server: Option<(String, Option<u16>)>,
    /// The entry's `max_output_tokens` (`gen_ai.request.max_tokens`).
    pub max_tokens: Option<u32>,
}

impl ModelObs {
    pub fn provider_of(api: Api) -> &'static str {
        match api {
            Api::OpenAi => "openai",
            Api::Ollama => "ollama",
        }
    }

    /// Whether the call is traced: what only a span shows is gathered only then.
    fn traced(&self) -> bool {
        self.start.is_some()
    }

    /// Notes which entry the call goes to: its model, provider, server and limit.
    pub fn entry_seen(&mut self, entry: &ModelEntry) {
        self.model = Some(entry.name.clone());
        self.provider = Some(ModelObs::provider_of(entry.api));
        if self.traced() {
            self.server = server_of(&entry.endpoint);
            self.max_tokens = entry.max_output_tokens;
        }
    }

    /// Notes what the provider said about a reply (a tool loop's last turn wins).
    pub fn reply_seen(&mut self, reply: &Reply) {
        if !self.traced() {
            return;
        }
        self.response_id.clone_from(&reply.response_id);
        self.response_model.clone_from(&reply.response_model);
        self.finish_reasons = reply.finish_reason.iter().cloned().collect();
    }
}

/// The host and port of an endpoint URL, without userinfo (`server.address`, `server.port`).
pub(crate) fn server_of(url: &str) -> Option<(String, Option<u16>)> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6.split_once(']')?;
        (h, after.strip_prefix(':'))
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    if host.is_empty() {
        return None;
    }
    let port = port.and_then(|p| p.parse().ok()).or(match scheme {
        "https" => Some(443),
        "http" => Some(80),
        _ => None,
    });
    Some((host.to_string(), port))
}

impl Interp<'_> {
    /// Opens the call's span once its model is known, for a call with tools: it stays the
    /// innermost open span until the call ends, so agents its tools call nest under it. A
    /// call without tools runs nothing inside it, and its span is reported whole at its end.
    pub(crate) fn open_model_span(&mut self, obs: &mut ModelObs) {
        let (Some(t), Some(start)) = (self.tracing.as_mut(), obs.start) else {
            return;
        };
        let model = obs.model.as_deref().unwrap_or("unknown");
        obs.span = Some(t.open_nested(SpanKind::ModelCall, "chat ", model, start));
    }

    /// Reports one finished model call (and its attempts) to the tracer.
    pub(crate) fn trace_model_call(
        &mut self,
        call: &AnalyzeCall,
        start: SystemTime,
        obs: &ModelObs,
        result: &RtResult<Value>,
    ) {
        // Borrowed, not cloned: the frames and the tracer are separate fields.
        let agent = self.frame_slots[..self.live_frames]
            .iter()
            .rev()
            .find(|f| f.func().kind == FuncKind::Agent)
            .map(|f| f.func().name.as_str());
        let Some(t) = self.tracing.as_mut() else {
            return;
        };
        let model = obs.model.as_deref().unwrap_or("unknown");
        let answered = match obs.answered {
            Answered::Nobody => "nobody",
            Answered::Mock => "mock",
            Answered::Cassette => "cassette",
            Answered::Model => "model",
        };
        let reached = matches!(obs.answered, Answered::Cassette | Answered::Model);
        if reached {
            t.charge(Spend {
                input_tokens: obs.input_tokens,
                output_tokens: obs.output_tokens,
                calls: 1,
                steps: obs.turns.max(1),
            });
        }
        // Messages are never copied into a span: a runtime error or a provider's
        // text can quote program values, and a classified one must not leak here.
        let mut outcome = None;
        let mut failed_kind = None;
        let (error, status) = match result {
            Err(e) => (Some(e.code), SpanStatus::Error),
            Ok(Value::Outcome(o)) => {
                outcome = Some(o.tag.kind());
                // A mock's own `Failed("why")` is a program value: only the runtime's cause is shown.
                if obs.failure.is_some() || o.tag == crate::value::OutcomeTag::Failed {
                    failed_kind = Some(match obs.error_kind {
                        Some(k) => k.to_string(),
                        None => obs.attempts.last().map_or("failed".to_string(), |a| {
                            if a.error.is_some() {
                                error_type(a.status)
                            } else {
                                "schema".to_string()
                            }
                        }),
                    });
                    (None, SpanStatus::Error)
                } else {
                    (None, SpanStatus::Ok)
                }
            }
            Ok(_) => (None, SpanStatus::Ok),
        };
        let record = ModelCallSpan {
            model,
            provider: obs.provider,
            agent,
            site: &call.site,
            answered,
            usage: reached.then_some((obs.input_tokens, obs.output_tokens)),
            attempts: obs.attempts.len(),
            dropped_exchanges: obs.dropped_exchanges,
            outcome,
            error_type: error.or(failed_kind.as_deref()),
            response_id: obs.response_id.as_deref(),
            response_model: obs.response_model.as_deref(),
            finish_reasons: &obs.finish_reasons,
            server_address: obs.server.as_ref().map(|(h, _)| h.as_str()),
            server_port: obs.server.as_ref().and_then(|(_, p)| *p),
            max_tokens: obs.max_tokens,
        };
        let end = SystemTime::now();
        match obs.span {
            Some(id) => {
                // Everything opened inside the call has closed by now; the call's span is on top.
                if let Some(at) = t.open.iter().rposition(|&o| o == id) {
                    t.open.truncate(at);
                }
                if !obs.attempts.is_empty() {
                    trace_attempts(t.sink.as_mut(), id, model, &obs.attempts);
                }
                t.sink.close_model_call(id, &record, end, status);
            }
            None => {
                // Nothing ran inside it, so its span is reported whole; the attempts follow
                // it under its id, which no tracer needs to have seen closing last.
                let parent = t.open.last().copied();
                let id = t.sink.model_call(parent, start, &record, end, status);
                if !obs.attempts.is_empty() {
                    trace_attempts(t.sink.as_mut(), id, model, &obs.attempts);
                }
            }
        }
    }
}

/// One child span per HTTP attempt of the call whose span is `span`.
fn trace_attempts(sink: &mut dyn Tracer, span: SpanId, model: &str, attempts: &[Attempt]) {
    for (i, a) in attempts.iter().enumerate() {
        let id = sink.open_named(
            SpanKind::Attempt,
            "attempt ",
            &(i + 1).to_string(),
            Some(span),
            a.started,
        );
        sink.attr(id, "gen_ai.operation.name", AttrValue::Static("chat"));
        sink.attr_str(id, "gen_ai.request.model", model);
        sink.attr(id, "kora.attempt", AttrValue::count(i as u64 + 1));
        sink.attr(
            id,
            "gen_ai.usage.input_tokens",
            AttrValue::count(a.usage.input_tokens),
        );
        sink.attr(
            id,
            "gen_ai.usage.output_tokens",
            AttrValue::count(a.usage.output_tokens),
        );
        if let Some(code) = a.status {
            sink.attr(
                id,
                "http.response.status_code",
                AttrValue::count(u64::from(code)),
            );
        }
        // A provider's error text may quote the request back, so only its kind is kept.
        let status = match &a.error {
            None => SpanStatus::Ok,
            Some(_) => {
                sink.attr_str(id, "error.type", &error_type(a.status));
                SpanStatus::Error
            }
        };
        sink.close(id, a.started + a.duration, status, None);
    }
}

/// `error.type` of a failed attempt: the HTTP status when one came back.
fn error_type(status: Option<u16>) -> String {
    match status {
        Some(code) => code.to_string(),
        None => "transport".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_are_read_off_endpoints() {
        assert_eq!(
            server_of("https://u:p@api.example.com/v1"),
            Some(("api.example.com".into(), Some(443)))
        );
        assert_eq!(
            server_of("http://127.0.0.1:11434"),
            Some(("127.0.0.1".into(), Some(11434)))
        );
        assert_eq!(
            server_of("http://[::1]:8080/v1"),
            Some(("::1".into(), Some(8080)))
        );
        assert_eq!(server_of("no scheme"), None);
        assert_eq!(server_of("http:///v1"), None);
    }
}
