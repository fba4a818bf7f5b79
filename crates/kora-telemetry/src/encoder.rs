//! The encoder: replays a recorder's records (`span_event.rs`) into OTLP JSON span items for
//! the trace's output, and into `SpanData` when spans are kept (the cost report, tests).
//!
//! It holds what the interpreter's thread no longer does: the spans still open, each with
//! its name and attributes already encoded into buffers recycled from spans that closed,
//! and every interned string in its escaped JSON form, so a model name or a call site is
//! escaped once a run. The spans open at a time are few and close innermost first, so they
//! are a stack searched from the top.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::num::NonZeroU64;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kora_runtime::observe::trace::{
    AttrRef, AttrValue, ModelCallSpan, SpanId, SpanKind, SpanStatus,
};

use crate::interner::Fold;
use crate::otlp::nanos;
use crate::recorder::{RunIds, SpanData, Streamed};
use crate::span_event::{Batch, CallRecord, Event, Nanos, Text, Val};
use crate::span_json;
use crate::span_repeat::Pattern;
use crate::trace_out::TraceOut;

/// A span between its `Open` and its `Close`.
struct OpenSpan {
    id: SpanId,
    parent: Option<SpanId>,
    kind: SpanKind,
    start: Nanos,
    /// The name as a JSON string literal (empty when nothing is streamed).
    name: Vec<u8>,
    /// Attribute objects as JSON, comma-separated (empty when nothing is streamed).
    attrs: Vec<u8>,
    /// The span as data, when spans are kept.
    data: Option<SpanData>,
}

/// Everything a run's records have said so far.
pub(crate) struct Encoder {
    ids: RunIds,
    /// `span_json::span_head` of this run.
    head: Vec<u8>,
    names: Vec<Box<str>>,
    /// `names` escaped for JSON strings (empty when nothing is streamed).
    escaped: Vec<Vec<u8>>,
    open: Vec<OpenSpan>,
    /// Name and attribute buffers of closed spans, for the next ones to fill.
    spare: Vec<(Vec<u8>, Vec<u8>)>,
    keep: bool,
    kept: Vec<SpanData>,
    /// Where closed spans' JSON goes; `None` keeps data only.
    out: Option<TraceOut>,
    /// The attributes' JSON of model calls that carry no number, by what they say.
    calls: CallJson,
    /// A whole model call's name and (uncached) attributes, encoded before it is written.
    scratch: (Vec<u8>, Vec<u8>),
    /// The last parent span id written, in hex: the calls of a loop share their parent.
    parent_hex: Option<(SpanId, [u8; 16])>,
    secs: span_json::Seconds,
    /// The record of the last whole model call, which a `RepeatCall` says again.
    last_whole: Option<Box<CallRecord>>,
    /// The JSON of the last repeat written whole, which the next repeats copy.
    pattern: Pattern,
}

/// The attributes' JSON of number-free model calls, by what they say, with the entry found
/// last kept aside: the calls of a loop ask for the same one each time, and comparing
/// keys is cheaper than hashing one.
#[derive(Default)]
struct CallJson {
    index: HashMap<CallKey, u32, BuildHasherDefault<Fold>>,
    json: Vec<Vec<u8>>,
    last: Option<(CallKey, u32)>,
}

impl CallJson {
    /// The JSON of `c`'s attributes, when `c` carries no number and there is room to keep it.
    fn get(&mut self, c: &CallRecord, names: &[Box<str>]) -> Option<&[u8]> {
        let key = CallKey::of(c)?;
        let at = match self.last {
            Some((k, at)) if k == key => at,
            _ => {
                let at = match self.index.get(&key) {
                    Some(&at) => at,
                    None => {
                        if self.json.len() >= CALLS_KEPT {
                            return None;
                        }
                        let mut json = Vec::new();
                        call_json(&mut json, &c.resolve(names));
                        self.json.push(json);
                        let at = (self.json.len() - 1) as u32;
                        self.index.insert(key, at);
                        at
                    }
                };
                self.last = Some((key, at));
                at
            }
        };
        self.json.get(at as usize).map(Vec::as_slice)
    }
}

/// The most distinct number-free model calls whose JSON is kept.
const CALLS_KEPT: usize = 4096;

