//! Spans written straight to OTLP JSON bytes, for the trace a run streams.
//!
//! Going through opentelemetry-proto's `Span` and serde costs several microseconds a span
//! (every id, key and value is copied into owned vectors and strings first, and ids are
//! hex-encoded through intermediate strings); a run of microsecond mocked calls pays that
//! many times over. The encoder (`encoder.rs`) instead encodes a span's name and each
//! attribute as it replays them (`attr`, `attr_str`, `attr_escaped`), into buffers it
//! reuses, and writes the whole span when it closes (`Closed::write`); nothing is allocated
//! per span. Fields that hold their defaults are left out (no trace state, flags, events or
//! links, no parent for a root, an empty status message), as proto3's JSON mapping allows.
//! The official types stay the judge: the tests decode this output with them and compare it
//! with `otlp::to_span`.

use std::time::SystemTime;

use kora_runtime::observe::trace::{AttrValue, SpanId, SpanKind, SpanStatus};

use crate::otlp::nanos;
use crate::recorder::{RunIds, SpanData};
use crate::span_event::Nanos;

const HEX: &[u8; 16] = b"0123456789abcdef";

/// `"00".."99"`: two digits per division when writing a number.
const DIGITS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The bytes every span of a run begins with, up to its own id: `{"traceId":"…","spanId":"`.
pub(crate) fn span_head(ids: &RunIds) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(b"{\"traceId\":\"");
    hex(&mut out, &ids.trace_id);
    out.extend_from_slice(b"\",\"spanId\":\"");
    out
}

/// A span's name as a JSON string literal: `head` (the runtime's own words) then `tail`.
fn name(out: &mut Vec<u8>, head: &str, tail: &str) {
    out.push(b'"');
    escaped(out, head);
    escaped(out, tail);
    out.push(b'"');
}

/// One attribute object, after a comma when `out` already holds one.
pub(crate) fn attr(out: &mut Vec<u8>, key: &'static str, v: &AttrValue) {
    key_start(out, key);
    match v {
        AttrValue::Str(s) => string_value(out, s),
        AttrValue::Static(s) => {
            // The runtime's vocabulary is literals in its source: checked by the tests, not per span.
            debug_assert!(plain(s.as_bytes()), "{s:?} needs escaping");
            out.extend_from_slice(b"\"stringValue\":\"");
            out.extend_from_slice(s.as_bytes());
            out.push(b'"');
        }
        // OTLP JSON writes 64-bit integers as strings.
        AttrValue::Int(n) => {
            out.extend_from_slice(b"\"intValue\":\"");
            if *n < 0 {
                out.push(b'-');
            }
            uint(out, n.unsigned_abs());
            out.push(b'"');
        }
        AttrValue::Float(f) => {
            out.extend_from_slice(b"\"doubleValue\":");
            if serde_json::to_writer(&mut *out, f).is_err() {
                out.extend_from_slice(b"null");
            }
        }
        AttrValue::Bool(b) => {
            out.extend_from_slice(if *b {
                b"\"boolValue\":true"
            } else {
                b"\"boolValue\":false"
            });
        }
    }
    out.extend_from_slice(b"}}");
}

/// A string attribute, encoded without an `AttrValue` in between.
pub(crate) fn attr_str(out: &mut Vec<u8>, key: &'static str, v: &str) {
    key_start(out, key);
    string_value(out, v);
    out.extend_from_slice(b"}}");
}

/// A string attribute whose value is already escaped (an interned name, escaped once a run).
pub(crate) fn attr_escaped(out: &mut Vec<u8>, key: &'static str, escaped: &[u8]) {
    key_start(out, key);
    out.extend_from_slice(b"\"stringValue\":\"");
    out.extend_from_slice(escaped);
    out.extend_from_slice(b"\"}}");
}

fn key_start(out: &mut Vec<u8>, key: &'static str) {
    debug_assert!(plain(key.as_bytes()), "{key:?} needs escaping");
    if !out.is_empty() {
        out.push(b',');
    }
    out.extend_from_slice(b"{\"key\":\"");
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\",\"value\":{");
}

fn string_value(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(b"\"stringValue\":\"");
    escaped(out, s);
    out.push(b'"');
}

