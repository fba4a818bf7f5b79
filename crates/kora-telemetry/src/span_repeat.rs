//! A model call that repeats the last one, written as a copy of that call's span JSON with
//! its span id and times patched in place.
//!
//! The calls of a loop say the same thing under the same parent, so their spans differ in
//! three fields of fixed width: the sixteen hex digits of the id and the nineteen digits of
//! each time. Copying the last span and patching those is a few hundred bytes of `memcpy`,
//! where writing it again walks every key and value. A span is only used as the pattern
//! when all three fields had that width (`span_json::Fields`), and a repeat under another
//! parent, or with a time outside 2001..2286, is written whole and becomes the pattern.

use crate::encoder::CallAt;
use crate::recorder::RunIds;
use crate::span_json::{self, Fields, Seconds};
use crate::trace_out::TraceOut;
use kora_runtime::observe::trace::SpanId;

/// The last repeated call's span, as written, and where its three fields sit.
#[derive(Default)]
pub(crate) struct Pattern {
    bytes: Vec<u8>,
    /// The parent the copied bytes name, and where the fields are; `None` when there is no
    /// usable pattern.
    at: Option<(Option<SpanId>, PatchAt)>,
}

#[derive(Clone, Copy)]
struct PatchAt {
    id: usize,
    start: usize,
    end: usize,
}

impl Pattern {
    /// Forgets the pattern: the next repeat repeats another call.
    pub(crate) fn clear(&mut self) {
        self.at = None;
    }

    /// Keeps `span` (a whole span as `Closed::write` wrote it, with its `fields`) as the
    /// pattern for repeats under `parent`.
    pub(crate) fn keep(&mut self, span: &[u8], fields: Fields, parent: Option<SpanId>) {
        self.at = None;
        let (Some(start), Some(end)) = (fields.start, fields.end) else {
            return;
        };
        self.bytes.clear();
        self.bytes.extend_from_slice(span);
        self.at = Some((
            parent,
            PatchAt {
                id: fields.id,
                start,
                end,
            },
        ));
    }

    /// Appends the pattern to `out` as span `id` from `start` to `end` under `parent`;
    /// `false`, with nothing appended, when the pattern cannot say it.
    pub(crate) fn write(
        &self,
        out: &mut TraceOut,
        ids: &RunIds,
        CallAt {
            id,
            parent,
            start,
            end,
        }: CallAt,
        secs: &mut Seconds,
    ) -> bool {
        let Some((p, at)) = self.at else {
            return false;
        };
        if p != parent {
            return false;
        }
        let (Some(start), Some(end)) =
            (span_json::time19(start, secs), span_json::time19(end, secs))
        else {
            return false;
        };
        let out = out.item();
        let base = out.len();
        out.extend_from_slice(&self.bytes);
        let span = &mut out[base..];
        span[at.id..at.id + 16].copy_from_slice(&span_json::hex16(ids.span_id_bytes(id)));
        span[at.start..at.start + 19].copy_from_slice(&start);
        span[at.end..at.end + 19].copy_from_slice(&end);
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::otlp::{from_json, recording_json, to_request};
    use crate::recorder::{Recorder, Recording};
    use kora_runtime::observe::trace::{ModelCallSpan, SpanKind, SpanStatus, Tracer};
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    fn at(ns: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_nanos(1_700_000_000_000_000_000 + ns)
    }

    /// The streamed JSON, decoded by the official types, against the spans kept as data.
    fn agrees(r: &Recording) -> usize {
        let text = recording_json(r, "main.ko");
        let req = from_json(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(req, to_request(r, "main.ko"), "{text}");
        req.resource_spans[0].scope_spans[0].spans.len()
    }

    #[test]
    fn repeated_calls_copied_from_a_pattern_read_as_if_written_whole() {
        let call = ModelCallSpan {
            model: "m",
            site: "main.ko:f#0",
            answered: "mock",
            outcome: Some("ok"),
            ..ModelCallSpan::default()
        };
        let mut rec = Recorder::streaming();
        let run = rec.open(SpanKind::Run, "run main.ko", None, at(0));
        let agent = rec.open(SpanKind::Agent, "invoke_agent a", Some(run), at(1));
        let mut n = 0;
        // Repeats under one parent, then another, then back; times crossing a second (its
        // ten digits change under the pattern), and one before 2001 (not nineteen digits).
        for parent in [run, run, agent, run] {
            for _ in 0..5 {
                n += 1;
                let start = at(n * 300_000_000);
                let end = at(n * 300_000_000 + 999_999_999);
                rec.model_call(Some(parent), start, &call, end, SpanStatus::Ok);
            }
        }
        let early = UNIX_EPOCH + Duration::from_secs(5);
        rec.model_call(Some(run), early, &call, at(1), SpanStatus::Ok);
        rec.model_call(Some(run), at(2), &call, at(3), SpanStatus::Ok);
        rec.close(agent, at(n * 400_000_000), SpanStatus::Ok, None);
        rec.close(run, at(n * 400_000_000), SpanStatus::Ok, None);
        let r = rec.finish(at(n * 400_000_000));
        assert_eq!(agrees(&r), 24);
        assert_eq!(
            r.spans.iter().filter(|s| s.parent == Some(agent)).count(),
            5
        );
        let mut ids: Vec<_> = r.spans.iter().map(|s| s.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), 24);
    }
}
