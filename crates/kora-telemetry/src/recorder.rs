//! The recorder: implements the runtime's `Tracer` and keeps every span of a run.
//!
//! A span's id is its index plus one, so closing or annotating one is an
//! index, not a search. A streaming recorder hands each span to a writer
//! thread as it closes, which turns it into OTLP JSON while the program
//! goes on running, and (given a folder) writes it to the trace file as it
//! goes; the trace costs the interpreter little more than the allocations
//! of the span itself, and the end of the run only renames a finished file.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread::JoinHandle;
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

/// What a writer thread made of the spans it was handed.
pub(crate) enum Streamed {
    /// The `spans` array's items as OTLP JSON, comma-separated.
    Memory(Vec<u8>),
    /// The whole trace, written to this temporary file.
    File(PathBuf),
    /// A trace file that could not be finished: to be removed, and written again whole when
    /// every span was kept (`false` when they were dropped as they were written).
    Broken(PathBuf, bool),
}

/// A finished recording: every span, and the spans' OTLP JSON when it was streamed.
pub struct Recording {
    pub ids: RunIds,
    pub spans: Vec<SpanData>,
    pub(crate) streamed: Option<Streamed>,
}

/// The trace file a writer thread fills: the envelope around the spans, and where it goes.
struct FileOut {
    tmp: PathBuf,
    file: File,
    prefix: Vec<u8>,
    suffix: Vec<u8>,
    /// Keep every span after writing it (for the cost report).
    keep: bool,
}

/// Spans are handed over in batches: one wake-up of the writer per batch, not per span.
const BATCH: usize = 128;

struct Writer {
    tx: mpsc::Sender<Vec<SpanData>>,
    pending: Vec<SpanData>,
    handle: JoinHandle<(Vec<SpanData>, Streamed)>,
}

/// Every span of one run.
pub struct Recorder {
    pub ids: RunIds,
    /// Slot `id - 1`; emptied when a streamed span is handed to the writer.
    slots: Vec<Option<SpanData>>,
    writer: Option<Writer>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder::new()
    }
}

impl Recorder {
    /// A recorder that keeps spans in memory only.
    pub fn new() -> Recorder {
        Recorder {
            ids: RunIds::new(),
            slots: Vec::new(),
            writer: None,
        }
    }

    /// A recorder whose closed spans are serialised on a background thread during the run.
    pub fn streaming() -> Recorder {
        Recorder::stream(RunIds::new(), None)
    }

    /// As `streaming`, and the writer thread writes the trace file in `dir` as spans close
    /// (`RUN_ID.json.tmp` until `store::write` names it). Without a file it works in memory.
    /// With `keep` false, a span written to the file is dropped there and then: the
    /// recording's `spans` are then only those the file could not take, and a run of many
    /// calls does not grow by every span it made.
    pub fn streaming_to(dir: &Path, program: &str, keep: bool) -> Recorder {
        let ids = RunIds::new();
        let tmp = dir.join(format!("{}.json.tmp", ids.run_id));
        let out = crate::otlp::envelope_parts(&ids, program).and_then(|(prefix, suffix)| {
            std::fs::create_dir_all(dir).ok()?;
            let file = File::create(&tmp).ok()?;
            Some(FileOut {
                tmp,
                file,
                prefix,
                suffix,
                keep,
            })
        });
        Recorder::stream(ids, out)
    }

    fn stream(ids: RunIds, file: Option<FileOut>) -> Recorder {
        let mut r = Recorder {
            ids: ids.clone(),
            slots: Vec::new(),
            writer: None,
        };
        let (tx, rx) = mpsc::channel::<Vec<SpanData>>();
        let spawned = std::thread::Builder::new()
            .name("kora-trace".into())
            .spawn(move || write_spans(&ids, &rx, file));
        // Without a thread the recorder still works, serialising at the end instead.
        if let Ok(handle) = spawned {
            r.writer = Some(Writer {
                tx,
                pending: Vec::with_capacity(BATCH),
                handle,
            });
        }
        r
    }

