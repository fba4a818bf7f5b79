//! The recorder: implements the runtime's `Tracer` for one run, streaming its spans as
//! OTLP JSON and keeping them as `SpanData` when asked (the cost report, tests).
//!
//! On the interpreter's thread a tracer call only becomes a fixed-size record in a batch
//! (`span_event.rs`): a span id from a counter, times as the clock read them, names and string
//! values as ids of the run's interned strings (`interner.rs`). Full batches go whole to
//! the encoder (`handoff.rs`, `encoder.rs`), which writes the JSON on a thread of its own
//! when the trace goes to a file. Every span is recorded in the trace: none is sampled or
//! dropped (an export to a collector may drop some, and says so: `export.rs`).

use std::fs::File;
use std::mem;
use std::num::NonZeroU64;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kora_runtime::observe::trace::{
    AttrValue, ModelCallSpan, SpanId, SpanKind, SpanStatus, Tracer,
};

use crate::encoder::Encoder;
use crate::handoff::Handoff;
use crate::interner::Interner;
use crate::otlp::nanos;
use crate::span_event::{Batch, CallRecord, Event, Text, Val, BATCH, STREAMING_BATCH};
use crate::trace_out::TraceOut;

/// One span as recorded.
#[derive(Clone, Debug)]
pub struct SpanData {
    pub id: SpanId,
    pub parent: Option<SpanId>,
    pub kind: SpanKind,
    pub name: String,
    pub start: SystemTime,
    /// `None` while open; a span still open when the run ends is closed at its end.
    pub end: Option<SystemTime>,
    pub attrs: Vec<(&'static str, AttrValue)>,
    pub status: SpanStatus,
    pub message: Option<String>,
}

impl SpanData {
    pub fn attr(&self, key: &str) -> Option<&AttrValue> {
        self.attrs.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        match self.attr(key) {
            Some(AttrValue::Int(n)) => Some(*n),
            _ => None,
        }
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        match self.attr(key) {
            Some(AttrValue::Str(s)) => Some(s),
            Some(AttrValue::Static(s)) => Some(s),
            _ => None,
        }
    }
}

/// What identifies a run in its trace.
#[derive(Clone, Debug)]
pub struct RunIds {
    pub trace_id: [u8; 16],
    /// `YYYYMMDD-HHMMSS-mmm-xxxx` (UTC): sorts by start time, names the trace file.
    pub run_id: String,
}

impl RunIds {
    pub(crate) fn new() -> RunIds {
        let now = SystemTime::now();
        let nanos = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let seed = (nanos as u64) ^ (u64::from(std::process::id()) << 32);
        let a = splitmix(seed);
        let b = splitmix(a ^ (nanos >> 64) as u64);
        let mut trace_id = [0u8; 16];
        trace_id[..8].copy_from_slice(&a.to_be_bytes());
        trace_id[8..].copy_from_slice(&b.to_be_bytes());
        let run_id = format!("{}-{:04x}", crate::store::timestamp(now), (a >> 48) as u16);
        RunIds { trace_id, run_id }
    }

