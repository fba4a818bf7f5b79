//! A model call as an effect: the record its Terminal carries, and the cassette as the observer of one call.
//!
//! The record is `{"outcome": ..., "usage": {...}}` for every way a call can
//! end (`ok`, `uncertain`, `failed`, `exhausted`), so a journal replays a
//! failure too, and a budget replaying a call charges the tokens it cost.
//! The cassette is consulted after the run's attached observers: a budget
//! admits a call before a fixture answers it, so a program under test stops
//! where it would have stopped live.

use serde_json::Value as Json;

use std::time::Instant;

use kora_models::{CallFailure, Decoded, ModelEntry, Redactor, Reply, Shape};

use crate::agents::budget::Meter;
use crate::agents::cassette::{Cassette, Entry, KeyMaterial, Mode, Usage};
use crate::agents::model_span::{Answered, ModelObs};
use crate::durable::effect::{Effect, Observer, Recordable, Verdict};

/// What one model call ended with.
pub(crate) struct ModelAnswer {
    /// `{"ok": v}`, `{"uncertain": r}`, `{"failed": cause}` or `{"exhausted": meter}`.
    pub outcome: Json,
    pub usage: Usage,
    /// The call was cancelled (a `first` race was decided): how many requests it had sent.
    /// Never recorded: a cancelled call's branch ends, and nothing replays it.
    pub cancelled: Option<u32>,
}

impl Recordable for ModelAnswer {
    fn to_record(&self) -> Json {
        serde_json::json!({
            "outcome": self.outcome,
            "usage": {
                "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens,
            },
        })
    }

    fn from_record(j: &Json) -> Option<ModelAnswer> {
        let usage = &j["usage"];
        Some(ModelAnswer {
            outcome: j.get("outcome")?.clone(),
            usage: Usage {
                input_tokens: usage["input_tokens"].as_u64().unwrap_or(0),
                output_tokens: usage["output_tokens"].as_u64().unwrap_or(0),
            },
            cancelled: None,
        })
    }
}

/// What the transport's result means for the program: the outcome it becomes and the tokens
/// it cost, with the trace told which model answered and what went wrong.
pub(crate) fn answer_of(
    result: Result<Reply, CallFailure>,
    shape: Option<&Shape>,
    entry: &ModelEntry,
    deadline: Option<Instant>,
    obs: &mut ModelObs,
) -> ModelAnswer {
    obs.answered = Answered::Model;
    let mut cancelled = None;
    let (outcome, usage) = match result {
        Err(failure) => {
            // trace: spent tokens stay spent, and each attempt is its own span.
            obs.input_tokens = failure.usage.input_tokens;
            obs.output_tokens = failure.usage.output_tokens;
            obs.failure = Some(failure.cause.clone());
            obs.attempts = failure.attempt_log.clone();
            if failure.cancelled {
                cancelled = Some(failure.attempts);
            }
            (failure_outcome(&failure, deadline, obs), failure.usage)
        }
        Ok(mut reply) => {
            // trace: the reply's usage is the sum over its attempts.
            obs.input_tokens = reply.usage.input_tokens;
            obs.output_tokens = reply.usage.output_tokens;
            obs.attempts = std::mem::take(&mut reply.attempts);
            obs.reply_seen(&reply);
            let outcome = match reply_outcome(&reply, entry, obs) {
                Some(o) => o,
                None => match shape {
                    None => serde_json::json!({ "ok": reply.content }),
                    Some(shape) => decoded(&reply.content, shape, entry, obs),
                },
            };
            (outcome, reply.usage)
        }
    };
    ModelAnswer {
        outcome,
        usage: Usage {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
        },
        cancelled,
    }
}

/// The outcome of a call the transport gave up on: `Exhausted("time")` when the budget's
/// deadline ended it, `Failed` with the (already redacted) cause otherwise.
pub(crate) fn failure_outcome(
    failure: &CallFailure,
    deadline: Option<Instant>,
    obs: &mut ModelObs,
) -> Json {
    if failure.deadline_reached && deadline.is_some() {
        return serde_json::json!({ "exhausted": Meter::Time.name() });
    }
    if failure.call_timed_out {
        obs.error_kind = Some("call_timeout");
    } else if failure.cancelled {
        obs.error_kind = Some("cancelled");
    }
    serde_json::json!({ "failed": failure.cause })
}

/// What a reply means before its text is read: a refusal is the model declining
/// (`Uncertain` with its words), and an answer cut at the token limit is `Failed`
/// ("truncated"), whatever text came with either. `None` for an ordinary reply.
pub(crate) fn reply_outcome(reply: &Reply, entry: &ModelEntry, obs: &mut ModelObs) -> Option<Json> {
    if let Some(r) = &reply.refusal {
        let r = r.trim();
        return Some(serde_json::json!({
            "uncertain": if r.is_empty() { "the model refused (no reason given)" } else { r }
        }));
    }
    if reply.truncated() {
        let why = truncated(entry);
        obs.error_kind = Some("truncated");
        obs.failure = Some(why.clone());
        return Some(serde_json::json!({ "failed": why }));
    }
    None
}

