//! A call of an external module's member (`fs.read_file(path=p)`, `stats.mean(xs)`), from the
//! program or from a model's tool loop: one effect of its own kind on the pipeline.
//!
//! In order: a test's `with mock alias.member` answers first; a classified argument must be
//! released for the module's sink; then the call is an effect (`mcp` / `python`, marked
//! before it is sent, so a durable resume that finds it Sent stops naming it), where a budget
//! admits it, a journal replays it and the cassette answers it (`ExtCassette`) before the
//! provider is asked. The provider's answer is `Ok(data)`, `Err(text)` (the member ran and
//! said no) or `Failed(reason)` (no answer: timeout, crash, protocol); a budget whose time ran
//! out first makes it `Exhausted("time")`. Results are outside data: their strings are
//! `unverified`, and a typed binding narrows them like `json.parse` does.

use std::time::{Instant, SystemTime};

use serde_json::{json, Value as Json};

use kora_check::hir::{ExtId, ExternalCall, Stmt};
use kora_syntax::Span;

use crate::agents::cassette::{Cassette, Entry, KeyMaterial, Mode, Usage};
use crate::durable::effect::{
    Class, Effect, Kind, Observation, Observer, Recordable, Stop, Verdict,
};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::{Flow, Interp};
use crate::external::provider::Call;
use crate::external::{convert, Data, Provider, Reply};
use crate::labels::label;
use crate::observe::trace::{AttrValue, SpanId, SpanKind, SpanStatus};
use crate::value::{OutcomeTag, Value};

/// How one external call ended, as the journal and the cassette record it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ExtAnswer {
    Ok(Data),
    Err(String),
    Failed(String),
    Exhausted(&'static str),
}

impl Recordable for ExtAnswer {
    fn to_record(&self) -> Json {
        match self {
            ExtAnswer::Ok(d) => json!({ "ok": d.to_json() }),
            ExtAnswer::Err(e) => json!({ "err": e }),
            ExtAnswer::Failed(f) => json!({ "failed": f }),
            ExtAnswer::Exhausted(m) => json!({ "exhausted": m }),
        }
    }

    fn from_record(j: &Json) -> Option<ExtAnswer> {
        if let Some(d) = j.get("ok") {
            return Data::from_json(d).ok().map(ExtAnswer::Ok);
        }
        if let Some(e) = j.get("err").and_then(Json::as_str) {
            return Some(ExtAnswer::Err(e.to_string()));
        }
        if let Some(f) = j.get("failed").and_then(Json::as_str) {
            return Some(ExtAnswer::Failed(f.to_string()));
        }
        let m = j.get("exhausted").and_then(Json::as_str)?;
        crate::agents::budget::Meter::parse(m).map(|m| ExtAnswer::Exhausted(m.name()))
    }
}

/// Who answered a call, for its span.
#[derive(Clone, Copy)]
pub(crate) enum Answered {
    Live,
    Cassette,
    Journal,
    Mock,
}

impl Answered {
    fn name(self) -> &'static str {
        match self {
            Answered::Live => "live",
            Answered::Cassette => "cassette",
            Answered::Journal => "journal",
            Answered::Mock => "mock",
        }
    }
}

/// The cassette's view of one external call: answers it at Prepared when it has it (never
/// under `--record`); under `--replay` a call it lacks is refused, naming it.
struct ExtCassette {
    mode: Mode,
    key: String,
    material: KeyMaterial,
    found: Option<Json>,
    miss: Option<String>,
    replayed: bool,
    to_record: Option<Entry>,
}

impl ExtCassette {
    fn new(cassette: Option<&Cassette>, mode: Mode, material: KeyMaterial) -> ExtCassette {
        let key = material.key();
        let found = match mode {
            Mode::Record => None,
            _ => cassette
                .and_then(|c| c.get(&key))
                .map(|e| e.outcome.clone()),
        };
        let miss = (mode == Mode::Replay && found.is_none()).then(|| {
            cassette
                .map(|c| c.explain_miss(&material))
                .unwrap_or_else(|| "no cassette is open".into())
        });
        ExtCassette {
            mode,
            key,
            material,
            found,
            miss,
            replayed: false,
            to_record: None,
        }
    }
}

impl Observer for ExtCassette {
    fn prepared(&mut self, _e: &Effect) -> Verdict {
        if let Some(rec) = self.found.take() {
            self.replayed = true;
            return Verdict::Replay(json!({ "ok": rec }));
        }
        match self.miss.take() {
            Some(why) => Verdict::Refuse(why),
            None => Verdict::Proceed,
        }
    }