/// A model call with no tokens, attempts or dropped exchanges: its attributes are names
/// and words only, so calls from one site in a loop (mocked ones above all) encode the
/// same bytes each time. Static words are told apart by address; two copies of one word
/// only make two entries.
#[derive(Clone, Copy, Hash, PartialEq, Eq)]
struct CallKey {
    model: u32,
    site: u32,
    agent: Option<u32>,
    error_type: Option<u32>,
    provider: Option<(usize, usize)>,
    answered: (usize, usize),
    outcome: Option<(usize, usize)>,
}

impl CallKey {
    fn of(c: &CallRecord) -> Option<CallKey> {
        if c.usage.is_some() || c.attempts > 0 || c.dropped_exchanges > 0 {
            return None;
        }
        let id = |t: &Text| match t {
            Text::Interned(i) => Some(*i),
            Text::Owned(_) => None,
        };
        let word = |w: &'static str| (w.as_ptr() as usize, w.len());
        Some(CallKey {
            model: id(&c.model)?,
            site: id(&c.site)?,
            agent: match &c.agent {
                Some(t) => Some(id(t)?),
                None => None,
            },
            error_type: match &c.error_type {
                Some(t) => Some(id(t)?),
                None => None,
            },
            provider: c.provider.map(word),
            answered: word(c.answered),
            outcome: c.outcome.map(word),
        })
    }
}

/// A model call's attribute objects, comma-separated, after any already in `out`.
fn call_json(out: &mut Vec<u8>, call: &ModelCallSpan<'_>) {
    call.each_attr(|key, v| match v {
        AttrRef::Str(t) => span_json::attr_str(out, key, t),
        AttrRef::Static(t) => span_json::attr(out, key, &AttrValue::Static(t)),
        AttrRef::Int(n) => span_json::attr(out, key, &AttrValue::Int(n)),
    });
}