    /// The 8-byte OTLP span id of a recorded span: distinct within the trace, never zero.
    pub fn span_id_bytes(&self, id: SpanId) -> [u8; 8] {
        let mut t = [0u8; 8];
        t.copy_from_slice(&self.trace_id[8..]);
        splitmix(u64::from_be_bytes(t) ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .max(1)
            .to_be_bytes()
    }
}

/// What became of a run's streamed JSON.
pub(crate) enum Streamed {
    /// The `spans` array's items as OTLP JSON, comma-separated.
    Memory(Vec<u8>),
    /// The whole trace, written to this temporary file.
    File(PathBuf),
    /// A trace file that could not be finished: to be removed, and written again whole when
    /// every span was kept (`false` when they were not).
    Broken(PathBuf, bool),
}

/// A finished recording: the spans kept, and the spans' OTLP JSON when it was streamed.
pub struct Recording {
    pub ids: RunIds,
    pub spans: Vec<SpanData>,
    pub(crate) streamed: Option<Streamed>,
    /// What reached the collector, when the run was exported.
    pub export: Option<crate::export::ExportReport>,
}

/// How long records may wait in a batch once a span has closed: a slow run still streams.
const HAND_AFTER: Duration = Duration::from_secs(1);

/// Every span of one run, as records on their way to the encoder.
pub struct Recorder {
    pub ids: RunIds,
    last: SpanId,
    names: Interner,
    batch: Batch,
    /// A span closing at or after this hands the batch over, full or not.
    hand_by: SystemTime,
    /// The record of the last whole model call, which a repeat of it refers to.
    last_whole: Option<CallRecord>,
    /// Records a batch holds before it is handed over: `BATCH`, then `STREAMING_BATCH`
    /// once the encoder runs on its own thread.
    limit: usize,
    to: Handoff,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    /// A recorder that keeps spans in memory only.
    pub fn new() -> Recorder {
        let ids = RunIds::new();
        let enc = Encoder::new(ids.clone(), None, true);
        Recorder::with(ids, Handoff::InPlace(Box::new(enc)))
    }

    /// A recorder that keeps nothing and writes nothing: for a run that only exports.
    pub fn discarding() -> Recorder {
        let ids = RunIds::new();
        let enc = Encoder::new(ids.clone(), None, false);
        Recorder::with(ids, Handoff::InPlace(Box::new(enc)))
    }

    /// Exports the run's spans to a collector as well (`export.rs`). Call before recording.
    pub fn exporting(mut self, cfg: crate::export::ExportConfig, program: &str) -> Recorder {
        if let Some(enc) = self.to.encoder_mut() {
            enc.export = crate::export::Exporter::start(cfg, self.ids.clone(), program);
        }
        self
    }

    /// A recorder that also streams its spans' OTLP JSON into memory.
    pub fn streaming() -> Recorder {
        let ids = RunIds::new();
        let enc = Encoder::new(ids.clone(), Some(TraceOut::memory()), true);
        Recorder::with(ids, Handoff::InPlace(Box::new(enc)))
    }

    /// As `streaming`, into the trace file in `dir`, written by the encoder (on its own thread
    /// once a batch fills) as spans close (`RUN_ID.json.tmp` until `store::write` names it); in memory when the file
    /// cannot be made. With `keep` false no span is kept as data, so a run of many calls
    /// does not grow by every span it made.
    pub fn streaming_to(dir: &Path, program: &str, keep: bool) -> Recorder {
        let ids = RunIds::new();
        let tmp = dir.join(format!("{}.json.tmp", ids.run_id));
        let file = crate::otlp::envelope_parts(&ids, program).and_then(|(prefix, suffix)| {
            if let Some(spare) = crate::recycle::claim(dir, &tmp) {
                return Some(TraceOut::file(tmp.clone(), spare, true, prefix, suffix));
            }
            // The folder is made by a project's first run only: trying the file first saves
            // every later run two system calls.
            let file = File::create(&tmp)
                .or_else(|_| {
                    std::fs::create_dir_all(dir)?;
                    File::create(&tmp)
                })
                .ok()?;
            Some(TraceOut::file(tmp.clone(), file, false, prefix, suffix))
        });
        let to = match file {
            Some(out) => {
                let enc = Encoder::new(ids.clone(), Some(out), keep);
                Handoff::Deferred(Box::new(enc), Some(tmp))
            }
            None => {
                let enc = Encoder::new(ids.clone(), Some(TraceOut::memory()), true);
                Handoff::InPlace(Box::new(enc))
            }
        };
        Recorder::with(ids, to)
    }

    fn with(ids: RunIds, to: Handoff) -> Recorder {
        Recorder {
            ids,
            last: 0,
            names: Interner::default(),
            batch: Batch::with_room(BATCH),
            hand_by: UNIX_EPOCH,
            limit: BATCH,
            last_whole: None,
            to,
        }
    }