/// A closed span, its name and attributes already encoded.
pub(crate) struct Closed<'a> {
    /// `span_head` of the run.
    pub head: &'a [u8],
    pub ids: &'a RunIds,
    pub id: SpanId,
    /// The parent's span id in hex (`id_hex`).
    pub parent: Option<[u8; 16]>,
    pub kind: SpanKind,
    /// The name as a JSON string literal (`name`).
    pub name: &'a [u8],
    pub start: Nanos,
    pub end: Nanos,
    /// Attribute objects, comma-separated (`attr`, `attr_str`).
    pub attrs: &'a [u8],
    pub status: SpanStatus,
    pub message: Option<&'a str>,
}

impl Closed<'_> {
    /// Appends the span, as an item of OTLP JSON's `spans` array, to `out`; `secs` remembers
    /// the last second written, which the next span's times most likely share. Returns where
    /// the span's own id and times sit in what it appended (`span_repeat.rs` patches them).
    pub(crate) fn write(&self, out: &mut Vec<u8>, secs: &mut Seconds) -> Fields {
        let base = out.len();
        out.extend_from_slice(self.head);
        let id = out.len() - base;
        hex_id(out, self.ids.span_id_bytes(self.id));
        if let Some(p) = &self.parent {
            out.extend_from_slice(b"\",\"parentSpanId\":\"");
            out.extend_from_slice(p);
        }
        out.extend_from_slice(b"\",\"name\":");
        out.extend_from_slice(self.name);
        // OTLP's SpanKind: 1 internal, 3 client.
        out.extend_from_slice(match self.kind {
            SpanKind::ModelCall | SpanKind::Attempt => b",\"kind\":3,\"startTimeUnixNano\":\"",
            _ => b",\"kind\":1,\"startTimeUnixNano\":\"",
        });
        let start = (out.len() - base, time(out, self.start, secs));
        out.extend_from_slice(b"\",\"endTimeUnixNano\":\"");
        let end = (out.len() - base, time(out, self.end, secs));
        out.extend_from_slice(b"\",\"attributes\":[");
        out.extend_from_slice(self.attrs);
        out.extend_from_slice(b"],\"status\":{");
        if let Some(m) = self.message.filter(|m| !m.is_empty()) {
            out.extend_from_slice(b"\"message\":\"");
            escaped(out, m);
            out.extend_from_slice(b"\",");
        }
        out.extend_from_slice(match self.status {
            SpanStatus::Unset => b"\"code\":0}}",
            SpanStatus::Ok => b"\"code\":1}}",
            SpanStatus::Error => b"\"code\":2}}",
        });
        Fields {
            id,
            start: start.1.then_some(start.0),
            end: end.1.then_some(end.0),
        }
    }
}

/// Where a written span's id (sixteen hex digits) and times (nineteen digits, when they
/// were written in that form) begin, counted from the span's first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fields {
    pub id: usize,
    pub start: Option<usize>,
    pub end: Option<usize>,
}

/// Appends one recorded span, as an item of OTLP JSON's `spans` array, to `out`.
pub fn write_span(out: &mut Vec<u8>, ids: &RunIds, s: &SpanData, end: SystemTime) {
    let mut n = Vec::new();
    name(&mut n, "", &s.name);
    let mut attrs = Vec::new();
    for (k, v) in &s.attrs {
        attr(&mut attrs, k, v);
    }
    Closed {
        head: &span_head(ids),
        ids,
        id: s.id,
        parent: s.parent.map(|p| id_hex(ids, p)),
        kind: s.kind,
        name: &n,
        start: nanos(s.start),
        end: nanos(s.end.unwrap_or(end)),
        attrs: &attrs,
        status: s.status,
        message: s.message.as_deref(),
    }
    .write(out, &mut Seconds::default());
}

fn hex(out: &mut Vec<u8>, bytes: &[u8]) {
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 15)]);
    }
}

/// A span id in hex: sixteen digits made in place and appended at once.
fn hex_id(out: &mut Vec<u8>, id: [u8; 8]) {
    out.extend_from_slice(&hex16(id));
}

