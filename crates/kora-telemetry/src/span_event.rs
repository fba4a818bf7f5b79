//! The compact, fixed-size records a recorder makes of the tracer's calls on the
//! interpreter's thread, and the batches that carry them to the encoder.
//!
//! A record owns nothing that must be freed in the common case: keys and the runtime's
//! words are `&'static str`, names and string values are ids of the run's interned
//! strings (`interner.rs`), times are the clock's own readings (turned into OTLP's
//! nanoseconds by the encoder, off the interpreter's thread). Turning them into OTLP spans is the
//! encoder's work (`encoder.rs`), on its own thread when the trace goes to a file.

use std::num::NonZeroU64;
use std::time::SystemTime;

use kora_runtime::observe::trace::{AttrValue, ModelCallSpan, SpanId, SpanKind, SpanStatus};

/// Nanoseconds since the Unix epoch, as OTLP carries times.
pub(crate) type Nanos = u64;

/// How many records a batch holds before it is handed over: about fifty model-call spans.
pub(crate) const BATCH: usize = 512;

/// How many records a batch holds once the encoder has a thread of its own: what is left
/// in the last batch is encoded after the program ends, while the run waits, so batches
/// that cross while it runs are kept small.
pub(crate) const STREAMING_BATCH: usize = 128;

/// A string a record refers to.
#[derive(Clone, Debug)]
pub(crate) enum Text {
    /// An entry of the run's interned strings, announced by an `Event::Intern` before its first use.
    Interned(u32),
    /// A string past the interner's cap, carried by the record itself.
    Owned(Box<str>),
}

/// An attribute's value, as `AttrValue` with its strings interned.
#[derive(Debug)]
pub(crate) enum Val {
    Text(Text),
    Static(&'static str),
    Int(i64),
    Float(f64),
    Bool(bool),
    List(Box<[String]>),
}

/// One call of the tracer, as the encoder replays it.
#[derive(Debug)]
pub(crate) enum Event {
    /// A string's first use: from now on `Text::Interned(id)` stands for it.
    Intern(u32, Box<str>),
    Open {
        id: SpanId,
        /// Span ids start at 1, so a missing parent costs no extra word.
        parent: Option<NonZeroU64>,
        kind: SpanKind,
        /// The runtime's own words before the name (`"chat "`), kept apart so nothing is joined here.
        head: &'static str,
        tail: Text,
        start: SystemTime,
    },
    Attr {
        id: SpanId,
        key: &'static str,
        value: Val,
    },
    Close {
        id: SpanId,
        end: SystemTime,
        status: SpanStatus,
        /// Only the CLI's run and test spans carry one (why a run failed).
        message: Option<Box<str>>,
    },
    /// A model call's span ends; what it says is the batch's next `CallRecord`.
    ModelCall { id: SpanId, end: SystemTime },
    /// A model call's whole span, opened and closed in one record (nothing ran inside it);
    /// what it says is the batch's next `CallRecord`, its name `chat ` and the model.
    WholeCall {
        id: SpanId,
        parent: Option<NonZeroU64>,
        start: SystemTime,
        end: SystemTime,
    },
    /// A whole call that says what the last `WholeCall` said (a loop's calls from one site):
    /// no `CallRecord` of its own.
    RepeatCall {
        id: SpanId,
        parent: Option<NonZeroU64>,
        start: SystemTime,
        end: SystemTime,
    },
}

/// `ModelCallSpan` with its strings interned: a model call's attributes in one record.
#[derive(Clone, Debug)]
pub(crate) struct CallRecord {
    pub model: Text,
    pub site: Text,
    pub agent: Option<Text>,
    pub error_type: Option<Text>,
    pub provider: Option<&'static str>,
    pub answered: &'static str,
    pub outcome: Option<&'static str>,
    pub usage: Option<(u64, u64)>,
    pub attempts: usize,
    pub dropped_exchanges: usize,
    pub status: SpanStatus,
    /// What the provider said of its reply: different for every call, so never interned.
    pub response_id: Option<Box<str>>,
    pub response_model: Option<Text>,
    pub finish_reasons: Vec<String>,
    pub server_address: Option<Text>,
    pub server_port: Option<u16>,
    pub max_tokens: Option<u32>,
}

/// The records made between two hand-overs, in the order they were made. Model-call
/// records sit beside the events, so the common event stays small.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    pub events: Vec<Event>,
    pub calls: Vec<CallRecord>,
}

impl Batch {
    /// A batch with room for `events` records before it grows. Model-call records start
    /// with none: a loop's calls repeat the last one (no record) more often than not.
    pub(crate) fn with_room(events: usize) -> Batch {
        Batch {
            events: Vec::with_capacity(events + 16),
            calls: Vec::new(),
        }
    }
}

impl Val {
    /// The value for a kept `SpanData`, its string read back from the interned ones.
    pub(crate) fn to_attr(&self, names: &[Box<str>]) -> AttrValue {
        match self {
            Val::Text(t) => AttrValue::Str(t.resolve(names).to_string()),
            Val::Static(s) => AttrValue::Static(s),
            Val::Int(n) => AttrValue::Int(*n),
            Val::Float(f) => AttrValue::Float(*f),
            Val::Bool(b) => AttrValue::Bool(*b),
            Val::List(l) => AttrValue::StrList(l.to_vec()),
        }
    }
}

impl CallRecord {
    /// The record as the runtime gave it, its strings read back from the interned ones.
    pub(crate) fn resolve<'a>(&'a self, names: &'a [Box<str>]) -> ModelCallSpan<'a> {
        ModelCallSpan {
            model: self.model.resolve(names),
            provider: self.provider,
            agent: self.agent.as_ref().map(|t| t.resolve(names)),
            site: self.site.resolve(names),
            answered: self.answered,
            usage: self.usage,
            attempts: self.attempts,
            dropped_exchanges: self.dropped_exchanges,
            outcome: self.outcome,
            error_type: self.error_type.as_ref().map(|t| t.resolve(names)),
            response_id: self.response_id.as_deref(),
            response_model: self.response_model.as_ref().map(|t| t.resolve(names)),
            finish_reasons: &self.finish_reasons,
            server_address: self.server_address.as_ref().map(|t| t.resolve(names)),
            server_port: self.server_port,
            max_tokens: self.max_tokens,
        }
    }
}

impl Text {
    /// The string itself; an id the encoder was never told of reads as empty.
    pub(crate) fn resolve<'a>(&'a self, names: &'a [Box<str>]) -> &'a str {
        match self {
            Text::Interned(i) => names.get(*i as usize).map_or("", |s| s),
            Text::Owned(s) => s,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_stays_small() {
        // The interpreter's thread writes one of these per tracer call: keep it near a cache line.
        assert!(
            std::mem::size_of::<Event>() <= 80,
            "{}",
            std::mem::size_of::<Event>()
        );
    }
}