    /// Ends the recording: every record is encoded, spans still open (a run that stopped on
    /// an error) close at `end`, and the streamed JSON is finished.
    pub fn finish(mut self, end: SystemTime) -> Recording {
        let last = mem::take(&mut self.batch);
        match self.to.finish(last) {
            Ok(enc) => {
                let done = enc.finish(nanos(end));
                Recording {
                    ids: self.ids,
                    spans: done.spans,
                    streamed: done.streamed,
                    export: done.export,
                }
            }
            Err(tmp) => Recording {
                ids: self.ids,
                spans: Vec::new(),
                streamed: tmp.map(|t| Streamed::Broken(t, false)),
                export: None,
            },
        }
    }

    fn push(&mut self, e: Event) {
        self.batch.events.push(e);
        if self.batch.events.len() >= self.limit {
            self.to.hand(&mut self.batch, true);
            if self.to.is_thread() {
                self.limit = STREAMING_BATCH;
            }
        }
    }

    /// Whether `call` says what the last whole call's record says, checked without interning.
    fn repeats(&self, call: &ModelCallSpan<'_>, status: SpanStatus) -> bool {
        let Some(r) = &self.last_whole else {
            return false;
        };
        let text = |t: &Option<Text>, s: Option<&str>| match (t, s) {
            (Some(t), Some(s)) => self.names.is(t, s),
            (None, None) => true,
            _ => false,
        };
        // The runtime's words are compared by address: a copy of one is only not a repeat.
        let word = |a: &'static str, b: &'static str| std::ptr::eq(a, b);
        let words = |a: Option<&'static str>, b: Option<&'static str>| match (a, b) {
            (Some(a), Some(b)) => word(a, b),
            (a, b) => a.is_none() && b.is_none(),
        };
        r.status == status
            && r.response_id.as_deref() == call.response_id
            && text(&r.response_model, call.response_model)
            && r.finish_reasons.as_slice() == call.finish_reasons
            && text(&r.server_address, call.server_address)
            && r.server_port == call.server_port
            && r.max_tokens == call.max_tokens
            && word(r.answered, call.answered)
            && words(r.outcome, call.outcome)
            && words(r.provider, call.provider)
            && r.usage == call.usage
            && r.attempts == call.attempts
            && r.dropped_exchanges == call.dropped_exchanges
            && self.names.is(&r.model, call.model)
            && self.names.is(&r.site, call.site)
            && text(&r.agent, call.agent)
            && text(&r.error_type, call.error_type)
    }

    /// A model call's record, its strings interned.
    fn call_record(&mut self, call: &ModelCallSpan<'_>, status: SpanStatus) -> CallRecord {
        let events = &mut self.batch.events;
        CallRecord {
            model: self.names.text(call.model, events),
            site: self.names.text(call.site, events),
            agent: call.agent.map(|a| self.names.text(a, events)),
            error_type: call.error_type.map(|e| self.names.text(e, events)),
            provider: call.provider,
            answered: call.answered,
            outcome: call.outcome,
            usage: call.usage,
            attempts: call.attempts,
            dropped_exchanges: call.dropped_exchanges,
            status,
            response_id: call.response_id.map(Box::from),
            response_model: call.response_model.map(|m| self.names.text(m, events)),
            finish_reasons: call.finish_reasons.to_vec(),
            server_address: call.server_address.map(|h| self.names.text(h, events)),
            server_port: call.server_port,
            max_tokens: call.max_tokens,
        }
    }

    /// After a span ends: a batch that has waited long enough goes over even if not full.
    fn ended(&mut self, end: SystemTime) {
        if end >= self.hand_by {
            if !self.batch.events.is_empty() {
                self.to.hand(&mut self.batch, false);
            }
            self.hand_by = end.checked_add(HAND_AFTER).unwrap_or(end);
        }
    }
}

impl Tracer for Recorder {
    fn open(
        &mut self,
        kind: SpanKind,
        name: &str,
        parent: Option<SpanId>,
        start: SystemTime,
    ) -> SpanId {
        self.open_named(kind, "", name, parent, start)
    }