/// The OTLP span id of span `id` of the run, in hex.
pub(crate) fn id_hex(ids: &RunIds, id: SpanId) -> [u8; 16] {
    hex16(ids.span_id_bytes(id))
}

pub(crate) fn hex16(id: [u8; 8]) -> [u8; 16] {
    let mut buf = [0u8; 16];
    for (i, b) in id.into_iter().enumerate() {
        buf[2 * i] = HEX[usize::from(b >> 4)];
        buf[2 * i + 1] = HEX[usize::from(b & 15)];
    }
    buf
}

/// A number in decimal. Times are 19 digits, so they go eight digits at a time in 32-bit
/// arithmetic, two digits per step.
fn uint(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    while n >= 100_000_000 {
        let eight = (n % 100_000_000) as u32;
        n /= 100_000_000;
        let (high, low) = (eight / 10_000, eight % 10_000);
        i -= 8;
        for (at, pair) in [high / 100, high % 100, low / 100, low % 100]
            .into_iter()
            .enumerate()
        {
            let d = pair as usize * 2;
            buf[i + at * 2..i + at * 2 + 2].copy_from_slice(&DIGITS[d..d + 2]);
        }
    }
    let mut m = n as u32;
    while m >= 100 {
        let d = (m % 100) as usize * 2;
        m /= 100;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS[d..d + 2]);
    }
    if m >= 10 {
        let d = m as usize * 2;
        i -= 2;
        buf[i..i + 2].copy_from_slice(&DIGITS[d..d + 2]);
    } else {
        i -= 1;
        buf[i] = b'0' + m as u8;
    }
    out.extend_from_slice(&buf[i..]);
}

/// The seconds part of the last time written, and its ten digits.
#[derive(Default)]
pub(crate) struct Seconds {
    secs: u64,
    digits: [u8; 10],
}

/// A time in nanoseconds since the epoch, in decimal; `true` when it took `time19`'s form.
fn time(out: &mut Vec<u8>, n: Nanos, s: &mut Seconds) -> bool {
    match time19(n, s) {
        Some(digits) => {
            out.extend_from_slice(&digits);
            true
        }
        None => {
            uint(out, n);
            false
        }
    }
}

/// From 2001 to 2286 a time is ten digits of seconds and nine of nanoseconds, and the spans
/// of a run share their seconds, so only the nine are worked out for most; `None` for a time
/// outside those years.
pub(crate) fn time19(n: Nanos, s: &mut Seconds) -> Option<[u8; 19]> {
    let secs = n / 1_000_000_000;
    if !(1_000_000_000..10_000_000_000).contains(&secs) {
        return None;
    }
    if secs != s.secs {
        let mut ten = Vec::with_capacity(10);
        uint(&mut ten, secs);
        s.digits.copy_from_slice(&ten);
        s.secs = secs;
    }
    let mut buf = [0u8; 19];
    buf[..10].copy_from_slice(&s.digits);
    let mut sub = (n % 1_000_000_000) as u32;
    for at in [17, 15, 13, 11] {
        let d = (sub % 100) as usize * 2;
        sub /= 100;
        buf[at..at + 2].copy_from_slice(&DIGITS[d..d + 2]);
    }
    buf[10] = b'0' + sub as u8;
    Some(buf)
}

/// Whether `bytes` can sit inside a JSON string as they are: eight bytes per step, since
/// names and values are almost always plain.
fn plain(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // A byte of `x` is zero exactly when the matching high bit of the result is set.
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let x = u64::from_le_bytes(w);
        // Below 0x20: subtracting 0x20 borrows into the high bit of a byte that was under 0x80.
        let control = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
        if control | zero(x ^ (ONES * u64::from(b'"'))) | zero(x ^ (ONES * u64::from(b'\\'))) != 0 {
            return false;
        }
    }
    chunks
        .remainder()
        .iter()
        .all(|&b| b >= 0x20 && b != b'"' && b != b'\\')
}

