//! The recorder: implements the runtime's `Tracer` for one run, streaming its spans as
//! OTLP JSON and keeping them as `SpanData` when asked (the cost report, tests).
//!
//! A streaming recorder encodes a span's name and attributes as they arrive, into
//! buffers recycled from spans that closed, and writes the span's JSON into the trace's
//! output when it closes (`trace_out.rs`): a span costs no allocation and no hand-over
//! to another thread, only the bytes themselves. The spans open at a time are few and
//! closed innermost first, so they are a stack searched from the top.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use kora_runtime::trace::{AttrValue, SpanId, SpanKind, SpanStatus, Tracer};

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
}

/// A span between `open` and `close`.
struct OpenSpan {
    id: SpanId,
    parent: Option<SpanId>,
    kind: SpanKind,
    start: SystemTime,
    /// The name as a JSON string literal (empty when nothing is streamed).
    name: Vec<u8>,
    /// Attribute objects as JSON, comma-separated (empty when nothing is streamed).
    attrs: Vec<u8>,
    /// The span as data, when the recorder keeps spans.
    data: Option<SpanData>,
}

/// Every span of one run.
pub struct Recorder {
    pub ids: RunIds,
    last: SpanId,
    open: Vec<OpenSpan>,
    /// Name and attribute buffers of closed spans, for the next ones to fill.
    spare: Vec<(Vec<u8>, Vec<u8>)>,
    keep: bool,
    kept: Vec<SpanData>,
    /// Where closed spans' JSON goes; `None` records data only.
    out: Option<TraceOut>,
    /// `span_json::span_head` of this run.
    head: Vec<u8>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    /// A recorder that keeps spans in memory only.
    pub fn new() -> Recorder {
        Recorder::with(RunIds::new(), None, true)
    }

    /// A recorder that also streams its spans' OTLP JSON into memory as they close.
    pub fn streaming() -> Recorder {
        Recorder::with(RunIds::new(), Some(TraceOut::memory()), true)
    }

    /// As `streaming`, into the trace file in `dir` as spans close (`RUN_ID.json.tmp` until
    /// `store::write` names it); in memory when the file cannot be made. With `keep` false
    /// no span is kept as data, so a run of many calls does not grow by every span it made.
    pub fn streaming_to(dir: &Path, program: &str, keep: bool) -> Recorder {
        let ids = RunIds::new();
        let tmp = dir.join(format!("{}.json.tmp", ids.run_id));
        let file = crate::otlp::envelope_parts(&ids, program).and_then(|(prefix, suffix)| {
            std::fs::create_dir_all(dir).ok()?;
            let file = File::create(&tmp).ok()?;
            Some(TraceOut::file(tmp, file, prefix, suffix))
        });
        match file {
            Some(out) => Recorder::with(ids, Some(out), keep),
            None => Recorder::with(ids, Some(TraceOut::memory()), true),
        }
    }

    fn with(ids: RunIds, out: Option<TraceOut>, keep: bool) -> Recorder {
        Recorder {
            head: crate::span_json::span_head(&ids),
            ids,
            last: 0,
            open: Vec::new(),
            spare: Vec::new(),
            keep,
            kept: Vec::new(),
            out,
        }
    }

    /// Ends the recording: spans still open (a run that stopped on an error) close at `end`,
    /// and the streamed JSON is finished.
    pub fn finish(mut self, end: SystemTime) -> Recording {
        // Oldest first, as an index of slots used to close them.
        self.open.sort_by_key(|s| s.id);
        while let Some(s) = self.open.first() {
            let id = s.id;
            self.close(id, end, SpanStatus::Unset, None);
        }
        Recording {
            streamed: self.out.map(|o| o.finish(self.keep)),
            ids: self.ids,
            spans: self.kept,
        }
    }