/// A model call's attributes as a kept `SpanData` holds them, after any already in `attrs`.
fn kept_attrs(attrs: &mut Vec<(&'static str, AttrValue)>, call: &ModelCallSpan<'_>) {
    call.each_attr(|key, v| {
        let v = match v {
            AttrRef::Str(t) => AttrValue::Str(t.to_string()),
            AttrRef::Static(t) => AttrValue::Static(t),
            AttrRef::Int(n) => AttrValue::Int(n),
        };
        attrs.push((key, v));
    });
}

/// Where and when a whole model call's span sits: what its record leaves to the event.
#[derive(Clone, Copy)]
pub(crate) struct CallAt {
    pub id: SpanId,
    pub parent: Option<SpanId>,
    pub start: Nanos,
    pub end: Nanos,
}

impl CallAt {
    fn of(id: SpanId, parent: Option<NonZeroU64>, start: SystemTime, end: SystemTime) -> CallAt {
        CallAt {
            id,
            parent: parent.map(u64::from),
            start: nanos(start),
            end: nanos(end),
        }
    }
}

/// What an encoder made of a whole run.
pub(crate) struct Encoded {
    pub spans: Vec<SpanData>,
    pub streamed: Option<Streamed>,
}

impl Encoder {
    pub(crate) fn new(ids: RunIds, out: Option<TraceOut>, keep: bool) -> Encoder {
        Encoder {
            head: span_json::span_head(&ids),
            ids,
            names: Vec::new(),
            escaped: Vec::new(),
            open: Vec::new(),
            spare: Vec::new(),
            keep,
            kept: Vec::new(),
            out,
            calls: CallJson::default(),
            scratch: (Vec::new(), Vec::new()),
            parent_hex: None,
            secs: span_json::Seconds::default(),
            last_whole: None,
            pattern: Pattern::default(),
        }
    }

    /// Replays a batch, leaving it empty with its capacity for the recorder to fill again.
    pub(crate) fn take(&mut self, batch: &mut Batch) {
        // Records are read in place and dropped together at the end, not moved out one by one.
        let mut calls = batch.calls.iter();
        for e in batch.events.drain(..) {
            match e {
                Event::ModelCall { id, end } => {
                    if let Some(c) = calls.next() {
                        self.model_call(id, nanos(end), c);
                    }
                }
                Event::WholeCall {
                    id,
                    parent,
                    start,
                    end,
                } => {
                    if let Some(c) = calls.next() {
                        self.whole_call(CallAt::of(id, parent, start, end), c, false);
                        self.last_whole = Some(Box::new(c.clone()));
                        self.pattern.clear();
                    }
                }
                Event::RepeatCall {
                    id,
                    parent,
                    start,
                    end,
                } => self.repeat_call(CallAt::of(id, parent, start, end)),
                e => self.event(e),
            }
        }
        batch.calls.clear();
    }

    /// A model call's attributes, in `ModelCallSpan::each_attr`'s order, then its end.
    fn model_call(&mut self, id: SpanId, end: Nanos, c: &CallRecord) {
        let Some(s) = self.open.iter_mut().rev().find(|s| s.id == id) else {
            return;
        };
        let call = c.resolve(&self.names);
        if self.out.is_some() {
            match self.calls.get(c, &self.names) {
                Some(json) => {
                    // Kept without the comma that follows attributes given earlier.
                    if !s.attrs.is_empty() && !json.is_empty() {
                        s.attrs.push(b',');
                    }
                    s.attrs.extend_from_slice(json);
                }
                None => call_json(&mut s.attrs, &call),
            }
        }
        if let Some(d) = &mut s.data {
            kept_attrs(&mut d.attrs, &call);
        }
        self.close(id, end, c.status, None);
    }

    /// A model call's whole span, written at once: no open span to keep, no buffers to fill.
    fn whole_call(&mut self, at: CallAt, c: &CallRecord, pattern: bool) {
        let CallAt {
            id,
            parent,
            start,
            end,
        } = at;
        if let Some(out) = &mut self.out {
            let (name, uncached) = &mut self.scratch;
            name.clear();
            name.extend_from_slice(b"\"chat ");
            match &c.model {
                Text::Interned(i) => {
                    if let Some(e) = self.escaped.get(*i as usize) {
                        name.extend_from_slice(e);
                    }
                }
                Text::Owned(m) => span_json::escaped(name, m),
            }
            name.push(b'"');
            let attrs = match self.calls.get(c, &self.names) {
                Some(json) => json,
                None => {
                    uncached.clear();
                    call_json(uncached, &c.resolve(&self.names));
                    uncached
                }
            };
            let parent_hex = parent.map(|p| match self.parent_hex {
                Some((q, hex)) if q == p => hex,
                _ => {
                    let hex = span_json::id_hex(&self.ids, p);
                    self.parent_hex = Some((p, hex));
                    hex
                }
            });
            let item = out.item();
            let from = item.len();
            let fields = span_json::Closed {
                head: &self.head,
                ids: &self.ids,
                id,
                parent: parent_hex,
                kind: SpanKind::ModelCall,
                name,
                start,
                end,
                attrs,
                status: c.status,
                message: None,
            }
            .write(item, &mut self.secs);
            if pattern {
                self.pattern.keep(&item[from..], fields, parent);
            }
            out.written();
        }
        self.keep_call(at, c);
    }

    /// A model call that says what the last whole one said: a patched copy of the last
    /// repeat's JSON when it can be, written whole otherwise.
    fn repeat_call(&mut self, at: CallAt) {
        let Some(c) = self.last_whole.take() else {
            return;
        };
        let copied = self.out.as_mut().is_some_and(|out| {
            let done = self.pattern.write(out, &self.ids, at, &mut self.secs);
            if done {
                out.written();
            }
            done
        });
        if copied {
            self.keep_call(at, &c);
        } else {
            self.whole_call(at, &c, true);
        }
        self.last_whole = Some(c);
    }

    /// A model call's span as data, when spans are kept.
    fn keep_call(&mut self, at: CallAt, c: &CallRecord) {
        if self.keep {
            let CallAt {
                id,
                parent,
                start,
                end,
            } = at;
            let call = c.resolve(&self.names);
            let mut attrs = Vec::new();
            kept_attrs(&mut attrs, &call);
            self.kept.push(SpanData {
                id,
                parent,
                kind: SpanKind::ModelCall,
                name: format!("chat {}", call.model),
                start: time(start),
                end: Some(time(end)),
                attrs,
                status: c.status,
                message: None,
            });
        }
    }

    fn event(&mut self, e: Event) {
        match e {
            Event::Intern(id, s) => {
                // Ids arrive in order; a gap would mean a lost batch, and then the names read empty.
                while self.names.len() < id as usize {
                    self.names.push("".into());
                    self.escaped.push(Vec::new());
                }
                let mut esc = Vec::new();
                if self.out.is_some() {
                    span_json::escaped(&mut esc, &s);
                }
                self.names.push(s);
                self.escaped.push(esc);
            }
            Event::Open {
                id,
                parent,
                kind,
                head,
                tail,
                start,
            } => self.begin(id, parent.map(u64::from), kind, head, &tail, nanos(start)),
            Event::Attr { id, key, value } => self.attr(id, key, &value),
            Event::Close {
                id,
                end,
                status,
                message,
            } => self.close(id, nanos(end), status, message.as_deref()),
            Event::ModelCall { .. } | Event::WholeCall { .. } | Event::RepeatCall { .. } => {}
        }
    }

    fn begin(
        &mut self,
        id: SpanId,
        parent: Option<SpanId>,
        kind: SpanKind,
        head: &'static str,
        tail: &Text,
        start: Nanos,
    ) {
        let (mut name, attrs) = self.spare.pop().unwrap_or_default();
        if self.out.is_some() {
            name.push(b'"');
            span_json::escaped(&mut name, head);
            match tail {
                Text::Interned(i) => {
                    if let Some(e) = self.escaped.get(*i as usize) {
                        name.extend_from_slice(e);
                    }
                }
                Text::Owned(s) => span_json::escaped(&mut name, s),
            }
            name.push(b'"');
        }
        let data = self.keep.then(|| SpanData {
            id,
            parent,
            kind,
            name: format!("{head}{}", tail.resolve(&self.names)),
            start: time(start),
            end: None,
            attrs: Vec::new(),
            status: SpanStatus::Unset,
            message: None,
        });
        self.open.push(OpenSpan {
            id,
            parent,
            kind,
            start,
            name,
            attrs,
            data,
        });
    }

    fn attr(&mut self, id: SpanId, key: &'static str, value: &Val) {
        let Some(s) = self.open.iter_mut().rev().find(|s| s.id == id) else {
            return;
        };
        if self.out.is_some() {
            match value {
                Val::Text(Text::Interned(i)) => {
                    let esc = self.escaped.get(*i as usize).map_or(&[][..], |e| e);
                    span_json::attr_escaped(&mut s.attrs, key, esc);
                }
                Val::Text(Text::Owned(t)) => span_json::attr_str(&mut s.attrs, key, t),
                Val::Static(v) => span_json::attr(&mut s.attrs, key, &AttrValue::Static(v)),
                Val::Int(n) => span_json::attr(&mut s.attrs, key, &AttrValue::Int(*n)),
                Val::Float(f) => span_json::attr(&mut s.attrs, key, &AttrValue::Float(*f)),
                Val::Bool(b) => span_json::attr(&mut s.attrs, key, &AttrValue::Bool(*b)),
            }
        }
        if let Some(d) = &mut s.data {
            d.attrs.push((key, value.to_attr(&self.names)));
        }
    }

    fn close(&mut self, id: SpanId, end: Nanos, status: SpanStatus, message: Option<&str>) {
        let Some(at) = self.open.iter().rposition(|s| s.id == id) else {
            return;
        };
        let mut s = self.open.remove(at);
        if let Some(out) = &mut self.out {
            span_json::Closed {
                head: &self.head,
                ids: &self.ids,
                id: s.id,
                parent: s.parent.map(|p| span_json::id_hex(&self.ids, p)),
                kind: s.kind,
                name: &s.name,
                start: s.start,
                end,
                attrs: &s.attrs,
                status,
                message,
            }
            .write(out.item(), &mut self.secs);
            out.written();
        }
        if let Some(mut d) = s.data.take() {
            d.end = Some(time(end));
            d.status = status;
            d.message = message.map(str::to_string);
            self.kept.push(d);
        }
        s.name.clear();
        s.attrs.clear();
        self.spare.push((s.name, s.attrs));
    }

    /// Ends the run: spans still open (a run that stopped on an error) close at `end`, oldest
    /// first, and the streamed JSON is finished.
    pub(crate) fn finish(mut self, end: Nanos) -> Encoded {
        self.open.sort_by_key(|s| s.id);
        while let Some(s) = self.open.first() {
            let id = s.id;
            self.close(id, end, SpanStatus::Unset, None);
        }
        Encoded {
            streamed: self.out.map(|o| o.finish(self.keep)),
            spans: self.kept,
        }
    }
}

fn time(n: Nanos) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(n)
}
