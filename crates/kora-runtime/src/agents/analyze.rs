//! `analyze(data, "prompt")`: one model call through the effect pipeline, ending as a typed outcome.
//!
//! Prepared (arguments resolved, key computed; a budget admits the call, then
//! the cassette may answer it) → Sent (the transport, with its retries and the
//! budget's deadline) → Observed (token usage) → Terminal (the outcome: the
//! budget charges it, a recording keeps it). Every way it can end is a value:
//! `Ok`, `Uncertain`, `Exhausted(meter)` or `Failed` naming the cause; only a
//! missing cassette entry under `--replay` and a configuration mistake stop
//! the program.

use serde_json::Value as Json;

use kora_check::hir::AnalyzeCall;
use kora_check::types::Ty;
use std::time::Instant;

use kora_models::{ModelEntry, Request, Settings};

use crate::agents::cassette::{self, KeyMaterial, Mode};
use crate::agents::model_effect::{answer_of, CassetteSlot, ModelAnswer};
use crate::agents::model_span::{Answered, ModelObs};
use crate::durable::effect::{Class, Effect, Kind, Observation, Stop};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::labels::label;
use crate::stdlib::image::images_in;
use crate::value::json::{from_json, shape_of, to_json};
use crate::value::{OutcomeTag, Value};

/// What a run needs to make model calls: its configuration and its cassette.
pub struct Models {
    pub config: crate::config::Config,
    pub cassette: Option<cassette::Cassette>,
    pub mode: Mode,
    /// `kora run --model NAME`: the run's own choice, over `kora.toml`'s default.
    pub main_model: Option<String>,
}

/// The models of a run, shared by the interpreter and every `parallel for` worker.
///
/// The lock is held only to resolve a model and to read or write the cassette,
/// never across a transport call, so branches wait for each other only there.
pub type SharedModels = std::sync::Arc<std::sync::Mutex<Models>>;

/// Locks the shared models; a worker that panicked holding the lock left the data whole.
pub(crate) fn lock(m: &SharedModels) -> std::sync::MutexGuard<'_, Models> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Models {
    /// Writes what was recorded; called once when the run ends.
    pub fn finish(&mut self) -> Result<(), String> {
        match &mut self.cassette {
            Some(c) => c.save(),
            None => Ok(()),
        }
    }
}

/// What a model said is unverified: the strings of an `Ok` payload are labelled so. Numbers
/// and booleans were narrowed by the typed parse the answer went through.
fn model_output(v: Value, origin: u32) -> Value {
    match &v {
        Value::Outcome(o) if o.tag == crate::value::OutcomeTag::Ok => {
            let tag = crate::labels::label::Tag::unverified(origin);
            let payload = crate::labels::label::on_strings(o.payload.clone(), tag);
            Value::outcome(o.tag, crate::labels::redact::restore(payload))
        }
        _ => v,
    }
}

