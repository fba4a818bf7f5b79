//! The tool loop of `analyze(..., tools=[...])`: send the tool schemas, run the tool calls the
//! model asks for, send their results back as attributed, untrusted envelopes, until it answers.
//!
//! One model request per turn, each through the transport with its own retries: a loop
//! that has run three turns never starts over because the fourth request was rate
//! limited. Tools run in the caller's heap, through the same call a direct `f(...)` makes.
//! Arguments from the model are checked against the tool's parameter types first; ones
//! that do not fit go back to the model as an error result rather than stopping the
//! program. `on tool_call` may rewrite the arguments or answer in the tool's place;
//! `on tool_result` may rewrite or replace the result; the history (and so the next
//! turn, the cassette and the trace) records what really ran.
//!
//! One call's arguments, handlers and run are `tool_call.rs`.
//!
//! Cassettes record each turn under its own key: the call's key material plus the tool
//! definitions and the history sent on that turn. Replaying runs the tools again (they are
//! the program's code) and serves each model turn from the cassette, so a tool whose
//! result changed makes the next turn miss, naming the call.

use std::time::{Instant, SystemTime};

use serde_json::{json, Value as Json};

use kora_check::hir::{self, AnalyzeCall};
use kora_models::{ModelEntry, Request, ToolCall, ToolSpec, Turn};
use kora_syntax::ast::FuncKind;

use crate::agents::cassette::{Entry, KeyMaterial, Mode, Usage};
use crate::agents::context_fence::{base_tokens, fit, Fit};
use crate::agents::model_effect::ModelAnswer;
use crate::agents::model_span::ModelObs;
use crate::agents::tool_turn::{TurnCtx, Turned};
use crate::durable::effect::{Begun, Class, Effect, Kind, Observation, Recordable, Stop};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::json::shape_of;
use crate::value::{OutcomeTag, Value};

/// One tool the model was offered.
pub(crate) struct ToolDecl {
    pub value: Value,
    /// A `tool` or `agent` of the program; `None` for a foreign tool.
    pub def: Option<std::sync::Arc<hir::Function>>,
    /// An MCP server's tool (`foreign_tool.rs`).
    pub foreign: Option<crate::agents::foreign_tool::ForeignTool>,
    pub spec: ToolSpec,
}

/// What one tool call did, for its trace span.
#[derive(Clone, Debug)]
pub(crate) struct ToolObs {
    /// The declared name, or `None` when the model named no tool on offer.
    pub name: Option<String>,
    /// The id the model gave the call (provider text: redacted before a span shows it).
    pub call_id: String,
    pub start: SystemTime,
    /// `ran`, `skipped` (the handler answered), `bad_arguments` or `unknown_tool`.
    pub outcome: &'static str,
    pub rewritten_args: bool,
    pub replaced_result: bool,
}

/// The result of one tool call as the history records it.
pub(crate) struct Ran {
    pub args: Json,
    pub result: Json,
    /// The tool got no answer from outside (a foreign tool's `Failed`): the loop ends with
    /// this outcome instead of sending a result back.
    pub end: Option<Json>,
}

