//! A tool loop's turns and tool calls as effects of their own, so a killed loop resumes mid-way.
//!
//! The loop is one `Model` effect (the budget meters it); inside it each model request is a
//! `model_turn` effect and each tool call a `tool` effect, named under the loop's slot. A
//! durable run journals each as it ends: a resume replays the turns already answered (no
//! request, no tokens spent again) and the tool calls already made (their results and what
//! they printed), and continues from the first one that was not journaled. A tool is the
//! program's own code, so one cut off mid-way simply runs again: its own writes are marked
//! and replayed like any other.

use serde_json::{json, Value as Json};

use kora_check::hir::AnalyzeCall;
use kora_models::{ModelEntry, Request, Settings, ToolCall};

use crate::agents::cassette::{Entry, KeyMaterial, Mode, Usage};
use crate::agents::model_effect::{decoded, failure_outcome, reply_outcome};
use crate::agents::model_span::{Answered, ModelObs};
use crate::agents::tool_loop::{calls_json, usage_of, Ran, ToolDecl};
use crate::durable::effect::{Begun, Class, Effect, Kind, Recordable, Stop};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;

/// What one turn needs from its loop.
pub(crate) struct TurnCtx<'a> {
    pub call: &'a AnalyzeCall,
    pub entry: &'a ModelEntry,
    pub req: &'a Request,
    pub settings: &'a Settings,
    pub mode: Mode,
    pub shape: &'a kora_models::Shape,
    /// The loop's own effect: a turn's tokens are reported on it.
    pub effect: &'a Effect<'a>,
    /// How many turns asked for tools before this one.
    pub turn: u32,
}

/// How a turn ended.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Turned {
    /// The model's reply: an answer (`{"ok"|"uncertain": ..}`) or tool calls.
    Reply(Json),
    /// The loop ends with this outcome (`{"failed": ..}`, `{"exhausted": ..}`).
    End(Json),
}

/// A turn's journal record: how it ended and what it cost.
struct TurnRecord {
    turned: Turned,
    usage: Usage,
}

impl Recordable for TurnRecord {
    fn to_record(&self) -> Json {
        let usage = json!({"input_tokens": self.usage.input_tokens, "output_tokens": self.usage.output_tokens});
        match &self.turned {
            Turned::Reply(j) => json!({"reply": j, "usage": usage}),
            Turned::End(j) => json!({"end": j, "usage": usage}),
        }
    }

    fn from_record(j: &Json) -> Option<TurnRecord> {
        let turned = match (j.get("reply"), j.get("end")) {
            (Some(r), None) => Turned::Reply(r.clone()),
            (None, Some(e)) => Turned::End(e.clone()),
            _ => return None,
        };
        let usage = j.get("usage")?;
        Some(TurnRecord {
            turned,
            usage: Usage {
                input_tokens: usage.get("input_tokens")?.as_u64()?,
                output_tokens: usage.get("output_tokens")?.as_u64()?,
            },
        })
    }
}

/// A tool call's journal record: the arguments it ran with, its result, what it printed, and
/// the outcome it ended the loop with (a foreign tool that got no answer).
struct ToolRecord {
    args: Json,
    result: Json,
    shown: String,
    end: Option<Json>,
}

impl Recordable for ToolRecord {
    fn to_record(&self) -> Json {
        let mut j = json!({"args": self.args, "result": self.result, "shown": self.shown});
        if let Some(end) = &self.end {
            j["end"] = end.clone();
        }
        j
    }

    fn from_record(j: &Json) -> Option<ToolRecord> {
        Some(ToolRecord {
            args: j.get("args")?.clone(),
            result: j.get("result")?.clone(),
            shown: j.get("shown")?.as_str()?.to_string(),
            end: j.get("end").cloned(),
        })
    }
}

fn refused(what: &str, e: &Effect, stop: Stop) -> Box<RtError> {
    let why = match stop {
        Stop::Refused(why) | Stop::BadRecord(why) => why,
        Stop::Exhausted(m) => format!("the budget's {} ran out", m.name()),
    };
    RtError::new(
        codes::EFFECT_REFUSED,
        format!("{what} of the tool loop at {} was refused: {why}", e.op),
    )
}

