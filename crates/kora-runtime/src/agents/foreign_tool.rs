//! Tools that are not Kora code: an MCP server's tools as values (`fs.tools`, `fs.read_file`),
//! and what the tool loop does when a model calls one.
//!
//! Listing a server's tools is an effect (`mcp`, recorded and replayed, never marked): a durable
//! run and a cassette both keep the list, so `kora test` offers a model the same tools offline.
//! A model's call of one is an external call (`external_call.rs`) named under the loop's
//! `site#tool`: its `Err` goes back to the model as a tool result it can act on, while
//! `Failed` ends the whole `analyze` as `Failed`, because a model told "that tool failed"
//! would try it again and pay its timeout every turn.

use std::sync::Arc;

use serde_json::{json, Value as Json};

use kora_check::hir::ExtId;
use kora_check::std_api::StdType;

use crate::agents::cassette::{Entry, KeyMaterial, Mode, Usage};
use crate::agents::external_call::{ExtAnswer, ExtCallSite};
use crate::durable::effect::{Class, Effect, Kind, Observation, Stop};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::external::{find_tool_named, Data, ToolInfo};
use crate::value::native::{Native, NativeObject, PortableNative};
use crate::value::Value;

/// One tool of an external module, as a value.
#[derive(Clone, Debug)]
pub(crate) struct ForeignTool {
    pub ext: ExtId,
    pub module: String,
    pub info: ToolInfo,
}

impl NativeObject for ForeignTool {
    fn std_type(&self) -> StdType {
        StdType::Tool
    }

    fn repr(&self, out: &mut String) {
        out.push_str(&format!("<mcp tool {}.{}>", self.module, self.info.name));
    }