impl Interp<'_> {
    fn tool_decls(&mut self, e: &hir::Expr) -> RtResult<Vec<ToolDecl>> {
        let items = match self.eval(e)? {
            Value::List(l) => l.borrow().clone(),
            Value::Tuple(t) => t.as_ref().clone(),
            other => {
                return Err(RtError::new(
                    codes::TYPE,
                    format!(
                        "`tools=` takes a list of tools, got {}",
                        crate::value::conform::describe(&self.prog, &other)
                    ),
                ))
            }
        };
        let mut out = Vec::with_capacity(items.len());
        for v in items {
            if let Value::Native(n) = &v {
                if let Some(f) = n.downcast_ref::<crate::agents::foreign_tool::ForeignTool>() {
                    let spec = ToolSpec {
                        name: f.info.name.clone(),
                        description: f.info.description.clone(),
                        parameters: kora_models::Shape::Schema(f.info.input_schema.clone()),
                    };
                    let foreign = Some(f.clone());
                    out.push(ToolDecl {
                        value: v,
                        def: None,
                        foreign,
                        spec,
                    });
                    continue;
                }
            }
            let def = match &v {
                Value::Func(f) if f.def.kind != FuncKind::Def => f.def.clone(),
                other => {
                    return Err(RtError::new(
                        codes::NOT_A_TOOL,
                        format!(
                            "`tools=` lists {}, which is not a `tool` or an `agent`; declare it `tool name(...) -> T:`",
                            crate::value::conform::describe(&self.prog, other)
                        ),
                    ))
                }
            };
            let fields = def
                .params
                .iter()
                .map(|p| kora_models::Field {
                    name: self.prog.name(p.name).to_string(),
                    shape: shape_of(&self.prog, &p.ty),
                    required: p.default.is_none(),
                })
                .collect();
            let spec = ToolSpec {
                name: def.name.clone(),
                description: def.doc.clone().unwrap_or_default().trim().to_string(),
                parameters: kora_models::Shape::Record {
                    name: def.name.clone(),
                    fields,
                },
            };
            out.push(ToolDecl {
                value: v,
                def: Some(def),
                foreign: None,
                spec,
            });
        }
        Ok(out)
    }

    /// Runs the loop of a call given tools as one model effect, from its first request to its
    /// outcome. The budget admits it at Prepared and each further turn inside; a durable run
    /// replays its outcome whole, without running the tools again, and a loop cut off mid-way
    /// continues from its journaled turns and tool calls (`tool_turn.rs`).
    pub(crate) fn tool_loop(
        &mut self,
        call: &AnalyzeCall,
        entry: ModelEntry,
        material: KeyMaterial,
        images: Vec<kora_models::ImageData>,
        obs: &mut ModelObs,
    ) -> RtResult<Value> {
        let (op, target) = (call.site.clone(), entry.name.clone());
        let effect = Effect {
            kind: Kind::Model,
            // Not marked as a whole: each turn and tool call inside is journaled on its own.
            class: Class::Effect,
            op: &op,
            call: "analyze",
            target: &target,
        };
        let _ = self.flush_out();
        match self.host().pipeline.begin::<LoopAnswer>(&effect) {
            Begun::Perform => {}
            Begun::Done(Ok(LoopAnswer { answer, shown })) => {
                self.write(&shown)?;
                obs.input_tokens = answer.usage.input_tokens;
                obs.output_tokens = answer.usage.output_tokens;
                return Ok(self.recorded_outcome(call, &answer.outcome));
            }
            Begun::Done(Err(why)) => {
                return Err(RtError::new(
                    codes::EFFECT_REFUSED,
                    format!("the model call at {} failed: {why}", call.site),
                ))
            }
            Begun::Stopped(Stop::Exhausted(m)) => {
                obs.failure = Some(format!("budget exhausted: {}", m.name()));
                return Ok(Value::outcome(OutcomeTag::Exhausted, Value::str(m.name())));
            }
            Begun::Stopped(Stop::Refused(why)) => {
                return Err(RtError::new(
                    codes::EFFECT_REFUSED,
                    format!("the model call at {} was refused: {why}", call.site),
                ))
            }
            Begun::Stopped(Stop::BadRecord(why)) => {
                return Err(RtError::new(codes::EFFECT_REFUSED, why))
            }
        }
        let mut spent = Usage::default();
        let outer = self.loop_output.replace(String::new());
        let ran = self.tool_turns(call, &entry, material, images, obs, &effect, &mut spent);
        let shown = std::mem::replace(&mut self.loop_output, outer).unwrap_or_default();
        if let Some(outer) = &mut self.loop_output {
            outer.push_str(&shown);
        }
        // A raise from a tool still reaches Terminal, so the budget charges what the turns spent.
        let result = match &ran {
            Ok((outcome, _)) => Ok(LoopAnswer {
                answer: ModelAnswer {
                    outcome: outcome.clone(),
                    usage: spent,
                    cancelled: None,
                },
                shown,
            }),
            Err(_) => Err("raised".to_string()),
        };
        self.host().pipeline.finish(&effect, &result);
        let (answer, recorded) = ran?;
        let outcome = self.recorded_outcome(call, &answer);
        let failed = matches!(&outcome, Value::Outcome(o) if o.tag == OutcomeTag::Failed);
        // A loop that ended Failed leaves nothing in the cassette, like any failure.
        if !failed && !recorded.is_empty() {
            let mut models = self.models.as_ref().map(crate::agents::analyze::lock);
            if let Some(c) = models.as_mut().and_then(|m| m.cassette.as_mut()) {
                for e in recorded {
                    c.put(e);
                }
            }
        }
        Ok(outcome)
    }

    /// The turns of a tool loop: its outcome as `{"ok": v}` / `{"uncertain": r}` /
    /// `{"failed": why}` / `{"exhausted": meter}`, and the cassette entries a recording keeps.
    #[allow(clippy::too_many_arguments)]
    fn tool_turns(
        &mut self,
        call: &AnalyzeCall,
        entry: &ModelEntry,
        material: KeyMaterial,
        images: Vec<kora_models::ImageData>,
        obs: &mut ModelObs,
        effect: &Effect,
        spent: &mut Usage,
    ) -> RtResult<(Json, Vec<Entry>)> {
        let Some(tools_expr) = &call.tools else {
            return Err(RtError::new(codes::CONFIG, "a tool loop needs `tools=`"));
        };
        let tools = self.tool_decls(tools_expr)?;
        let shape = shape_of(&self.prog, &call.expect);
        let mut req = Request {
            model: entry.name.clone(),
            prompt: material.prompt.clone(),
            data: material.data.clone(),
            images,
            schema: Some(shape.clone()),
            tools: tools.iter().map(|t| t.spec.clone()).collect(),
            ..Request::default()
        };
        let tools_text = Json::Array(
            req.tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "parameters": kora_models::json_schema(&t.parameters)}))
                .collect(),
        );
        let fence = self.context_fence();
        let base = base_tokens(entry, &req);
        let (settings, mode, max_turns) =
            match self.models.as_ref().map(crate::agents::analyze::lock) {
                Some(m) => (m.config.settings.clone(), m.mode, m.config.tool_turns()),
                None => {
                    return Err(RtError::new(
                        codes::CONFIG,
                        "model calls are not set up for this run",
                    ))
                }
            };
        let mut history: Vec<Turn> = Vec::new();
        let mut recorded: Vec<Entry> = Vec::new();
        let mut turns = 0u32;
        loop {
            // The call was admitted with its first turn; every further turn is a step.
            if turns > 0 {
                if let Err(m) = self.budget_chain().admit_turn(Instant::now()) {
                    obs.failure = Some(format!("budget exhausted: {}", m.name()));
                    return Ok((json!({ "exhausted": m.name() }), Vec::new()));
                }
            }
            // The fence decides what this turn carries; the history itself keeps everything.
            req.history = match fence.map(|f| fit(&f, base, &history)) {
                None => history.clone(),
                Some(Fit::Send {
                    history: h,
                    dropped,
                }) => {
                    obs.dropped_exchanges = obs.dropped_exchanges.max(dropped);
                    h
                }
                Some(Fit::BaseTooBig { need, room }) => {
                    let why = crate::agents::context_fence::base_too_big(need, room);
                    obs.failure = Some(why.clone());
                    return Ok((json!({ "failed": why }), Vec::new()));
                }
                Some(Fit::NewestTooBig { .. }) => {
                    obs.failure = Some("context".into());
                    return Ok((json!({ "exhausted": "context" }), Vec::new()));
                }
            };
            let turn_material = KeyMaterial {
                tools: tools_text.clone(),
                history: history_json(&req.history),
                ..material.clone()
            };
            let key = turn_material.key();
            let ctx = TurnCtx {
                call,
                entry,
                req: &req,
                settings: &settings,
                mode,
                shape: &shape,
                effect,
                turn: turns,
            };
            let turn = Effect {
                kind: Kind::ModelTurn,
                class: Class::Effect,
                op: &call.site,
                call: "analyze",
                target: &entry.name,
            };
            let answer = match self.journaled_turn(&turn, effect, spent, obs, |w, obs, spent| {
                w.turn_answer(&ctx, key, &turn_material, obs, spent, &mut recorded)
            })? {
                Turned::Reply(j) => j,
                Turned::End(outcome) => return Ok((outcome, Vec::new())),
            };
            obs.turns += 1;
            let Some(calls) = answer.get("tool_calls").and_then(Json::as_array) else {
                let keep = if mode == Mode::Record {
                    recorded
                } else {
                    Vec::new()
                };
                return Ok((answer, keep));
            };
            turns += 1;
            if turns >= max_turns {
                let why = format!("tools: the model still asked for tools after {turns} turns, the limit (`[models] max_tool_turns`); make the task smaller or raise the limit");
                obs.failure = Some(why.clone());
                return Ok((json!({ "failed": why }), Vec::new()));
            }
            let calls: Vec<ToolCall> = calls.iter().filter_map(call_from_json).collect();
            let content = answer
                .get("content")
                .and_then(Json::as_str)
                .unwrap_or("")
                .to_string();
            let mut actual = Vec::with_capacity(calls.len());
            let mut results = Vec::with_capacity(calls.len());
            for tc in &calls {
                let ran = self.journaled_tool(call, &tools, tc)?;
                if let Some(end) = ran.end {
                    if let Some(why) = end.get("failed").and_then(Json::as_str) {
                        obs.failure = Some(why.to_string());
                    }
                    return Ok((end, Vec::new()));
                }
                actual.push(ToolCall {
                    arguments: ran.args,
                    ..tc.clone()
                });
                results.push(Turn::ToolResult {
                    call_id: tc.id.clone(),
                    name: tc.name.clone(),
                    result: ran.result,
                });
            }
            history.push(Turn::Assistant {
                content,
                tool_calls: actual,
            });
            history.extend(results);
        }
    }
}