    /// Ends the recording: spans still open (a run that stopped on an error) close at `end`.
    pub fn finish(mut self, end: SystemTime) -> Recording {
        let mut spans = Vec::new();
        for mut s in self.slots.drain(..).flatten() {
            s.end.get_or_insert(end);
            match &mut self.writer {
                Some(w) => w.pending.push(s),
                None => spans.push(s),
            }
        }
        let mut streamed = None;
        if let Some(mut w) = self.writer.take() {
            let last = std::mem::take(&mut w.pending);
            if let Err(mpsc::SendError(back)) = w.tx.send(last) {
                spans.extend(back);
            }
            drop(w.tx);
            if let Ok((mut written, out)) = w.handle.join() {
                // Spans the writer never saw are missing from what it wrote: written again whole.
                let complete = spans.is_empty();
                streamed = match out {
                    Streamed::File(tmp) if !complete => Some(Streamed::Broken(tmp, false)),
                    Streamed::Memory(_) if !complete => None,
                    out => Some(out),
                };
                written.append(&mut spans);
                spans = written;
            }
        }
        Recording {
            ids: self.ids,
            spans,
            streamed,
        }
    }

    fn get(&mut self, id: SpanId) -> Option<&mut SpanData> {
        let i = usize::try_from(id).ok()?.checked_sub(1)?;
        self.slots.get_mut(i)?.as_mut()
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
        let id = self.slots.len() as SpanId + 1;
        self.slots.push(Some(SpanData {
            id,
            parent,
            kind,
            name: name.to_string(),
            start,
            end: None,
            attrs: Vec::with_capacity(10),
            status: SpanStatus::Unset,
            message: None,
        }));
        id
    }

    fn attr(&mut self, span: SpanId, key: &'static str, value: AttrValue) {
        if let Some(s) = self.get(span) {
            s.attrs.push((key, value));
        }
    }

    fn close(&mut self, span: SpanId, end: SystemTime, status: SpanStatus, message: Option<&str>) {
        let Some(i) = usize::try_from(span).ok().and_then(|i| i.checked_sub(1)) else {
            return;
        };
        let Some(Some(s)) = self.slots.get_mut(i) else {
            return;
        };
        s.end = Some(end);
        s.status = status;
        s.message = message.map(str::to_string);
        if let Some(w) = &mut self.writer {
            if let Some(s) = self.slots[i].take() {
                w.pending.push(s);
                if w.pending.len() >= BATCH {
                    let batch = std::mem::replace(&mut w.pending, Vec::with_capacity(BATCH));
                    if let Err(mpsc::SendError(back)) = w.tx.send(batch) {
                        // The writer is gone: keep the spans here, serialised at the end.
                        for s in back {
                            let at = s.id as usize - 1;
                            self.slots[at] = Some(s);
                        }
                        self.writer = None;
                    }
                }
            }
        }
    }
}

/// The writer thread: serialises each batch as it arrives, into memory or on into the file.
fn write_spans(
    ids: &RunIds,
    rx: &mpsc::Receiver<Vec<SpanData>>,
    file: Option<FileOut>,
) -> (Vec<SpanData>, Streamed) {
    let mut spans = Vec::new();
    let mut json: Vec<u8> = Vec::with_capacity(1 << 16);
    let keep = file.as_ref().is_none_or(|f| f.keep);
    let mut file = file.map(|f| {
        let mut w = BufWriter::with_capacity(1 << 16, f.file);
        let ok = w.write_all(&f.prefix);
        (f.tmp, f.suffix, w, ok)
    });
    let mut first = true;
    for batch in rx {
        for s in batch {
            if !first {
                json.push(b',');
            }
            first = false;
            crate::otlp::push_span_json(&mut json, ids, &s, s.end.unwrap_or(s.start));
            if keep {
                spans.push(s);
            }
        }
        if let Some((_, _, w, ok)) = &mut file {
            if ok.is_ok() {
                *ok = w.write_all(&json);
            }
            json.clear();
        }
    }
    let out = match file {
        None => Streamed::Memory(json),
        Some((tmp, suffix, mut w, ok)) => {
            let done = ok
                .and_then(|()| w.write_all(&suffix))
                .and_then(|()| w.write_all(b"\n"))
                .and_then(|()| w.flush());
            match done {
                Ok(()) => Streamed::File(tmp),
                Err(_) => Streamed::Broken(tmp, keep),
            }
        }
    };
    (spans, out)
}

pub(crate) fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