    fn portable(&self) -> Option<Arc<dyn PortableNative>> {
        Some(Arc::new(self.clone()))
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl PortableNative for ForeignTool {
    fn revive(&self) -> Native {
        Native::new(self.clone())
    }
}

/// The tools list as it is recorded.
struct Listed(Vec<ToolInfo>);

impl crate::durable::effect::Recordable for Listed {
    fn to_record(&self) -> Json {
        Json::Array(self.0.iter().map(ToolInfo::to_json).collect())
    }
    fn from_record(j: &Json) -> Option<Listed> {
        j.as_array()?
            .iter()
            .map(ToolInfo::from_json)
            .collect::<Option<Vec<_>>>()
            .map(Listed)
    }
}

impl Interp<'_> {
    /// `alias.tools` (every tool) or `alias.member` (one), as values for `tools=`.
    pub(crate) fn external_member(&mut self, ext: ExtId, member: Option<&str>) -> RtResult<Value> {
        let e = self.prog.externals[ext.0 as usize].clone();
        let tools = self.list_external_tools(ext)?;
        let value = |info: &ToolInfo| {
            Value::Native(std::rc::Rc::new(Native::new(ForeignTool {
                ext,
                module: e.name.clone(),
                info: info.clone(),
            })))
        };
        match member {
            None => Ok(Value::list(tools.iter().map(value).collect())),
            Some(m) => match find_tool_named(&tools, m) {
                Some(t) => Ok(value(t)),
                None => Err(RtError::new(
                    codes::ATTRIBUTE,
                    format!(
                        "the MCP server `{}` has no tool `{m}`; its tools are: {}",
                        e.name,
                        tools
                            .iter()
                            .map(|t| t.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )),
            },
        }
    }

    /// The tools of an external module: an effect a journal and a cassette keep. A server that
    /// cannot be listed is a runtime error naming it: there is nothing to offer a model.
    pub(crate) fn list_external_tools(&mut self, ext: ExtId) -> RtResult<Vec<ToolInfo>> {
        let e = self.prog.externals[ext.0 as usize].clone();
        let op = format!("{}:{}#tools", e.kind, e.name);
        let call = format!("{} {} tools/list", e.kind, e.name);
        let material = KeyMaterial {
            site: op.clone(),
            model: format!("{}:{}", e.kind, e.name),
            prompt: "tools/list".into(),
            data: String::new(),
            images: Vec::new(),
            tools: Json::Null,
            history: Json::Null,
        };
        let key = material.key();
        let (mode, found) = match self.models.as_ref().map(crate::agents::analyze::lock) {
            Some(m) if m.mode != Mode::Record => (
                m.mode,
                m.cassette
                    .as_ref()
                    .and_then(|c| c.get(&key))
                    .and_then(|en| Listed::from_json(&en.outcome)),
            ),
            Some(m) => (m.mode, None),
            None => (Mode::Auto, None),
        };
        if let Some(Listed(tools)) = found {
            return Ok(tools);
        }
        if mode == Mode::Replay {
            return Err(RtError::new(
                codes::REPLAY_MISS,
                format!("no recorded tool list for the MCP server `{}` (used at {}); record it with `kora run --record`", e.name, e.place),
            ));
        }
        let provider = self.provider_of(ext)?;
        let effect = Effect {
            kind: Kind::Mcp,
            class: Class::Effect,
            op: &op,
            call: &call,
            target: &e.name,
        };
        let deadline = self.budget_chain().deadline();
        let ran = self.host().pipeline.run(&effect, |s| {
            let r = provider.tools(&e.name, deadline).map(Listed);
            s.observe(Observation::Value);
            r
        });
        let tools = match ran {
            Ok(Ok(Listed(t))) => t,
            Ok(Err(why)) => {
                return Err(RtError::new(
                    codes::EFFECT_REFUSED,
                    format!(
                        "cannot list the tools of the MCP server `{}` (used at {}): {why}",
                        e.name, e.place
                    ),
                ))
            }
            Err(Stop::Refused(why) | Stop::BadRecord(why)) => {
                return Err(RtError::new(codes::EFFECT_REFUSED, why))
            }
            Err(Stop::Exhausted(m)) => {
                return Err(RtError::new(
                    codes::EFFECT_REFUSED,
                    format!(
                        "listing the tools of `{}` was refused: the budget's {} ran out",
                        e.name,
                        m.name()
                    ),
                ))
            }
        };
        if mode == Mode::Record {
            if let Some(c) = self
                .models
                .as_ref()
                .map(crate::agents::analyze::lock)
                .as_mut()
                .and_then(|m| m.cassette.as_mut())
            {
                c.put(Entry {
                    key,
                    material,
                    outcome: Listed(tools.clone()).to_json(),
                    usage: Usage::default(),
                });
            }
        }
        Ok(tools)
    }

    /// A model's call of a foreign tool inside a tool loop: the result the model is sent back
    /// (`Ok`: the tool's answer; `Err`: the tool's failure, as an answer), or `Err(outcome)`:
    /// the loop ends with it (`{"failed": ...}` / `{"exhausted": ...}`).
    pub(crate) fn run_foreign_tool(
        &mut self,
        tool: &ForeignTool,
        args: &Json,
        loop_site: &str,
    ) -> RtResult<Result<Json, Json>> {
        let site = format!("{loop_site}#tool");
        if let Some(mocked) = self.external_mock(tool.ext, &tool.info.name) {
            return Ok(match &mocked {
                Value::Outcome(o) => match o.tag {
                    crate::value::OutcomeTag::Ok => {
                        Ok(crate::value::json::to_json(&self.prog, &o.payload)
                            .map_err(|m| RtError::new(codes::TYPE, m))?)
                    }
                    crate::value::OutcomeTag::Err => Ok(
                        json!({"error": crate::value::format::to_string(&self.prog, &o.payload)}),
                    ),
                    t => {
                        let mut m = serde_json::Map::new();
                        m.insert(
                            t.name().to_lowercase(),
                            Json::String(crate::value::format::to_string(&self.prog, &o.payload)),
                        );
                        Err(Json::Object(m))
                    }
                },
                _ => Ok(Json::Null),
            });
        }
        let provider = self.provider_of(tool.ext)?;
        let kwargs = match args {
            Json::Object(m) => m
                .iter()
                .map(|(k, v)| (k.clone(), Data::from_plain_json(v)))
                .collect(),
            _ => {
                return Ok(Ok(
                    json!({"error": format!("bad arguments for `{}`: the arguments are not a JSON object", tool.info.name)}),
                ))
            }
        };
        let call = ExtCallSite {
            ext: tool.ext,
            member: &tool.info.name,
            site: &site,
        };
        let (answer, _) = self.perform_external(&call, provider.as_ref(), Vec::new(), kwargs)?;
        Ok(match answer {
            ExtAnswer::Ok(d) => Ok(d
                .to_plain_json()
                .unwrap_or_else(|_| Json::String(format!("{d:?}")))),
            ExtAnswer::Err(e) => Ok(json!({ "error": e })),
            ExtAnswer::Failed(f) => Err(json!({
                "failed": format!("the MCP tool `{}.{}` did not answer: {f}", tool.module, tool.info.name)
            })),
            ExtAnswer::Exhausted(m) => Err(json!({ "exhausted": m })),
        })
    }
}

impl Listed {
    fn to_json(&self) -> Json {
        crate::durable::effect::Recordable::to_record(self)
    }

    fn from_json(j: &Json) -> Option<Listed> {
        crate::durable::effect::Recordable::from_record(j)
    }
}
