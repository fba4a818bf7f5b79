//! The tracer seam: the runtime reports spans (runs, tests, agents, model calls and each of
//! their attempts, tool calls, declassifications) to a `Tracer` it does not implement.
//!
//! `kora-telemetry` implements it (OTLP JSON, the cost report) and `kora-cli`
//! wires the two together, so the runtime never depends on an exporter. With
//! no tracer attached every hook is one `Option` check.
//!
//! Attribute keys are `&'static str` and values are built by the runtime from
//! configuration and source text only (model names, call sites, token counts,
//! outcome tags), never from a program's values: that is what keeps a
//! classified value out of every span. The one exception is what a provider says about
//! its reply (its id, the model that answered, why it stopped, a tool call's id): provider
//! text, never a program value, and it has passed `kora_models::redact` before it gets
//! here. A future attribute that carries a program value must go through a label check at
//! the one place it is built.

use std::time::SystemTime;

/// A tracer's handle for one open span.
pub type SpanId = u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanKind {
    /// A whole `kora run`.
    Run,
    /// One `test "name":` under `kora test`.
    Test,
    /// A call of an `agent` (budget spend rides on it).
    Agent,
    /// One `parallel for`: its branches' spans hang under it.
    FanOut,
    /// One `analyze`: the logical call, whatever answered it.
    ModelCall,
    /// One HTTP request of a model call; each retry is its own.
    Attempt,
    ToolCall,
    Declassify,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    Str(String),
    /// A constant of the runtime's own vocabulary (`"chat"`, `"cassette"`, ...): no allocation.
    Static(&'static str),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A list of strings (OTLP's `arrayValue`): `gen_ai.response.finish_reasons`.
    StrList(Vec<String>),
}