/// The inside of a JSON string literal: quotes, backslashes and control characters escaped.
pub(crate) fn escaped(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    if plain(bytes) {
        out.extend_from_slice(bytes);
        return;
    }
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[from..i]);
        if esc.is_empty() {
            out.extend_from_slice(b"\\u00");
            hex(out, &[b]);
        } else {
            out.extend_from_slice(esc);
        }
        from = i + 1;
    }
    out.extend_from_slice(&bytes[from..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_reads_as_its_number_whether_or_not_its_seconds_were_seen() {
        let mut secs = Seconds::default();
        let times = [
            0,
            999_999_999,
            1_000_000_000_000_000_000 - 1,
            1_000_000_000_000_000_000,
            1_764_000_000_000_000_007,
            1_764_000_000_000_000_090,
            1_764_000_000_123_456_789,
            1_764_000_001_000_000_000,
            1_764_000_000_999_999_999,
            9_999_999_999_999_999_999,
            10_000_000_000_000_000_000,
            u64::MAX,
        ];
        for n in times {
            let mut out = Vec::new();
            time(&mut out, n, &mut secs);
            assert_eq!(String::from_utf8(out).expect("digits"), n.to_string());
        }
    }
    use crate::otlp::to_span;
    use kora_runtime::observe::trace::Tracer;
    use opentelemetry_proto::tonic::trace::v1::Span;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn the_plain_check_agrees_with_a_byte_at_a_time_one() {
        for filler in [b'a', b' ', 0xff, 0x80, b'!'] {
            for b in 0..=255u8 {
                for at in 0..17 {
                    let mut bytes = vec![filler; 17];
                    bytes[at] = b;
                    let slow = bytes.iter().all(|&c| c >= 0x20 && c != b'"' && c != b'\\');
                    assert_eq!(plain(&bytes), slow, "{b:#x} at {at} among {filler:#x}");
                }
            }
        }
    }

    #[test]
    fn numbers_read_as_rust_writes_them() {
        let mut cases = vec![
            0,
            9,
            10,
            99,
            100,
            99_999_999,
            100_000_000,
            100_000_001,
            u64::MAX,
        ];
        for digits in 1..20 {
            let p = 10u64.pow(digits);
            cases.extend([p - 1, p, p + 1, p + p / 3]);
        }
        cases.push(1_796_324_068_862_985_869);
        for n in cases {
            let mut out = Vec::new();
            uint(&mut out, n);
            assert_eq!(String::from_utf8(out).expect("digits"), n.to_string());
        }
    }

    #[test]
    fn matches_the_official_types_span_for_span() {
        let mut rec = crate::Recorder::new();
        let t0 = UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789);
        let run = rec.open(SpanKind::Run, "run \"odd\"\\name\n\u{1}é.ko", None, t0);
        let call = rec.open(SpanKind::ModelCall, "chat m", Some(run), t0);
        rec.attr(call, "gen_ai.usage.input_tokens", AttrValue::Int(12));
        rec.attr(call, "kora.neg", AttrValue::Int(i64::MIN));
        rec.attr(call, "kora.zero", AttrValue::Int(0));
        rec.attr(call, "kora.f", AttrValue::Float(0.25));
        rec.attr(call, "kora.t", AttrValue::Bool(true));
        rec.attr(call, "kora.n", AttrValue::Bool(false));
        rec.attr(call, "kora.s", AttrValue::Str("tab\there \"q\"".into()));
        rec.attr(call, "kora.st", AttrValue::Static("chat"));
        rec.close(
            call,
            t0 + Duration::from_millis(5),
            SpanStatus::Error,
            Some("why \"x\""),
        );
        let open = rec.open(SpanKind::Agent, "invoke_agent a", Some(run), t0);
        rec.close(run, t0 + Duration::from_millis(9), SpanStatus::Ok, None);
        let end = t0 + Duration::from_secs(1);
        let recording = rec.finish(end);
        assert_eq!(recording.spans.len(), 3);
        assert!(recording.spans.iter().any(|s| s.id == open));
        for s in &recording.spans {
            let mut out = Vec::new();
            write_span(&mut out, &recording.ids, s, end);
            let text = String::from_utf8(out).expect("utf-8");
            let ours: Span = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            assert_eq!(ours, to_span(&recording.ids, s, end), "{text}");
            // What is left out is only what holds its default.
            let theirs = serde_json::to_string(&to_span(&recording.ids, s, end)).expect("serde");
            assert!(text.len() < theirs.len(), "{text}");
        }
    }
}