    fn begin(
        &mut self,
        kind: SpanKind,
        head: &str,
        tail: &str,
        parent: Option<SpanId>,
        start: SystemTime,
    ) -> SpanId {
        self.last += 1;
        let (mut name, attrs) = self.spare.pop().unwrap_or_default();
        if self.out.is_some() {
            crate::span_json::name(&mut name, head, tail);
        }
        let data = self.keep.then(|| SpanData {
            id: self.last,
            parent,
            kind,
            name: format!("{head}{tail}"),
            start,
            end: None,
            attrs: Vec::new(),
            status: SpanStatus::Unset,
            message: None,
        });
        self.open.push(OpenSpan {
            id: self.last,
            parent,
            kind,
            start,
            name,
            attrs,
            data,
        });
        self.last
    }

    fn get(&mut self, id: SpanId) -> Option<&mut OpenSpan> {
        self.open.iter_mut().rev().find(|s| s.id == id)
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
        self.begin(kind, "", name, parent, start)
    }

    fn open_named(
        &mut self,
        kind: SpanKind,
        head: &'static str,
        tail: &str,
        parent: Option<SpanId>,
        start: SystemTime,
    ) -> SpanId {
        self.begin(kind, head, tail, parent, start)
    }

    fn attr(&mut self, span: SpanId, key: &'static str, value: AttrValue) {
        let json = self.out.is_some();
        if let Some(s) = self.get(span) {
            if json {
                crate::span_json::attr(&mut s.attrs, key, &value);
            }
            if let Some(d) = &mut s.data {
                d.attrs.push((key, value));
            }
        }
    }

    fn attr_str(&mut self, span: SpanId, key: &'static str, value: &str) {
        let json = self.out.is_some();
        if let Some(s) = self.get(span) {
            if json {
                crate::span_json::attr_str(&mut s.attrs, key, value);
            }
            if let Some(d) = &mut s.data {
                d.attrs.push((key, AttrValue::Str(value.to_string())));
            }
        }
    }

    fn close(&mut self, span: SpanId, end: SystemTime, status: SpanStatus, message: Option<&str>) {
        let Some(at) = self.open.iter().rposition(|s| s.id == span) else {
            return;
        };
        let mut s = self.open.remove(at);
        if let Some(out) = &mut self.out {
            crate::span_json::Closed {
                head: &self.head,
                ids: &self.ids,
                id: s.id,
                parent: s.parent,
                kind: s.kind,
                name: &s.name,
                start: s.start,
                end,
                attrs: &s.attrs,
                status,
                message,
            }
            .write(out.item());
            out.written();
        }
        if let Some(mut d) = s.data.take() {
            d.end = Some(end);
            d.status = status;
            d.message = message.map(str::to_string);
            self.kept.push(d);
        }
        s.name.clear();
        s.attrs.clear();
        self.spare.push((s.name, s.attrs));
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

    #[test]
    fn a_trace_file_fills_as_spans_close_and_keeps_no_span_in_memory() {
        let root = std::env::temp_dir().join(format!("kora-recorder-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = crate::store::trace_dir(&root);
        let mut rec = Recorder::streaming_to(&dir, "main.ko", false);
        let run = rec.open(SpanKind::Run, "run main.ko", None, at(0));
        for i in 0..2000 {
            let c = rec.open_named(SpanKind::ModelCall, "chat ", "m", Some(run), at(1));
            rec.attr_str(c, "kora.site", "main.ko:3:5");
            rec.attr(c, "kora.i", AttrValue::Int(i));
            rec.close(c, at(2), SpanStatus::Ok, None);
        }
        let tmp = dir.join(format!("{}.json.tmp", rec.ids.run_id));
        let written = std::fs::metadata(&tmp).map_or(0, |m| m.len());
        assert!(
            written > 1 << 16,
            "streamed before the end: {written} bytes"
        );
        let recording = rec.finish(at(3));
        assert!(recording.spans.is_empty());
        let path = crate::store::write(&root, &recording, "main.ko").expect("written");
        let req = from_json(&std::fs::read_to_string(&path).expect("trace")).expect("OTLP");
        let spans = &req.resource_spans[0].scope_spans[0].spans;
        assert_eq!(spans.len(), 2001);
        assert_eq!(spans[1999].name, "chat m");
        assert_eq!(spans[2000].name, "run main.ko");
        assert_eq!(spans[1999].parent_span_id, spans[2000].span_id);
        let _ = std::fs::remove_dir_all(&root);
    }
}
