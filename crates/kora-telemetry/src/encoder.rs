//! The encoder: replays a recorder's records (`span_event.rs`) into opentelemetry-proto's own
//! `Span`s, and hands each closed span to whatever wants it: the trace file (as OTLP JSON, through
//! the types' serde), an OTLP exporter (`export.rs`), and the kept `SpanData` (the cost report,
//! tests).
//!
//! It holds what the interpreter's thread no longer does: the spans still open, each built up
//! as its attributes arrive, and the run's interned strings. The spans open at a time are
//! few and close innermost first, so they are a stack searched from the top.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use opentelemetry_proto::tonic::trace::v1::Span;

use kora_runtime::observe::trace::{
    AttrRef, AttrValue, ModelCallSpan, SpanId, SpanKind, SpanStatus,
};

use crate::export::Exporter;
use crate::otlp::{self, nanos};
use crate::recorder::{RunIds, SpanData, Streamed};
use crate::span_event::{Batch, CallRecord, Event, Nanos, Text, Val};
use crate::trace_out::TraceOut;

/// A span between its `Open` and its `Close`.
struct OpenSpan {
    id: SpanId,
    span: Span,
    /// The span as data, when spans are kept.
    data: Option<SpanData>,
}

/// Everything a run's records have said so far.
pub(crate) struct Encoder {
    ids: RunIds,
    names: Vec<Box<str>>,
    open: Vec<OpenSpan>,
    keep: bool,
    kept: Vec<SpanData>,
    /// Where closed spans' JSON goes; `None` writes none.
    out: Option<TraceOut>,
    /// Where closed spans are exported to, when a collector is configured.
    pub(crate) export: Option<Exporter>,
    /// The record of the last whole model call, which a `RepeatCall` says again.
    last_whole: Option<Box<CallRecord>>,
}

/// What an encoder made of a whole run.
pub(crate) struct Encoded {
    pub spans: Vec<SpanData>,
    pub streamed: Option<Streamed>,
    pub export: Option<crate::export::ExportReport>,
}

impl Encoder {
    pub(crate) fn new(ids: RunIds, out: Option<TraceOut>, keep: bool) -> Encoder {
        Encoder {
            ids,
            names: Vec::new(),
            open: Vec::new(),
            keep,
            kept: Vec::new(),
            out,
            export: None,
            last_whole: None,
        }
    }