    fn open_named(
        &mut self,
        kind: SpanKind,
        head: &'static str,
        tail: &str,
        parent: Option<SpanId>,
        start: SystemTime,
    ) -> SpanId {
        self.last += 1;
        let tail = self.names.text(tail, &mut self.batch.events);
        self.push(Event::Open {
            id: self.last,
            parent: parent.and_then(NonZeroU64::new),
            kind,
            head,
            tail,
            start,
        });
        self.last
    }

    fn attr(&mut self, span: SpanId, key: &'static str, value: AttrValue) {
        let value = match value {
            AttrValue::Str(s) => Val::Text(self.names.text(&s, &mut self.batch.events)),
            AttrValue::Static(s) => Val::Static(s),
            AttrValue::Int(n) => Val::Int(n),
            AttrValue::Float(f) => Val::Float(f),
            AttrValue::Bool(b) => Val::Bool(b),
            AttrValue::StrList(l) => Val::List(l.into_boxed_slice()),
        };
        self.push(Event::Attr {
            id: span,
            key,
            value,
        });
    }

    fn attr_str(&mut self, span: SpanId, key: &'static str, value: &str) {
        let value = Val::Text(self.names.text(value, &mut self.batch.events));
        self.push(Event::Attr {
            id: span,
            key,
            value,
        });
    }

    fn close(&mut self, span: SpanId, end: SystemTime, status: SpanStatus, message: Option<&str>) {
        self.push(Event::Close {
            id: span,
            end,
            status,
            message: message.map(Box::from),
        });
        self.ended(end);
    }

    fn close_model_call(
        &mut self,
        span: SpanId,
        call: &ModelCallSpan<'_>,
        end: SystemTime,
        status: SpanStatus,
    ) {
        let record = self.call_record(call, status);
        self.batch.calls.push(record);
        self.push(Event::ModelCall { id: span, end });
        self.ended(end);
    }

    fn model_call(
        &mut self,
        parent: Option<SpanId>,
        start: SystemTime,
        call: &ModelCallSpan<'_>,
        end: SystemTime,
        status: SpanStatus,
    ) -> SpanId {
        self.last += 1;
        let (id, parent) = (self.last, parent.and_then(NonZeroU64::new));
        if self.repeats(call, status) {
            self.push(Event::RepeatCall {
                id,
                parent,
                start,
                end,
            });
        } else {
            let record = self.call_record(call, status);
            self.last_whole = Some(record.clone());
            self.batch.calls.push(record);
            self.push(Event::WholeCall {
                id,
                parent,
                start,
                end,
            });
        }
        self.ended(end);
        id
    }
}

pub(crate) fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otlp::{from_json, recording_json, to_request};
    use std::time::Duration;

    fn at(ms: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(1_700_000_000_000 + ms)
    }

    #[test]
    fn streamed_json_matches_the_kept_spans_in_whatever_order_they_close() {
        let mut rec = Recorder::streaming();
        let run = rec.open(SpanKind::Run, "run main.ko", None, at(0));
        let a = rec.open_named(SpanKind::Agent, "invoke_agent ", "a\"b", Some(run), at(1));
        let c = rec.open_named(SpanKind::ModelCall, "chat ", "m\n", Some(a), at(2));
        rec.attr_str(c, "gen_ai.request.model", "m\n\u{1}é");
        rec.attr(c, "gen_ai.usage.input_tokens", AttrValue::Int(3));
        // The agent closes before its call: not innermost first.
        rec.close(a, at(3), SpanStatus::Error, Some("why \"x\""));
        rec.attr(a, "kora.late", AttrValue::Bool(true));
        rec.close(99, at(3), SpanStatus::Ok, None);
        rec.close(c, at(4), SpanStatus::Ok, None);
        // The run is still open when the recording ends.
        let recording = rec.finish(at(9));
        let names: Vec<&str> = recording.spans.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["invoke_agent a\"b", "chat m\n", "run main.ko"]);
        assert_eq!(
            recording.spans[0].attrs.len(),
            0,
            "a closed span takes no attribute"
        );
        assert_eq!(recording.spans[1].attrs.len(), 2);
        assert_eq!(recording.spans[2].end, Some(at(9)));
        let text = recording_json(&recording, "main.ko");
        assert_eq!(
            from_json(&text).expect("official OTLP JSON"),
            to_request(&recording, "main.ko"),
            "{text}"
        );
    }