/// The reason of an answer cut off at the output token limit, naming the limit.
pub(crate) fn truncated(entry: &ModelEntry) -> String {
    match entry.max_output_tokens {
        Some(n) => format!(
            "truncated: the answer reached the output limit of {n} tokens (`max_output_tokens` of the `{}` model entry) before it was complete; raise the limit or ask for less",
            entry.name
        ),
        None => format!(
            "truncated: the answer reached the provider's own output limit for `{}` before it was complete; set a larger `max_output_tokens` for the entry or ask for less",
            entry.name
        ),
    }
}

/// A typed answer's text read into `{"ok": v}`, `{"uncertain": r}` or `{"failed": "schema: ..."}`;
/// what the model wrote in a reason passes the redaction first.
pub(crate) fn decoded(text: &str, shape: &Shape, entry: &ModelEntry, obs: &mut ModelObs) -> Json {
    match kora_models::decode_outcome(text, shape, entry.structured) {
        Decoded::Ok(v) => serde_json::json!({ "ok": v }),
        Decoded::Uncertain(r) => {
            serde_json::json!({ "uncertain": Redactor::for_entry(entry).cleaned(&r) })
        }
        Decoded::Mismatch(path) => {
            let why = format!("schema: {}", Redactor::for_entry(entry).clean(&path));
            obs.failure = Some(why.clone());
            obs.error_kind = Some("schema");
            serde_json::json!({ "failed": why })
        }
    }
}

/// The cassette's view of one call: answers it at Prepared when it has it, and keeps
/// what a recording run should write once the caller knows the answer fits its type.
pub(crate) struct CassetteSlot {
    pub mode: Mode,
    pub key: String,
    pub material: KeyMaterial,
    /// The cassette's entry for this call, looked up before it (never in record mode).
    found: Option<Entry>,
    /// Why `--replay` has nothing for this call, worked out beside the lookup.
    miss: Option<String>,
    /// The recorded entry that answered, when one did.
    pub replayed: Option<Entry>,
    /// Why `--replay` found nothing to answer with.
    pub missed: Option<String>,
    /// What to write if the outcome is kept (recording runs only).
    pub to_record: Option<Entry>,
}

/// What a cassette slot leaves behind once its call has ended.
pub(crate) struct SlotResult {
    pub replayed: Option<Entry>,
    pub to_record: Option<Entry>,
    pub missed: Option<String>,
}

impl CassetteSlot {
    pub(crate) fn take_result(&mut self) -> SlotResult {
        SlotResult {
            replayed: self.replayed.take(),
            to_record: self.to_record.take(),
            missed: self.missed.take(),
        }
    }

    /// Looks the call up now, so the slot needs no hold on a cassette shared with other branches.
    pub(crate) fn new(
        cassette: Option<&Cassette>,
        mode: Mode,
        material: KeyMaterial,
    ) -> CassetteSlot {
        let key = material.key();
        let found = match mode {
            Mode::Record => None,
            _ => cassette.and_then(|c| c.get(&key)).cloned(),
        };
        let miss = (mode == Mode::Replay && found.is_none()).then(|| {
            cassette
                .map(|c| c.explain_miss(&material))
                .unwrap_or_else(|| "no cassette is open".into())
        });
        CassetteSlot {
            mode,
            key,
            material,
            found,
            miss,
            replayed: None,
            missed: None,
            to_record: None,
        }
    }

    /// Whether an outcome is worth a fixture: answers are, outages and spent budgets are not.
    fn keeps(outcome: &Json) -> bool {
        outcome.get("ok").is_some() || outcome.get("uncertain").is_some()
    }
}

impl Observer for CassetteSlot {
    fn prepared(&mut self, _e: &Effect) -> Verdict {
        if self.mode == Mode::Record {
            return Verdict::Proceed;
        }
        if let Some(rec) = self.found.take() {
            let answer = ModelAnswer {
                outcome: rec.outcome.clone(),
                usage: rec.usage,
                cancelled: None,
            };
            self.replayed = Some(rec);
            return Verdict::Replay(serde_json::json!({ "ok": answer.to_record() }));
        }
        if self.mode == Mode::Replay {
            let why = self
                .miss
                .take()
                .unwrap_or_else(|| "no cassette is open".into());
            self.missed = Some(why.clone());
            return Verdict::Refuse(why);
        }
        Verdict::Proceed
    }

    fn terminal(&mut self, _e: &Effect, ok: bool, record: &dyn Fn() -> Json) {
        if self.mode != Mode::Record || self.replayed.is_some() || !ok {
            return;
        }
        let j = record();
        let Some(answer) = ModelAnswer::from_record(&j["ok"]) else {
            return;
        };
        if Self::keeps(&answer.outcome) {
            self.to_record = Some(Entry {
                key: self.key.clone(),
                material: self.material.clone(),
                outcome: answer.outcome,
                usage: answer.usage,
            });
        }
    }
}