impl AttrValue {
    /// A count (tokens, calls, an index) as OTLP's signed int, saturating past `i64::MAX`.
    pub fn count(n: impl TryInto<i64>) -> AttrValue {
        AttrValue::Int(saturating(n))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanStatus {
    Unset,
    Ok,
    Error,
}

/// What receives spans. Times are wall-clock so a trace lines up with other systems' spans.
pub trait Tracer {
    fn open(
        &mut self,
        kind: SpanKind,
        name: &str,
        parent: Option<SpanId>,
        start: SystemTime,
    ) -> SpanId;
    fn attr(&mut self, span: SpanId, key: &'static str, value: AttrValue);
    fn close(&mut self, span: SpanId, end: SystemTime, status: SpanStatus, message: Option<&str>);

    /// Opens a span named `head` followed by `tail` (`chat MODEL`). A tracer that encodes
    /// names as it records overrides this, so the hot path never joins the two.
    fn open_named(
        &mut self,
        kind: SpanKind,
        head: &'static str,
        tail: &str,
        parent: Option<SpanId>,
        start: SystemTime,
    ) -> SpanId {
        self.open(kind, &format!("{head}{tail}"), parent, start)
    }

    /// A string attribute lent by the runtime (a model name, a call site). A tracer that
    /// encodes attributes as it records overrides this, so nothing is copied to be dropped.
    fn attr_str(&mut self, span: SpanId, key: &'static str, value: &str) {
        self.attr(span, key, AttrValue::Str(value.to_string()));
    }

    /// Ends a model call's span with everything it says, in one call: the hot path of a
    /// program making many calls. A tracer that records compactly overrides this; the
    /// default takes the record apart into `attr`s and a `close`.
    fn close_model_call(
        &mut self,
        span: SpanId,
        call: &ModelCallSpan<'_>,
        end: SystemTime,
        status: SpanStatus,
    ) {
        call.each_attr(|key, v| match v {
            AttrRef::Str(s) => self.attr_str(span, key, s),
            AttrRef::Static(s) => self.attr(span, key, AttrValue::Static(s)),
            AttrRef::Int(n) => self.attr(span, key, AttrValue::Int(n)),
            AttrRef::Strs(l) => self.attr(span, key, AttrValue::StrList(l.to_vec())),
        });
        self.close(span, end, status, None);
    }

    /// A model call inside which nothing ran (no tools), reported once it has ended: its
    /// span opens and closes in one step. A tracer that records as it goes overrides this
    /// to make one record of the call instead of an opening and a closing.
    fn model_call(
        &mut self,
        parent: Option<SpanId>,
        start: SystemTime,
        call: &ModelCallSpan<'_>,
        end: SystemTime,
        status: SpanStatus,
    ) -> SpanId {
        let id = self.open_named(SpanKind::ModelCall, "chat ", call.model, parent, start);
        self.close_model_call(id, call, end, status);
        id
    }
}

/// An attribute's value as `ModelCallSpan::each_attr` lends it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AttrRef<'a> {
    Str(&'a str),
    Static(&'static str),
    Int(i64),
    Strs(&'a [String]),
}

/// The attributes of a model call's span (GenAI semantic conventions and Kora's own), built
/// by the runtime from configuration and source text only, like every attribute.
#[derive(Clone, Copy, Debug, Default)]
pub struct ModelCallSpan<'a> {
    pub model: &'a str,
    pub provider: Option<&'static str>,
    /// The innermost agent the call ran under.
    pub agent: Option<&'a str>,
    pub site: &'a str,
    /// `mock`, `cassette`, `model` or `nobody`.
    pub answered: &'static str,
    /// Tokens in and out, when a model or a cassette answered.
    pub usage: Option<(u64, u64)>,
    /// HTTP attempts made (each is its own child span).
    pub attempts: usize,
    /// The most earlier exchanges the context fence left out of one request.
    pub dropped_exchanges: usize,
    /// The outcome's tag when the call returned one.
    pub outcome: Option<&'static str>,
    /// An error code, an HTTP status or `schema`: never a message, which may quote values.
    pub error_type: Option<&'a str>,
    /// The provider's id for its reply.
    pub response_id: Option<&'a str>,
    /// The model that answered, as the provider names it.
    pub response_model: Option<&'a str>,
    /// Why the model stopped (`stop`, `length`, `tool_calls`), one per choice.
    pub finish_reasons: &'a [String],
    /// The endpoint's host and port.
    pub server_address: Option<&'a str>,
    pub server_port: Option<u16>,
    /// The entry's `max_output_tokens`.
    pub max_tokens: Option<u32>,
}

impl<'a> ModelCallSpan<'a> {
    /// The span's attributes in the order a trace lists them; every tracer uses this order.
    pub fn each_attr(&self, mut f: impl FnMut(&'static str, AttrRef<'a>)) {
        f("gen_ai.operation.name", AttrRef::Static("chat"));
        f("gen_ai.request.model", AttrRef::Str(self.model));
        if let Some(p) = self.provider {
            f("gen_ai.provider.name", AttrRef::Static(p));
        }
        if let Some(a) = self.agent {
            f("gen_ai.agent.name", AttrRef::Str(a));
        }
        if let Some(n) = self.max_tokens {
            f("gen_ai.request.max_tokens", AttrRef::Int(i64::from(n)));
        }
        if let Some(h) = self.server_address {
            f("server.address", AttrRef::Str(h));
        }
        if let Some(p) = self.server_port {
            f("server.port", AttrRef::Int(i64::from(p)));
        }
        if let Some(id) = self.response_id {
            f("gen_ai.response.id", AttrRef::Str(id));
        }
        if let Some(m) = self.response_model {
            f("gen_ai.response.model", AttrRef::Str(m));
        }
        if !self.finish_reasons.is_empty() {
            f(
                "gen_ai.response.finish_reasons",
                AttrRef::Strs(self.finish_reasons),
            );
        }
        f("kora.site", AttrRef::Str(self.site));
        f("kora.answered_by", AttrRef::Static(self.answered));
        if let Some((input, output)) = self.usage {
            f("gen_ai.usage.input_tokens", AttrRef::Int(saturating(input)));
            f(
                "gen_ai.usage.output_tokens",
                AttrRef::Int(saturating(output)),
            );
        }
        if self.attempts > 0 {
            f("kora.attempts", AttrRef::Int(saturating(self.attempts)));
        }
        if self.dropped_exchanges > 0 {
            f(
                "kora.context.dropped_exchanges",
                AttrRef::Int(saturating(self.dropped_exchanges)),
            );
        }
        if let Some(o) = self.outcome {
            f("kora.outcome", AttrRef::Static(o));
        }
        if let Some(e) = self.error_type {
            f("error.type", AttrRef::Str(e));
        }
    }
}

fn saturating(n: impl TryInto<i64>) -> i64 {
    n.try_into().unwrap_or(i64::MAX)
}

/// What model calls spent: the budget meters' units, counted for a span rather than a scope.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spend {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Calls that reached the model or a cassette (a mock's answer costs nothing).
    pub calls: u64,
    /// Model requests: one per call, one per further turn of a tool loop.
    pub steps: u64,
}

impl Spend {
    pub(crate) fn add(&mut self, o: Spend) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
        self.calls += o.calls;
        self.steps += o.steps;
    }
}

/// A tracer and the spans the interpreter has open, innermost last.
pub struct Tracing<'io> {
    pub(crate) sink: Box<dyn Tracer + 'io>,
    pub(crate) open: Vec<SpanId>,
    /// Spend since each open agent began, innermost last; the first entry is the whole
    /// interpreter's, so a branch hands its total back to the agent it ran under.
    pub(crate) spend: Vec<Spend>,
}

impl Tracing<'_> {
    /// Opens `head` + `tail` under the innermost open span and makes it the innermost, so
    /// what runs inside it (a tool's agent, a model call's tools) nests under it.
    pub(crate) fn open_nested(
        &mut self,
        kind: SpanKind,
        head: &'static str,
        tail: &str,
        start: SystemTime,
    ) -> SpanId {
        let id = self
            .sink
            .open_named(kind, head, tail, self.open.last().copied(), start);
        self.open.push(id);
        id
    }