impl Interp<'_> {
    /// One turn through the pipeline: replayed from the journal when an earlier process of
    /// this run got its answer (its tokens are charged as recorded), else `live`.
    pub(crate) fn journaled_turn(
        &mut self,
        turn: &Effect,
        outer: &Effect,
        spent: &mut Usage,
        obs: &mut ModelObs,
        live: impl FnOnce(&mut Self, &mut ModelObs, &mut Usage) -> RtResult<Turned>,
    ) -> RtResult<Turned> {
        match self.host().pipeline.begin::<TurnRecord>(turn) {
            Begun::Perform => {}
            Begun::Done(Ok(r)) => {
                obs.input_tokens += r.usage.input_tokens;
                obs.output_tokens += r.usage.output_tokens;
                self.spend(outer, spent, r.usage);
                return Ok(r.turned);
            }
            // A turn that raised (a cassette miss) is asked again.
            Begun::Done(Err(_)) => return live(self, obs, spent),
            Begun::Stopped(s) => return Err(refused("a turn", turn, s)),
        }
        let before = *spent;
        let turned = live(self, obs, spent);
        let record = match &turned {
            Ok(t) => Ok(TurnRecord {
                turned: t.clone(),
                usage: Usage {
                    input_tokens: spent.input_tokens - before.input_tokens,
                    output_tokens: spent.output_tokens - before.output_tokens,
                },
            }),
            Err(_) => Err("raised".to_string()),
        };
        self.host().pipeline.finish(turn, &record);
        turned
    }

    /// One tool call through the pipeline: replayed (result and output) when journaled.
    pub(crate) fn journaled_tool(
        &mut self,
        call: &AnalyzeCall,
        tools: &[ToolDecl],
        tc: &ToolCall,
    ) -> RtResult<Ran> {
        let op = format!("{}#tool", call.site);
        let e = Effect {
            kind: Kind::Tool,
            class: Class::Effect,
            op: &op,
            call: "tool",
            target: &tc.name,
        };
        let perform = match self.host().pipeline.begin::<ToolRecord>(&e) {
            Begun::Perform => true,
            Begun::Done(Ok(r)) => {
                self.write(&r.shown)?;
                return Ok(Ran {
                    args: r.args,
                    result: r.result,
                    end: r.end,
                });
            }
            Begun::Done(Err(_)) => false,
            Begun::Stopped(s) => return Err(refused("a tool call", &e, s)),
        };
        let before = self.loop_output.as_ref().map_or(0, String::len);
        let ran = self.run_tool_call(call, tools, tc);
        if perform {
            let shown = self
                .loop_output
                .as_ref()
                .and_then(|s| s.get(before..))
                .unwrap_or("")
                .to_string();
            let record = match &ran {
                Ok(r) => Ok(ToolRecord {
                    args: r.args.clone(),
                    result: r.result.clone(),
                    shown,
                    end: r.end.clone(),
                }),
                Err(_) => Err("raised".to_string()),
            };
            self.host().pipeline.finish(&e, &record);
        }
        ran
    }

    /// One model turn of a tool loop, from the cassette or the provider: the model's reply, or
    /// the loop's outcome when the turn ends it (a failure, a reply that does not fit).
    pub(crate) fn turn_answer(
        &mut self,
        c: &TurnCtx,
        key: String,
        turn_material: &KeyMaterial,
        obs: &mut ModelObs,
        spent: &mut Usage,
        recorded: &mut Vec<Entry>,
    ) -> RtResult<Turned> {
        let mode = c.mode;
        let models = self.models.as_ref().map(crate::agents::analyze::lock);
        let replayed = match (mode, models.as_ref().and_then(|m| m.cassette.as_ref())) {
            (Mode::Record, _) | (_, None) => None,
            (_, Some(c)) => c.get(&key).cloned(),
        };
        drop(models);
        let answer: Json = match replayed {
            Some(rec) => {
                obs.answered = Answered::Cassette;
                obs.input_tokens += rec.usage.input_tokens;
                obs.output_tokens += rec.usage.output_tokens;
                // A replayed turn costs the budget what it cost when it was recorded.
                self.spend(c.effect, spent, rec.usage);
                rec.outcome
            }
            None if mode == Mode::Replay => {
                let models = self.models.as_ref().map(crate::agents::analyze::lock);
                let why = models
                    .as_ref()
                    .and_then(|m| m.cassette.as_ref())
                    .map(|c| c.explain_miss(turn_material))
                    .unwrap_or_else(|| "no cassette is open".into());
                return Err(RtError::new(
                    codes::REPLAY_MISS,
                    format!("no recorded answer for turn {} of the tool loop at {}: {why}; record it with `kora run --record`", c.turn + 1, c.call.site),
                ));
            }
            None => {
                obs.answered = Answered::Model;
                // The transport is given the budget's deadline, so a stalled turn is cut off.
                let deadline = self.budget_chain().deadline();
                let cancel = self.cancel.clone();
                let result = kora_models::call_cancellable(
                    c.entry,
                    c.settings,
                    c.req,
                    deadline,
                    cancel.as_ref(),
                    None,
                );
                let reply = match result {
                    Err(failure) => {
                        obs.input_tokens += failure.usage.input_tokens;
                        obs.output_tokens += failure.usage.output_tokens;
                        obs.failure = Some(failure.cause.clone());
                        obs.attempts.extend(failure.attempt_log.iter().cloned());
                        self.spend(c.effect, spent, usage_of(&failure.usage));
                        if failure.cancelled {
                            // The race this branch ran in was decided: the branch ends.
                            return Err(crate::eval::exec::lost_race());
                        }
                        return Ok(Turned::End(failure_outcome(&failure, deadline, obs)));
                    }
                    Ok(r) => r,
                };
                let mut reply = reply;
                obs.input_tokens += reply.usage.input_tokens;
                obs.output_tokens += reply.usage.output_tokens;
                self.spend(c.effect, spent, usage_of(&reply.usage));
                obs.attempts.extend(std::mem::take(&mut reply.attempts));
                obs.reply_seen(&reply);
                let j = match reply_outcome(&reply, c.entry, obs) {
                    // Truncated: a failure, which no cassette keeps.
                    Some(end) if end.get("failed").is_some() => return Ok(Turned::End(end)),
                    // A refusal: the model's answer, as `Uncertain`.
                    Some(refused) => refused,
                    None if reply.tool_calls.is_empty() => {
                        match decoded(&reply.content, c.shape, c.entry, obs) {
                            j if j.get("failed").is_some() => return Ok(Turned::End(j)),
                            j => j,
                        }
                    }
                    None => {
                        json!({ "tool_calls": calls_json(&reply.tool_calls), "content": reply.content })
                    }
                };
                recorded.push(Entry {
                    key,
                    material: turn_material.clone(),
                    outcome: j.clone(),
                    usage: Usage {
                        input_tokens: reply.usage.input_tokens,
                        output_tokens: reply.usage.output_tokens,
                    },
                });
                j
            }
        };
        Ok(Turned::Reply(answer))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_and_tool_records_read_back_as_written() {
        for turned in [
            Turned::Reply(json!({"tool_calls": [{"id": "1", "name": "t", "arguments": {}}]})),
            Turned::End(json!({"failed": "schema: $.x"})),
        ] {
            let r = TurnRecord {
                turned: turned.clone(),
                usage: Usage {
                    input_tokens: 3,
                    output_tokens: 4,
                },
            };
            let back = TurnRecord::from_record(&r.to_record()).expect("reads back");
            assert_eq!(back.turned, turned);
            assert_eq!((back.usage.input_tokens, back.usage.output_tokens), (3, 4));
        }
        assert!(TurnRecord::from_record(&json!({"usage": {}})).is_none());
        let t = ToolRecord {
            args: json!({"city": "Paris"}),
            result: json!(21),
            shown: "tool ran\n".into(),
            end: None,
        };
        let back = ToolRecord::from_record(&t.to_record()).expect("reads back");
        assert_eq!(
            (back.args, back.result, back.shown),
            (t.args, t.result, t.shown)
        );
    }
}