/// A tool loop's journal record: the model call's, plus what its tools printed.
struct LoopAnswer {
    answer: ModelAnswer,
    shown: String,
}

impl Recordable for LoopAnswer {
    fn to_record(&self) -> Json {
        let mut j = self.answer.to_record();
        j["shown"] = Json::String(self.shown.clone());
        j
    }

    fn from_record(j: &Json) -> Option<LoopAnswer> {
        Some(LoopAnswer {
            answer: ModelAnswer::from_record(j)?,
            shown: j.get("shown")?.as_str()?.to_string(),
        })
    }
}

impl Interp<'_> {
    /// Reports one turn's tokens to the pipeline (a budget charges them) and adds them to the call's.
    pub(crate) fn spend(&mut self, effect: &Effect, spent: &mut Usage, u: Usage) {
        spent.input_tokens += u.input_tokens;
        spent.output_tokens += u.output_tokens;
        self.host().pipeline.observe(
            effect,
            Observation::Usage {
                input: u.input_tokens,
                output: u.output_tokens,
            },
        );
    }
}

pub(crate) fn usage_of(u: &kora_models::Usage) -> Usage {
    Usage {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
    }
}

pub(crate) fn calls_json(calls: &[ToolCall]) -> Json {
    Json::Array(
        calls
            .iter()
            .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
            .collect(),
    )
}

fn call_from_json(j: &Json) -> Option<ToolCall> {
    Some(ToolCall {
        id: j.get("id")?.as_str()?.to_string(),
        name: j.get("name")?.as_str()?.to_string(),
        arguments: j.get("arguments").cloned().unwrap_or(Json::Null),
    })
}

/// The history as the cassette key sees it: wire-neutral, in order.
fn history_json(history: &[Turn]) -> Json {
    Json::Array(
        history
            .iter()
            .map(|t| match t {
                Turn::Assistant {
                    content,
                    tool_calls,
                } => {
                    json!({"content": content, "tool_calls": calls_json(tool_calls)})
                }
                Turn::ToolResult {
                    call_id,
                    name,
                    result,
                } => {
                    json!({"call_id": call_id, "name": name, "result": result})
                }
            })
            .collect(),
    )
}
