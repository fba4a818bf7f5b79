//! One tool call of a tool loop: the model's arguments read into the tool's parameter
//! types, `on tool_call`, the call itself in the caller's heap, `on tool_result`.
//!
//! What it returns is what the history records: the arguments the tool really ran with
//! (the model's own when nothing ran) and the result after `on tool_result`.

use std::time::SystemTime;

use serde_json::{json, Value as Json};

use kora_check::hir::{self, AnalyzeCall, Target, ToolHandler};
use kora_models::ToolCall;

use crate::agents::tool_loop::{Ran, ToolDecl, ToolObs};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::{Flow, Interp};
use crate::value::json::{from_json, to_json};
use crate::value::{Dict, Key, Value};

impl Interp<'_> {
    /// Runs one tool call the model asked for, with its handlers.
    pub(crate) fn run_tool_call(
        &mut self,
        call: &AnalyzeCall,
        tools: &[ToolDecl],
        tc: &ToolCall,
    ) -> RtResult<Ran> {
        let start = SystemTime::now();
        let mut seen = ToolObs {
            name: None,
            call_id: tc.id.clone(),
            start,
            outcome: "ran",
            rewritten_args: false,
            replaced_result: false,
        };
        let Some(tool) = tools.iter().find(|t| t.spec.name == tc.name) else {
            let names: Vec<&str> = tools.iter().map(|t| t.spec.name.as_str()).collect();
            seen.outcome = "unknown_tool";
            let span = self.open_tool_span(&seen);
            self.close_tool_span(span, &seen, false);
            return Ok(Ran {
                args: tc.arguments.clone(),
                result: json!({"error": format!("there is no tool `{}`; the tools are: {}", tc.name, names.join(", "))}),
                end: None,
            });
        };
        seen.name = Some(tool.spec.name.clone());
        // Open while the tool runs, so an agent used as a tool nests under its tool call.
        let span = self.open_tool_span(&seen);
        let r = self.run_found_tool(call, tool, tc, &mut seen);
        self.close_tool_span(span, &seen, r.is_err());
        r
    }

    /// The part of a tool call after the tool was found: arguments, handlers, the call.
    fn run_found_tool(
        &mut self,
        call: &AnalyzeCall,
        tool: &ToolDecl,
        tc: &ToolCall,
        seen: &mut ToolObs,
    ) -> RtResult<Ran> {
        let args = match self.bind_tool_args(tool, &tc.arguments) {
            Ok(d) => d,
            Err(why) => {
                seen.outcome = "bad_arguments";
                return Ok(Ran {
                    args: tc.arguments.clone(),
                    result: json!({"error": format!("bad arguments for `{}`: {why}; call it again with arguments that match its parameters", tool.spec.name)}),
                    end: None,
                });
            }
        };
        let name = Value::str(tool.spec.name.clone());
        let mut args = Value::dict(args);
        let original = to_json(&self.prog, &args).unwrap_or(Json::Null);
        if let Some(h) = &call.on_tool_call {
            match self.run_handler(h, vec![name.clone(), args.clone()])? {
                (Some(text), _) => {
                    seen.outcome = "skipped";
                    let result =
                        to_json(&self.prog, &text).map_err(|m| RtError::new(codes::TYPE, m))?;
                    return Ok(Ran {
                        args: original,
                        result,
                        end: None,
                    });
                }
                (None, slots) => {
                    if let Some(a) = slots.get(1) {
                        args = a.clone();
                    }
                }
            }
        }
        let args_json = to_json(&self.prog, &args).map_err(|m| RtError::new(codes::TYPE, m))?;
        seen.rewritten_args = args_json != original;
        let mut result = match (&tool.foreign, &tool.def) {
            (Some(f), _) => match self.run_foreign_tool(f, &args_json, &call.site)? {
                Ok(j) => {
                    let tag = crate::labels::label::Tag::unverified(crate::labels::label::origin(
                        &format!("the result of the MCP tool `{}.{}`", f.module, f.info.name),
                    ));
                    crate::labels::label::on_strings(crate::value::json::untyped(&j), tag)
                }
                Err(end) => {
                    return Ok(Ran {
                        args: args_json,
                        result: Json::Null,
                        end: Some(end),
                    })
                }
            },
            (None, _) => {
                let kwargs = self.tool_kwargs(tool, &args)?;
                self.call_value_kw(&tool.value, Vec::new(), kwargs)?
            }
        };
        if let Some(h) = &call.on_tool_result {
            let before = to_json(&self.prog, &result).ok();
            match self.run_handler(h, vec![name, args.clone(), result.clone()])? {
                (Some(replacement), _) => result = replacement,
                (None, slots) => {
                    if let Some(r) = slots.get(2) {
                        result = r.clone();
                    }
                }
            }
            let ret = tool.def.as_ref().map(|d| &d.ret);
            if let Some(ret) = ret.filter(|r| {
                r.is_known() && !crate::value::conform::conforms(&self.prog, &result, r)
            }) {
                return Err(RtError::new(
                    codes::TYPE,
                    format!(
                        "`on tool_result` gave `{}` {}, but the tool returns `{}`",
                        tool.spec.name,
                        crate::value::conform::describe(&self.prog, &result),
                        ret
                    ),
                ));
            }
            seen.replaced_result = to_json(&self.prog, &result).ok() != before;
        }
        if let Some((called, entry, site)) = self.model_sink.clone() {
            let what = format!("result of the tool `{}`", tool.spec.name);
            self.check_model_sink(&[(&what, &result)], called.as_deref(), &entry, &site)?;
        }
        let result = to_json(&self.prog, &result).map_err(|m| RtError::new(codes::TYPE, m))?;
        Ok(Ran {
            args: args_json,
            result,
            end: None,
        })
    }

    /// The model's arguments read into the tool's parameter types, in parameter order.
    fn bind_tool_args(&self, tool: &ToolDecl, given: &Json) -> Result<Dict, String> {
        let Json::Object(m) = given else {
            return Err("the arguments are not a JSON object".into());
        };
        let Some(def) = &tool.def else {
            // A foreign tool's own schema is checked by its provider before the call is sent.
            let mut d = Dict::default();
            for (k, v) in m {
                let tag = crate::labels::label::Tag::unverified(crate::labels::label::origin(
                    &format!("an argument the model gave the tool `{}`", tool.spec.name),
                ));
                d.insert(
                    Key(Value::str(k.as_str())),
                    crate::labels::label::on_strings(crate::value::json::untyped(v), tag),
                );
            }
            return Ok(d);
        };
        for k in m.keys() {
            if !def.params.iter().any(|p| self.prog.name(p.name) == k) {
                return Err(format!("`{}` takes no argument `{k}`", tool.spec.name));
            }
        }
        let mut d = Dict::default();
        for p in &def.params {
            let pname = self.prog.name(p.name);
            match m.get(pname) {
                Some(v) => {
                    let val = from_json(&self.prog, v, &p.ty).map_err(|path| {
                        format!("argument `{pname}`: {}", path.replacen('$', pname, 1))
                    })?;
                    // The model chose these: unverified, like any model output.
                    let tag = crate::labels::label::Tag::unverified(crate::labels::label::origin(
                        &format!("an argument the model gave the tool `{}`", tool.spec.name),
                    ));
                    d.insert(
                        Key(Value::str(pname)),
                        crate::labels::label::on_strings(val, tag),
                    );
                }
                None if p.default.is_some() => {}
                None => return Err(format!("missing argument `{pname}`")),
            }
        }
        Ok(d)
    }

    /// The (possibly rewritten) `args` dict as keyword arguments of the tool.
    fn tool_kwargs(&self, tool: &ToolDecl, args: &Value) -> RtResult<Vec<(hir::Sym, Value)>> {
        let Value::Dict(d) = args else {
            return Err(RtError::new(
                codes::TYPE,
                format!(
                    "`on tool_call` left `args` as {}, not a dict",
                    crate::value::conform::describe(&self.prog, args)
                ),
            ));
        };
        let mut out = Vec::new();
        for (k, v) in d.borrow().iter() {
            let Value::Str(s) = &k.0 else {
                return Err(RtError::new(
                    codes::TYPE,
                    "`args` keys must be parameter names (`str`)",
                ));
            };
            let Some(def) = &tool.def else {
                return Ok(Vec::new());
            };
            let Some(p) = def
                .params
                .iter()
                .find(|p| self.prog.name(p.name) == s.as_str())
            else {
                return Err(RtError::new(
                    codes::ARGUMENTS,
                    format!(
                        "`on tool_call` passed `{}`, which `{}` does not take",
                        s.as_str(),
                        tool.spec.name
                    ),
                ));
            };
            out.push((p.name, v.clone()));
        }
        Ok(out)
    }

    /// Runs a handler body in the current frame. Returns what its `return` gave, if it
    /// returned, and the parameters' values when it finished (it may have rebound them).
    fn run_handler(
        &mut self,
        h: &ToolHandler,
        vals: Vec<Value>,
    ) -> RtResult<(Option<Value>, Vec<Value>)> {
        for (t, v) in h.params.iter().zip(vals) {
            self.assign(t, v)?;
        }
        let flow = self.exec_block(&h.body)?;
        let slots = h.params.iter().map(|t| self.read_target(t)).collect();
        Ok(match flow {
            Flow::Return => (Some(std::mem::take(&mut self.flow_value)), slots),
            _ => (None, slots),
        })
    }

    fn read_target(&self, t: &Target) -> Value {
        match t {
            Target::Local(s) => self.stack[self.base + *s as usize].clone(),
            Target::Cell(s) => match &self.stack[self.base + *s as usize] {
                Value::Cell(c) => c.borrow().clone(),
                v => v.clone(),
            },
            Target::Global(g) => self.globals[self.cur_mod][*g as usize].clone(),
            _ => Value::None,
        }
    }
}