impl Interp<'_> {
    /// Sets up model calls: the configuration and cassette `analyze` uses.
    pub fn set_models(&mut self, models: Models) {
        if let Some(text) = &models.config.sinks.placeholder {
            crate::labels::label::set_placeholder(text);
        }
        self.models = Some(std::sync::Arc::new(std::sync::Mutex::new(models)));
    }

    /// Ends the run: flushes output and writes what the cassette recorded.
    pub fn finish(&mut self) -> Result<(), String> {
        let _ = self.out.flush();
        match self.models.as_ref() {
            Some(m) => lock(m).finish(),
            None => Ok(()),
        }
    }

    /// Reads the run's `kora.toml` settings, when model calls are set up.
    pub(crate) fn with_config<R>(&self, f: impl FnOnce(&crate::config::Config) -> R) -> Option<R> {
        self.models.as_ref().map(|m| f(&lock(m).config))
    }

    /// Refuses a model call that would carry a classified value no open release lets reach
    /// the model entry it resolved to.
    pub(crate) fn check_model_sink(
        &self,
        parts: &[(&str, &Value)],
        called: Option<&str>,
        entry: &ModelEntry,
        site: &str,
    ) -> RtResult<()> {
        if !label::any() {
            return Ok(());
        }
        let Some(shared) = self.models.clone() else {
            return Ok(());
        };
        // Read under the lock only when a classified value asks: a copy of the whole
        // configuration per model call was most of what a call's label check cost.
        let allows = |sink: &str| lock(&shared).config.sink_covers(sink, called, entry);
        for (what, v) in parts {
            label::each_labeled(v, &mut |l| {
                if l.is_classified() {
                    label::note_sent(crate::value::format::to_string(&self.prog, &l.plain()));
                }
            });
            if let Some(tag) = label::unreleased(v, &allows) {
                let model = called.unwrap_or("default");
                return Err(RtError::new(
                    codes::CLASSIFIED_TO_SINK,
                    format!(
                        "{} reaches the model `{model}` through the {what} of the `analyze` call at {site}; release it for this model with `declassify NAME for {model}:` around the call, or send `redact(NAME)` instead",
                        label::origin_text(tag.secret_from),
                    ),
                ));
            }
        }
        Ok(())
    }
    /// The label origin of the answers of the call at `site`.
    fn answer_origin(&mut self, site: &str) -> u32 {
        if let Some(&o) = self.answer_origins.get(site) {
            return o;
        }
        let o =
            crate::labels::label::origin(&format!("the answer of the `analyze` call at {site}"));
        self.answer_origins.insert(site.to_string(), o);
        o
    }

    pub(crate) fn analyze(&mut self, call: &AnalyzeCall) -> RtResult<Value> {
        if self.tracing.is_none() {
            let r = self.analyze_call(call, &mut ModelObs::default());
            return r.map(|v| model_output(v, self.answer_origin(&call.site)));
        }
        // trace: one span per call (mock, cassette and every attempt included), see model_span.rs.
        let start = std::time::SystemTime::now();
        let mut obs = ModelObs {
            start: Some(start),
            ..ModelObs::default()
        };
        let r = self.analyze_call(call, &mut obs);
        self.trace_model_call(call, start, &obs, &r);
        r.map(|v| model_output(v, self.answer_origin(&call.site)))
    }

    fn analyze_call(&mut self, call: &AnalyzeCall, obs: &mut ModelObs) -> RtResult<Value> {
        // A branch that can no longer win its race makes no more calls.
        if self
            .cancel
            .as_ref()
            .is_some_and(kora_models::Cancel::is_cancelled)
        {
            return Err(crate::eval::exec::lost_race());
        }
        if self.guard_depth > 0 {
            // Guards may run for arms that never execute: a model call there would
            // make the cost of a `match` depend on the order of its arms.
            return Err(RtError::new(
                codes::MODEL_IN_GUARD,
                format!(
                    "a `case ... if` guard reached a model call (at {}); call the model before the `match` and test its result",
                    call.site
                ),
            ));
        }
        let data = self.eval(&call.data)?;
        let prompt_value = self.eval(&call.prompt)?;
        let prompt = match &*crate::labels::label::plain(&prompt_value) {
            Value::Str(s) => s.as_str().to_string(),
            other => {
                return Err(RtError::new(
                    codes::TYPE,
                    format!(
                        "the prompt of `analyze` must be a `str`, got a `{}`",
                        other.type_name()
                    ),
                ))
            }
        };
        let model_name = match &call.model {
            Some(e) => match &*crate::labels::label::plain(&self.eval(e)?) {
                Value::Str(s) => Some(s.as_str().to_string()),
                other => {
                    return Err(RtError::new(
                        codes::TYPE,
                        format!(
                            "`model=` names a `[models]` entry as a `str`, got a `{}`",
                            other.type_name()
                        ),
                    ))
                }
            },
            // No call-site choice: the innermost block or agent, then `kora run --model`.
            None => None,
        };
        let model_name = model_name
            .or_else(|| self.model_scope.last().cloned())
            .or_else(|| {
                self.models
                    .as_ref()
                    .and_then(|m| lock(m).main_model.clone())
            });
        let Some(shared) = self.models.clone() else {
            return Err(RtError::new(
                codes::CONFIG,
                "model calls are not set up for this run",
            ));
        };
        let entry = lock(&shared)
            .config
            .resolve(model_name.as_deref())
            .map_err(|m| RtError::new(codes::CONFIG, m))?;
        // Labels: checked before anything (a mock, the cassette, the network) sees the data.
        self.check_model_sink(
            &[("data", &data), ("prompt", &prompt_value)],
            model_name.as_deref(),
            &entry,
            &call.site,
        )?;
        let data_json = to_json(&self.prog, &data).map_err(|m| RtError::new(codes::TYPE, m))?;
        // Each image left an `<image>` marker in the JSON; its pixels ride beside it, in marker order.
        let (mut pixels, mut fingerprints) = (Vec::new(), Vec::new());
        images_in(&self.prog, &data, &mut pixels, &mut fingerprints);
        let images: Vec<kora_models::ImageData> = pixels.iter().map(|i| (**i).clone()).collect();
        let data_text = if matches!(data_json, Json::Null) {
            String::new()
        } else {
            serde_json::to_string(&data_json).unwrap_or_default()
        };
        // trace: which model, whoever answers.
        obs.entry_seen(&entry);
        // From here on the span of a call with tools is open, so what they run (an agent) nests under it.
        if call.tools.is_some() {
            self.open_model_span(obs);
        }
        // A test's mocks answer before the cassette or the model.
        if let Some(answer) = self.mock_answer(call) {
            if answer.is_ok() {
                obs.answered = Answered::Mock;
            }
            return answer;
        }
        let material = KeyMaterial {
            site: call.site.clone(),
            model: entry.name.clone(),
            prompt: prompt.clone(),
            data: data_text.clone(),
            images: fingerprints,
            tools: Json::Null,
            history: Json::Null,
        };
        if call.tools.is_some() {
            let outer = self
                .model_sink
                .replace((model_name, entry.clone(), call.site.clone()));
            let r = self.tool_loop(call, entry, material, images, obs);
            self.model_sink = outer;
            return r;
        }
        if let Some(failed) = self.fence_refuses(&entry, &material, &images, &call.expect, obs) {
            return Ok(failed);
        }
        let typed = call.expect != Ty::Str;
        let req = Request {
            model: entry.name.clone(),
            prompt,
            data: data_text,
            images,
            schema: typed.then(|| shape_of(&self.prog, &call.expect)),
            stream: call.stream,
            ..Request::default()
        };
        // The lock is held to read the cassette and settings, never across the transport call.
        let (settings, mut slot) = {
            let models = lock(&shared);
            let slot = CassetteSlot::new(models.cassette.as_ref(), models.mode, material);
            (models.config.settings.clone(), slot)
        };
        let _ = self.flush_out();

        // Prepared: the run's observers first (a budget admits or refuses the call), then the
        // cassette, which may answer it from a recording; see model_effect.rs.
        let deadline = self.budget_chain().deadline();
        let (ran, found) = match &call.on_token {
            // The handler is program code, so the call runs on the three-call pipeline.
            Some(h) => self.token_stream(call, h, &entry, &settings, &req, deadline, slot, obs)?,
            None => {
                let ran =
                    self.plain_call(call, &entry, &settings, &req, deadline, &mut slot, obs)?;
                (ran, slot.take_result())
            }
        };
        let (replayed, to_record, missed) = (found.replayed, found.to_record, found.missed);
        let answer = match ran {
            // The race this branch ran in was decided: the branch ends here. A call that sent
            // nothing gives back the call and step its admission reserved.
            Ok(Ok(ModelAnswer {
                cancelled: Some(sent),
                ..
            })) => {
                if sent == 0 {
                    self.budget_chain().refund_unsent();
                }
                return Err(crate::eval::exec::lost_race());
            }
            Ok(Ok(answer)) => answer,
            Ok(Err(why)) => {
                return Err(RtError::new(
                    codes::EFFECT_REFUSED,
                    format!("the model call at {} failed: {why}", call.site),
                ))
            }
            // Admission: a budget with nothing left makes the call's value `Exhausted(meter)`.
            Err(Stop::Exhausted(m)) => {
                obs.failure = Some(format!("budget exhausted: {}", m.name()));
                return Ok(Value::outcome(OutcomeTag::Exhausted, Value::str(m.name())));
            }
            Err(Stop::Refused(why)) => {
                return Err(match missed {
                    Some(miss) => RtError::new(
                        codes::REPLAY_MISS,
                        format!("no recorded answer for the model call at {}: {miss}; record it with `kora run --record`", call.site),
                    ),
                    None => RtError::new(
                        codes::EFFECT_REFUSED,
                        format!("the model call at {} was refused: {why}", call.site),
                    ),
                });
            }
            Err(Stop::BadRecord(why)) => return Err(RtError::new(codes::EFFECT_REFUSED, why)),
        };
        let outcome = self.recorded_outcome(call, &answer.outcome);
        if let Some(rec) = &replayed {
            // trace: a replayed call reports the tokens it was recorded with.
            obs.answered = Answered::Cassette;
            obs.input_tokens = rec.usage.input_tokens;
            obs.output_tokens = rec.usage.output_tokens;
            // A replayed stream hands over its text in one piece, as a server that does not stream would.
            if call.stream {
                if let Value::Outcome(o) = &outcome {
                    if let (OutcomeTag::Ok, Value::Str(s)) = (o.tag, &o.payload) {
                        let text = s.as_str().to_string();
                        if let Some(h) = &call.on_token {
                            self.run_token_handler(h, &text)?;
                        } else {
                            self.write(&text)?;
                            if !text.ends_with('\n') {
                                self.write("\n")?;
                            }
                        }
                    }
                }
            }
        }
        // Terminal left the answer with the cassette slot; it is written only if it fits the type.
        let is_failed = matches!(&outcome, Value::Outcome(o) if o.tag == OutcomeTag::Failed);
        if let (Some(entry), false) = (to_record, is_failed) {
            if let Some(c) = lock(&shared).cassette.as_mut() {
                c.put(entry);
            }
        }
        Ok(outcome)
    }

    /// A call with no handler: one effect, its performer in a closure. A stream prints its
    /// pieces as they come.
    #[allow(clippy::too_many_arguments)]
    fn plain_call(
        &mut self,
        call: &AnalyzeCall,
        entry: &ModelEntry,
        settings: &Settings,
        req: &Request,
        deadline: Option<Instant>,
        slot: &mut CassetteSlot,
        obs: &mut ModelObs,
    ) -> RtResult<Result<Result<ModelAnswer, String>, Stop>> {
        self.host();
        let cancel = self.cancel.as_ref();
        let (Some(host), out) = (self.host.as_deref_mut(), &mut *self.out) else {
            return Err(RtError::new(
                codes::CONFIG,
                "model calls are not set up for this run",
            ));
        };
        let effect = Effect {
            kind: Kind::Model,
            class: Class::Effect,
            op: &call.site,
            call: "analyze",
            target: &entry.name,
        };
        let ran = host.pipeline.run_with(&effect, Some(slot), |sending| {
            // Sent: the transport owns retries and is given the budget's deadline, so a quiet
            // provider is cut off when the scope's time is up.
            let result = if call.stream {
                let mut shown = false;
                let mut on_piece = |piece: &str| {
                    shown = true;
                    let _ = out.write_all(piece.as_bytes());
                    let _ = out.flush();
                };
                let r = kora_models::call_cancellable(
                    entry,
                    settings,
                    req,
                    deadline,
                    cancel,
                    Some(&mut on_piece),
                );
                if shown {
                    let _ = out.write_all(b"\n");
                }
                r
            } else {
                kora_models::call_cancellable(entry, settings, req, deadline, cancel, None)
            };
            let answer = answer_of(result, req.schema.as_ref(), entry, deadline, obs);
            sending.observe(Observation::Usage {
                input: answer.usage.input_tokens,
                output: answer.usage.output_tokens,
            });
            Ok::<_, std::convert::Infallible>(Ok(answer))
        });
        Ok(match ran {
            Ok(r) => r,
            Err(never) => match never {},
        })
    }

    /// `{"ok": v}` / `{"uncertain": r}` / `{"failed": why}` / `{"exhausted": meter}` → the
    /// outcome value, reading `v` into the declared type.
    pub(crate) fn recorded_outcome(&mut self, call: &AnalyzeCall, j: &Json) -> Value {
        for (key, tag) in [
            ("uncertain", OutcomeTag::Uncertain),
            ("failed", OutcomeTag::Failed),
            ("exhausted", OutcomeTag::Exhausted),
        ] {
            if let Some(r) = j.get(key).and_then(Json::as_str) {
                return Value::outcome(tag, Value::str(r));
            }
        }
        let Some(v) = j.get("ok") else {
            return Value::outcome(
                OutcomeTag::Failed,
                Value::str("schema: the answer has neither `ok` nor `uncertain`"),
            );
        };
        match from_json(&self.prog, v, &call.expect) {
            Ok(val) => {
                self.fill_record_defaults(&val, v, &call.expect);
                Value::outcome(OutcomeTag::Ok, val)
            }
            Err(path) => Value::outcome(OutcomeTag::Failed, Value::str(format!("schema: {path}"))),
        }
    }

    /// Fields the model left out take their declared defaults.
    fn fill_record_defaults(&mut self, val: &Value, j: &Json, ty: &Ty) {
        let (Value::Record(r), Ty::Record(id, _), Json::Object(m)) = (val, ty, j) else {
            return;
        };
        let prog = self.prog.clone();
        let rec = prog.record(*id);
        for (i, f) in rec.fields.iter().enumerate() {
            let given = m.get(prog.name(f.name)).is_some_and(|x| !x.is_null());
            if let (false, Some(d)) = (given, &f.default) {
                let saved = self.cur_mod;
                self.cur_mod = rec.module.0 as usize;
                let v = self.eval(d);
                self.cur_mod = saved;
                if let Ok(v) = v {
                    r.fields.borrow_mut()[i] = v;
                }
            }
        }
    }
}