    /// A tracer that keeps the seam's default `close_model_call`, which takes the record apart.
    struct Split<'a>(&'a mut Recorder);

    impl Tracer for Split<'_> {
        fn open(
            &mut self,
            kind: SpanKind,
            name: &str,
            parent: Option<SpanId>,
            start: SystemTime,
        ) -> SpanId {
            self.0.open(kind, name, parent, start)
        }
        fn attr(&mut self, span: SpanId, key: &'static str, value: AttrValue) {
            self.0.attr(span, key, value)
        }
        fn close(
            &mut self,
            span: SpanId,
            end: SystemTime,
            status: SpanStatus,
            message: Option<&str>,
        ) {
            self.0.close(span, end, status, message)
        }
    }

    #[test]
    fn a_model_call_record_says_what_its_attributes_one_by_one_would() {
        let reasons = vec!["length".to_string()];
        let calls = [
            ModelCallSpan {
                model: "m\"odd\n",
                provider: Some("openai"),
                agent: Some("summarize"),
                site: "main.ko:f#0",
                answered: "cassette",
                usage: Some((12, u64::MAX)),
                attempts: 2,
                dropped_exchanges: 1,
                outcome: Some("failed"),
                error_type: Some("429"),
                response_id: Some("chatcmpl-1"),
                response_model: Some("m-2024"),
                finish_reasons: &reasons,
                server_address: Some("127.0.0.1"),
                server_port: Some(8080),
                max_tokens: Some(256),
            },
            ModelCallSpan {
                model: "m",
                site: "main.ko:g#1",
                answered: "mock",
                outcome: Some("ok"),
                ..ModelCallSpan::default()
            },
        ];
        let record = |rec: &mut dyn Tracer| {
            let run = rec.open(SpanKind::Run, "run main.ko", None, at(0));
            // The mocked call again, as from a loop (its JSON is reused), once after an attribute.
            for (i, call) in [calls[0], calls[1], calls[1], calls[1]].iter().enumerate() {
                let c = rec.open_named(SpanKind::ModelCall, "chat ", call.model, Some(run), at(1));
                if i == 3 {
                    rec.attr(c, "kora.before", AttrValue::Bool(true));
                }
                let status = if i == 0 {
                    SpanStatus::Error
                } else {
                    SpanStatus::Ok
                };
                rec.close_model_call(c, call, at(2), status);
            }
            // Closed already: a record for it says nothing.
            rec.close_model_call(run + 1, &calls[1], at(3), SpanStatus::Ok);
            // Whole calls (nothing ran inside them): the mocked one again says what the one
            // before it said (a repeat, no record of its own), then differs in its status.
            for (i, call) in [calls[0], calls[1], calls[1], calls[1]].iter().enumerate() {
                let status = [
                    SpanStatus::Error,
                    SpanStatus::Ok,
                    SpanStatus::Ok,
                    SpanStatus::Unset,
                ][i];
                rec.model_call(Some(run), at(3 + i as u64), call, at(4 + i as u64), status);
            }
            rec.close(run, at(4), SpanStatus::Ok, None);
        };
        let mut whole = Recorder::streaming();
        record(&mut whole);
        let mut split = Recorder::streaming();
        record(&mut Split(&mut split));
        let (whole, split) = (whole.finish(at(9)), split.finish(at(9)));
        assert_eq!(whole.spans.len(), 9);
        assert_eq!(whole.spans[4].name, "chat m\"odd\n");
        assert_eq!(whole.spans[4].attrs.len(), 18);
        assert_eq!(whole.spans[6].str("kora.answered_by"), Some("mock"));
        assert_eq!(whole.spans[6].end, Some(at(6)));
        assert_eq!(whole.spans[7].status, SpanStatus::Unset);
        assert_eq!(whole.spans[7].parent, Some(1));
        for (a, b) in whole.spans.iter().zip(&split.spans) {
            assert_eq!((&a.name, &a.attrs, a.status), (&b.name, &b.attrs, b.status));
        }
        assert_eq!(whole.spans[0].attrs.len(), 18);
        assert_eq!(
            whole.spans[0].attr("gen_ai.response.finish_reasons"),
            Some(&AttrValue::StrList(vec!["length".into()]))
        );
        assert_eq!(
            whole.spans[0].int("gen_ai.usage.output_tokens"),
            Some(i64::MAX)
        );
        assert_eq!(whole.spans[1].str("kora.outcome"), Some("ok"));
        assert_eq!(whole.spans[3].attrs.len(), 6);
        let decoded = |r: &Recording| {
            let text = recording_json(r, "main.ko");
            let req = from_json(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            assert_eq!(req, to_request(r, "main.ko"), "{text}");
            let spans = req.resource_spans[0].scope_spans[0].spans.clone();
            spans
                .into_iter()
                .map(|s| (s.name, s.attributes, s.status))
                .collect::<Vec<_>>()
        };
        assert_eq!(decoded(&whole), decoded(&split));
    }

    #[test]
    fn a_trace_file_fills_as_spans_close_and_keeps_no_span_in_memory() {
        let root = std::env::temp_dir().join(format!("kora-recorder-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = crate::store::trace_dir(&root);
        let mut rec = Recorder::streaming_to(&dir, "main.ko", false);
        let run = rec.open(SpanKind::Run, "run main.ko", None, at(0));
        for i in 0..2000 {
            let c = rec.open_named(SpanKind::ModelCall, "chat ", "m", Some(run), at(1));
            if i % 2 == 0 {
                rec.attr_str(c, "kora.site", "main.ko:3:5");
                rec.attr(c, "kora.i", AttrValue::Int(i));
                rec.close(c, at(2), SpanStatus::Ok, None);
            } else {
                let call = ModelCallSpan {
                    model: "m",
                    site: "main.ko:4:5",
                    answered: "mock",
                    ..ModelCallSpan::default()
                };
                rec.close_model_call(c, &call, at(2), SpanStatus::Ok);
            }
        }
        let tmp = dir.join(format!("{}.json.tmp", rec.ids.run_id));
        // The encoder's thread writes on its own schedule: wait for it, for as long as a
        // loaded machine may need, and fail only if the run's end is the first write.
        let streamed = (0..2000).any(|_| {
            let written = std::fs::metadata(&tmp).map_or(0, |m| m.len());
            written > 1 << 16 || {
                std::thread::sleep(Duration::from_millis(10));
                false
            }
        });
        assert!(streamed, "nothing streamed before the end");
        let recording = rec.finish(at(3));
        assert!(recording.spans.is_empty());
        let path = crate::store::write(&root, &recording, "main.ko").expect("written");
        let req = from_json(&std::fs::read_to_string(&path).expect("trace")).expect("OTLP");
        let spans = &req.resource_spans[0].scope_spans[0].spans;
        assert_eq!(spans.len(), 2001);
        assert_eq!(spans[1999].name, "chat m");
        assert_eq!(spans[1998].attributes.len(), 2);
        assert_eq!(spans[1999].attributes.len(), 4);
        assert_eq!(spans[2000].name, "run main.ko");
        assert_eq!(spans[1999].parent_span_id, spans[2000].span_id);
        let _ = std::fs::remove_dir_all(&root);
    }
}