    /// Replays a batch, leaving it empty with its capacity for the recorder to fill again.
    pub(crate) fn take(&mut self, batch: &mut Batch) {
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
                        self.whole_call(id, parent.map(u64::from), start, end, c);
                        self.last_whole = Some(Box::new(c.clone()));
                    }
                }
                Event::RepeatCall {
                    id,
                    parent,
                    start,
                    end,
                } => {
                    if let Some(c) = self.last_whole.take() {
                        self.whole_call(id, parent.map(u64::from), start, end, &c);
                        self.last_whole = Some(c);
                    }
                }
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
        add_call(&mut s.span, s.data.as_mut(), &c.resolve(&self.names));
        self.close(id, end, c.status, None);
    }

    /// A model call's whole span, made at once: nothing ran inside it.
    fn whole_call(
        &mut self,
        id: SpanId,
        parent: Option<SpanId>,
        start: SystemTime,
        end: SystemTime,
        c: &CallRecord,
    ) {
        let call = c.resolve(&self.names);
        let name = format!("chat {}", call.model);
        let mut span = otlp::span_shell(&self.ids, id, parent, SpanKind::ModelCall, &name);
        span.start_time_unix_nano = nanos(start);
        let mut data = self.keep.then(|| SpanData {
            id,
            parent,
            kind: SpanKind::ModelCall,
            name,
            start,
            end: None,
            attrs: Vec::new(),
            status: SpanStatus::Unset,
            message: None,
        });
        add_call(&mut span, data.as_mut(), &call);
        self.emit(span, data, nanos(end), c.status, None);
    }

    fn event(&mut self, e: Event) {
        match e {
            Event::Intern(id, s) => {
                // Ids arrive in order; a gap would mean a lost batch, and then the names read empty.
                while self.names.len() < id as usize {
                    self.names.push("".into());
                }
                self.names.push(s);
            }
            Event::Open {
                id,
                parent,
                kind,
                head,
                tail,
                start,
            } => self.begin(id, parent.map(u64::from), kind, head, &tail, start),
            Event::Attr { id, key, value } => self.attr(id, key, value),
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
        start: SystemTime,
    ) {
        let name = format!("{head}{}", tail.resolve(&self.names));
        let mut span = otlp::span_shell(&self.ids, id, parent, kind, &name);
        span.start_time_unix_nano = nanos(start);
        let data = self.keep.then(|| SpanData {
            id,
            parent,
            kind,
            name,
            start,
            end: None,
            attrs: Vec::new(),
            status: SpanStatus::Unset,
            message: None,
        });
        self.open.push(OpenSpan { id, span, data });
    }

    fn attr(&mut self, id: SpanId, key: &'static str, value: Val) {
        let Some(s) = self.open.iter_mut().rev().find(|s| s.id == id) else {
            return;
        };
        let value = value.to_attr(&self.names);
        s.span.attributes.push(otlp::kv(key, &value));
        if let Some(d) = &mut s.data {
            d.attrs.push((key, value));
        }
    }

    fn close(&mut self, id: SpanId, end: Nanos, status: SpanStatus, message: Option<&str>) {
        let Some(at) = self.open.iter().rposition(|s| s.id == id) else {
            return;
        };
        let s = self.open.remove(at);
        self.emit(s.span, s.data, end, status, message);
    }

    /// A span that has ended, to each of its destinations.
    fn emit(
        &mut self,
        mut span: Span,
        data: Option<SpanData>,
        end: Nanos,
        status: SpanStatus,
        message: Option<&str>,
    ) {
        span.end_time_unix_nano = end;
        span.status = Some(otlp::status(status, message));
        if let Some(out) = &mut self.out {
            // The official types' own serde: the schema is theirs to keep in step.
            if serde_json::to_writer(out.item(), &span).is_ok() {
                out.written();
            }
        }
        if let Some(mut d) = data {
            d.end = Some(time(end));
            d.status = status;
            d.message = message.map(str::to_string);
            self.kept.push(d);
        }
        if let Some(x) = &mut self.export {
            x.push(span);
        }
    }

    /// Ends the run: spans still open (a run that stopped on an error) close at `end`, oldest
    /// first, the streamed JSON is finished and the last spans are exported.
    pub(crate) fn finish(mut self, end: Nanos) -> Encoded {
        self.open.sort_by_key(|s| s.id);
        while let Some(s) = self.open.first() {
            let id = s.id;
            self.close(id, end, SpanStatus::Unset, None);
        }
        Encoded {
            streamed: self.out.map(|o| o.finish(self.keep)),
            spans: self.kept,
            export: self.export.map(Exporter::finish),
        }
    }
}

/// A model call's attributes onto its span (and its kept data).
fn add_call(span: &mut Span, mut data: Option<&mut SpanData>, call: &ModelCallSpan<'_>) {
    call.each_attr(|key, v| {
        let v = match v {
            AttrRef::Str(t) => AttrValue::Str(t.to_string()),
            AttrRef::Static(t) => AttrValue::Static(t),
            AttrRef::Int(n) => AttrValue::Int(n),
            AttrRef::Strs(l) => AttrValue::StrList(l.to_vec()),
        };
        span.attributes.push(otlp::kv(key, &v));
        if let Some(d) = data.as_deref_mut() {
            d.attrs.push((key, v));
        }
    });
}

fn time(n: Nanos) -> SystemTime {
    UNIX_EPOCH + Duration::from_nanos(n)
}
