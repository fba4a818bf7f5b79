//! The in-memory recorder: implements the runtime's `Tracer` and keeps every span of a run.
//!
//! Spans are appended in the order they open; a span's id is its index
//! plus one, so closing or annotating one is an index, not a search.

use std::time::{SystemTime, UNIX_EPOCH};

use kora_runtime::trace::{AttrValue, SpanId, SpanKind, SpanStatus, Tracer};

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
            _ => None,
        }
    }
}

/// Every span of one run, and the ids that name the run.
pub struct Recorder {
    pub trace_id: [u8; 16],
    /// `YYYYMMDD-HHMMSS-mmm-xxxx` (UTC): sorts by start time, names the trace file.
    pub run_id: String,
    pub spans: Vec<SpanData>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    pub fn new() -> Recorder {
        let now = SystemTime::now();
        let nanos = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let seed = (nanos as u64) ^ (u64::from(std::process::id()) << 32);
        let a = splitmix(seed);
        let b = splitmix(a ^ (nanos >> 64) as u64);
        let mut trace_id = [0u8; 16];
        trace_id[..8].copy_from_slice(&a.to_be_bytes());
        trace_id[8..].copy_from_slice(&b.to_be_bytes());
        let run_id = format!(
            "{}-{:04x}",
            crate::store::timestamp(now),
            (a >> 48) as u16
        );
        Recorder {
            trace_id,
            run_id,
            spans: Vec::new(),
        }
    }

    /// The 8-byte OTLP span id of a recorded span: distinct within the trace, never zero.
    pub fn span_id_bytes(&self, id: SpanId) -> [u8; 8] {
        let t = u64::from_be_bytes(self.trace_id[8..].try_into().unwrap_or([1; 8]));
        splitmix(t ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .max(1)
            .to_be_bytes()
    }

    /// Closes whatever is still open (a run that stopped on an error) at `end`.
    pub fn close_all(&mut self, end: SystemTime) {
        for s in &mut self.spans {
            if s.end.is_none() {
                s.end = Some(end);
            }
        }
    }

    fn get(&mut self, id: SpanId) -> Option<&mut SpanData> {
        let i = usize::try_from(id).ok()?.checked_sub(1)?;
        self.spans.get_mut(i)
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
        let id = self.spans.len() as SpanId + 1;
        self.spans.push(SpanData {
            id,
            parent,
            kind,
            name: name.to_string(),
            start,
            end: None,
            attrs: Vec::new(),
            status: SpanStatus::Unset,
            message: None,
        });
        id
    }

    fn attr(&mut self, span: SpanId, key: &'static str, value: AttrValue) {
        if let Some(s) = self.get(span) {
            s.attrs.push((key, value));
        }
    }

    fn close(&mut self, span: SpanId, end: SystemTime, status: SpanStatus, message: Option<&str>) {
        if let Some(s) = self.get(span) {
            s.end = Some(end);
            s.status = status;
            s.message = message.map(str::to_string);
        }
    }
}

pub(crate) fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