    pub(crate) fn charge(&mut self, s: Spend) {
        if let Some(top) = self.spend.last_mut() {
            top.add(s);
        }
    }
}

/// A borrowed tracer is a tracer, so a caller can keep the recorder and read it afterwards.
impl<T: Tracer + ?Sized> Tracer for &mut T {
    fn open(
        &mut self,
        kind: SpanKind,
        name: &str,
        parent: Option<SpanId>,
        start: SystemTime,
    ) -> SpanId {
        (**self).open(kind, name, parent, start)
    }
    fn attr(&mut self, span: SpanId, key: &'static str, value: AttrValue) {
        (**self).attr(span, key, value)
    }
    fn close(&mut self, span: SpanId, end: SystemTime, status: SpanStatus, message: Option<&str>) {
        (**self).close(span, end, status, message)
    }
    fn open_named(
        &mut self,
        kind: SpanKind,
        head: &'static str,
        tail: &str,
        parent: Option<SpanId>,
        start: SystemTime,
    ) -> SpanId {
        (**self).open_named(kind, head, tail, parent, start)
    }
    fn attr_str(&mut self, span: SpanId, key: &'static str, value: &str) {
        (**self).attr_str(span, key, value)
    }
    fn close_model_call(
        &mut self,
        span: SpanId,
        call: &ModelCallSpan<'_>,
        end: SystemTime,
        status: SpanStatus,
    ) {
        (**self).close_model_call(span, call, end, status)
    }
    fn model_call(
        &mut self,
        parent: Option<SpanId>,
        start: SystemTime,
        call: &ModelCallSpan<'_>,
        end: SystemTime,
        status: SpanStatus,
    ) -> SpanId {
        (**self).model_call(parent, start, call, end, status)
    }
}