    fn terminal(&mut self, _e: &Effect, ok: bool, record: &dyn Fn() -> Json) {
        if self.mode != Mode::Record || self.replayed || !ok {
            return;
        }
        let outcome = record()["ok"].clone();
        // Like a model's outage, a call that got no answer is not a fixture.
        if outcome.get("ok").is_some() || outcome.get("err").is_some() {
            self.to_record = Some(Entry {
                key: self.key.clone(),
                material: self.material.clone(),
                outcome,
                usage: Usage::default(),
            });
        }
    }
}

/// What one external call needs besides its arguments.
pub(crate) struct ExtCallSite<'a> {
    pub ext: ExtId,
    pub member: &'a str,
    /// The structural op: the call's site, or the tool loop's `site#tool`.
    pub site: &'a str,
}

impl Interp<'_> {
    /// `with mock alias.member -> value:`.
    pub(crate) fn exec_external_mock(
        &mut self,
        ext: ExtId,
        member: &str,
        value: &kora_check::hir::Expr,
        body: &[Stmt],
        span: Span,
    ) -> RtResult<Flow> {
        let v = self.eval(value)?;
        let at = self.place(span);
        if !matches!(v, Value::Outcome(_)) {
            return Err(RtError::new(
                codes::MOCK_VALUE,
                format!(
                    "the mock at {at} answers with {}, not an outcome; write `Ok(value)`, `Err(\"why\")` or `Failed(\"why\")`",
                    crate::value::conform::describe(&self.prog, &v)
                ),
            ));
        }
        self.mocks.push(crate::agents::mock::Mock {
            value: v,
            at,
            member: Some((ext, member.to_string())),
        });
        let r = self.exec_block(body);
        self.mocks.pop();
        r
    }

    /// The innermost mock of `ext.member`, when a test set one.
    pub(crate) fn external_mock(&self, ext: ExtId, member: &str) -> Option<Value> {
        self.mocks
            .iter()
            .rev()
            .find(|m| {
                m.member
                    .as_ref()
                    .is_some_and(|(e, n)| *e == ext && n == member)
            })
            .map(|m| m.value.clone())
    }

    /// The provider of external module `ext`, or the error saying the run has none.
    pub(crate) fn provider_of(&self, ext: ExtId) -> RtResult<std::sync::Arc<dyn Provider>> {
        let e = &self.prog.externals[ext.0 as usize];
        self.externals
            .as_ref()
            .and_then(|r| r.get(&e.kind))
            .cloned()
            .ok_or_else(|| {
                RtError::new(
                    codes::CONFIG,
                    format!(
                        "`use {} {}` at {}: this run has no {} support set up (run the program with the `kora` command)",
                        e.kind, e.name, e.place, e.kind
                    ),
                )
            })
    }

    /// `alias.member(args)` called by the program.
    pub(crate) fn external_call(&mut self, c: &ExternalCall) -> RtResult<Value> {
        let mut pos = Vec::with_capacity(c.args.positional.len());
        for a in &c.args.positional {
            pos.push(self.eval(a)?);
        }
        for (at, e) in c.args.star.iter().rev() {
            let spread = crate::value::iter::collect(&self.eval(e)?)?;
            let at = (*at).min(pos.len());
            pos.splice(at..at, spread);
        }
        let mut kw = Vec::with_capacity(c.args.keywords.len());
        for (k, e) in &c.args.keywords {
            kw.push((self.prog.name(*k).to_string(), self.eval(e)?));
        }
        let ext = &self.prog.externals[c.ext.0 as usize];
        let (kind, module) = (ext.kind.clone(), ext.name.clone());
        let start = SystemTime::now();
        let span = self.open_external_span(&kind, &module, &c.member, start);
        let r = self.external_call_in_span(c, &kind, &module, pos, kw, span);
        if let (Err(_), Some(id)) = (&r, span) {
            self.close_external_span(id, "raised", None);
        }
        r
    }

    fn external_call_in_span(
        &mut self,
        c: &ExternalCall,
        kind: &str,
        module: &str,
        pos: Vec<Value>,
        kw: Vec<(String, Value)>,
        span: Option<SpanId>,
    ) -> RtResult<Value> {
        if let Some(mocked) = self.external_mock(c.ext, &c.member) {
            let v = self.narrow_answer(c, mocked);
            if let Some(id) = span {
                self.close_external_span(id, outcome_word(&v), Some(Answered::Mock));
            }
            return Ok(v);
        }
        let provider = self.provider_of(c.ext)?;
        let sink = provider.sink(module);
        let what = format!("{kind} {module}.{}", c.member);
        for v in pos.iter().chain(kw.iter().map(|(_, v)| v)) {
            self.check_external_sink(v, &sink, &what, &c.site)?;
        }
        let convert = |v: &Value| {
            convert::to_data(&self.prog, v).map_err(|why| {
                RtError::new(
                    codes::TYPE,
                    format!("an argument of `{what}` at {}: {why}", c.site),
                )
            })
        };
        let args = pos.iter().map(convert).collect::<RtResult<Vec<_>>>()?;
        let kwargs = kw
            .iter()
            .map(|(k, v)| Ok((k.clone(), convert(v)?)))
            .collect::<RtResult<Vec<_>>>()?;
        let site = ExtCallSite {
            ext: c.ext,
            member: &c.member,
            site: &c.site,
        };
        let (answer, by) = self.perform_external(&site, provider.as_ref(), args, kwargs)?;
        let origin = label::origin(&format!("the result of `{what}` at {}", c.site));
        let v = match answer {
            ExtAnswer::Ok(d) => match convert::to_value(&d) {
                Ok(v) => self.narrow_answer(c, Value::outcome(OutcomeTag::Ok, v)),
                Err(why) => err_value(format!("`{what}` returned {why}")),
            },
            ExtAnswer::Err(e) => err_value(e),
            ExtAnswer::Failed(f) => Value::outcome(OutcomeTag::Failed, Value::str(f)),
            ExtAnswer::Exhausted(m) => Value::outcome(OutcomeTag::Exhausted, Value::str(m)),
        };
        if let Some(id) = span {
            self.close_external_span(id, outcome_word(&v), Some(by));
        }
        Ok(unverified(v, origin))
    }

    /// An `Ok` payload read into the call's declared type; a mismatch is `Err` naming the path.
    fn narrow_answer(&mut self, c: &ExternalCall, v: Value) -> Value {
        let Value::Outcome(o) = &v else { return v };
        if o.tag != OutcomeTag::Ok || !c.expect.is_known() {
            return v;
        }
        let payload = o.payload.clone();
        match self.narrow_root(payload, &c.expect, crate::stdlib::typed::Lenience::Strict) {
            Ok(p) => Value::outcome(OutcomeTag::Ok, p),
            Err(path) => err_value(format!(
                "the result of `{}` does not fit `{}`: {path}",
                c.member, c.expect
            )),
        }
    }

    /// A classified part of an argument may reach the module only released for its sink.
    pub(crate) fn check_external_sink(
        &self,
        v: &Value,
        sink: &str,
        what: &str,
        site: &str,
    ) -> RtResult<()> {
        if !label::any() {
            return Ok(());
        }
        match label::unreleased(v, &|s| s == sink) {
            None => Ok(()),
            Some(tag) => Err(RtError::new(
                codes::CLASSIFIED_TO_SINK,
                format!(
                    "{} reaches `{what}` through an argument of the call at {site}; release it for that sink with `declassify NAME for {sink}:` around the call, or pass `redact(NAME)` instead",
                    label::origin_text(tag.secret_from),
                ),
            )),
        }
    }

    /// One external call through the pipeline (a budget admits it, a journal or the cassette
    /// may answer it), else through the provider.
    pub(crate) fn perform_external(
        &mut self,
        site: &ExtCallSite,
        provider: &dyn Provider,
        args: Vec<Data>,
        kwargs: Vec<(String, Data)>,
    ) -> RtResult<(ExtAnswer, Answered)> {
        let e = &self.prog.externals[site.ext.0 as usize];
        let (kind, module) = (e.kind.clone(), e.name.clone());
        let call_name = format!("{kind} {module}.{}", site.member);
        let data_text = json!({
            "args": args.iter().map(Data::to_json).collect::<Vec<_>>(),
            "kwargs": kwargs.iter().map(|(k, v)| (k.clone(), v.to_json())).collect::<serde_json::Map<_, _>>(),
        })
        .to_string();
        let material = KeyMaterial {
            site: site.site.to_string(),
            model: format!("{kind}:{module}"),
            prompt: site.member.to_string(),
            data: data_text,
            images: Vec::new(),
            tools: Json::Null,
            history: Json::Null,
        };
        let mut slot = match self.models.as_ref().map(crate::agents::analyze::lock) {
            // A local call (Python) missing from a replayed cassette runs: it reaches nothing.
            Some(m) if m.mode == Mode::Replay && provider.local() => {
                ExtCassette::new(m.cassette.as_ref(), Mode::Auto, material)
            }
            Some(m) => ExtCassette::new(m.cassette.as_ref(), m.mode, material),
            None => ExtCassette::new(None, Mode::Auto, material),
        };
        let effect = Effect {
            kind: effect_kind(&kind),
            class: Class::WorldChanging,
            op: site.site,
            call: &call_name,
            target: &module,
        };
        let deadline = self.budget_chain().deadline();
        let _ = self.flush_out();
        let host = self.host();
        let mut live = false;
        let ran = host.pipeline.run_with(&effect, Some(&mut slot), |sending| {
            live = true;
            let reply = provider.call(Call {
                module: &module,
                member: site.member,
                args,
                kwargs,
                deadline,
            });
            sending.observe(Observation::Value);
            let answer = match reply {
                Reply::Ok(d) => ExtAnswer::Ok(d),
                Reply::Err(e) => ExtAnswer::Err(e),
                // The budget's deadline cut it off, not the module's own timeout.
                Reply::Failed(_) if deadline.is_some_and(|d| Instant::now() >= d) => {
                    ExtAnswer::Exhausted(crate::agents::budget::Meter::Time.name())
                }
                Reply::Failed(f) => ExtAnswer::Failed(f),
            };
            Ok::<_, std::convert::Infallible>(Ok(answer))
        });
        let ran = match ran {
            Ok(r) => r,
            Err(never) => match never {},
        };
        let by = if live {
            Answered::Live
        } else if slot.replayed {
            Answered::Cassette
        } else {
            Answered::Journal
        };
        let answer = match ran {
            Ok(Ok(a)) => a,
            Ok(Err(why)) => ExtAnswer::Failed(why),
            Err(Stop::Exhausted(m)) => ExtAnswer::Exhausted(m.name()),
            Err(Stop::Refused(why)) if slot.replayed || slot.mode == Mode::Replay => {
                return Err(RtError::new(
                    codes::REPLAY_MISS,
                    format!("no recorded result for `{call_name}` at {}: {why}; record it with `kora run --record`", site.site),
                ))
            }
            Err(Stop::Refused(why)) => {
                return Err(RtError::new(
                    codes::EFFECT_REFUSED,
                    format!("`{call_name}` at {} was refused: {why}", site.site),
                ))
            }
            Err(Stop::BadRecord(why)) => return Err(RtError::new(codes::EFFECT_REFUSED, why)),
        };
        if let Some(entry) = slot.to_record.take() {
            if let Some(c) = self
                .models
                .as_ref()
                .map(crate::agents::analyze::lock)
                .as_mut()
                .and_then(|m| m.cassette.as_mut())
            {
                c.put(entry);
            }
        }
        Ok((answer, by))
    }

    fn open_external_span(
        &mut self,
        kind: &str,
        module: &str,
        member: &str,
        start: SystemTime,
    ) -> Option<SpanId> {
        let t = self.tracing.as_mut()?;
        let name = format!("{module}.{member}");
        let id = t.open_nested(SpanKind::ToolCall, "execute_tool ", &name, start);
        t.sink.attr(
            id,
            "gen_ai.operation.name",
            AttrValue::Static("execute_tool"),
        );
        t.sink.attr_str(id, "gen_ai.tool.name", member);
        t.sink
            .attr(id, "gen_ai.tool.type", AttrValue::Static("extension"));
        t.sink.attr_str(id, "kora.tool.source", kind);
        t.sink.attr_str(id, "kora.tool.module", module);
        Some(id)
    }

    fn close_external_span(&mut self, id: SpanId, outcome: &'static str, by: Option<Answered>) {
        let Some(t) = self.tracing.as_mut() else {
            return;
        };
        if let Some(at) = t.open.iter().rposition(|&o| o == id) {
            t.open.truncate(at);
        }
        t.sink
            .attr(id, "kora.tool.outcome", AttrValue::Static(outcome));
        if let Some(by) = by {
            t.sink
                .attr(id, "kora.tool.answered", AttrValue::Static(by.name()));
        }
        let status = match outcome {
            "ok" | "err" => SpanStatus::Ok,
            _ => {
                t.sink.attr(id, "error.type", AttrValue::Static(outcome));
                SpanStatus::Error
            }
        };
        t.sink.close(id, SystemTime::now(), status, None);
    }
}

pub(crate) fn effect_kind(kind: &str) -> Kind {
    if kind == "python" {
        Kind::Python
    } else {
        Kind::Mcp
    }
}

fn err_value(why: String) -> Value {
    Value::outcome(OutcomeTag::Err, Value::str(why))
}

fn outcome_word(v: &Value) -> &'static str {
    match v {
        Value::Outcome(o) => match o.tag {
            OutcomeTag::Ok => "ok",
            OutcomeTag::Err => "err",
            OutcomeTag::Failed => "failed",
            OutcomeTag::Exhausted => "exhausted",
            OutcomeTag::Uncertain => "uncertain",
        },
        _ => "ok",
    }
}

/// An outcome whose text came from outside: its strings are `unverified`.
fn unverified(v: Value, origin: u32) -> Value {
    match &v {
        Value::Outcome(o) if matches!(o.tag, OutcomeTag::Ok | OutcomeTag::Err) => {
            let tag = label::Tag::unverified(origin);
            Value::outcome(o.tag, label::on_strings(o.payload.clone(), tag))
        }
        _ => v,
    }
}
