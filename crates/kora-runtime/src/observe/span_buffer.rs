//! Spans recorded by a worker interpreter (a `parallel for` branch, an isolated agent) and
//! handed to its caller's tracer when the worker ends.
//!
//! A worker runs on another thread with its own interpreter, so it cannot share the
//! caller's `&mut` tracer. Each worker records into a buffer it owns outright, and the
//! caller replays the buffer on its own thread: recording needs no lock, span ids stay
//! the caller tracer's business, and spans keep the times they really had.

use std::time::SystemTime;

use crate::observe::trace::{AttrValue, SpanId, SpanKind, SpanStatus, Spend, Tracer};

struct Buffered {
    kind: SpanKind,
    name: String,
    /// An id inside this buffer; `None` is the worker's root, replayed under the caller's span.
    parent: Option<SpanId>,
    start: SystemTime,
    end: Option<SystemTime>,
    attrs: Vec<(&'static str, AttrValue)>,
    status: SpanStatus,
    message: Option<String>,
}

/// A worker's spans, in the order they were opened (a parent always before its children).
#[derive(Default)]
pub(crate) struct SpanBuffer {
    spans: Vec<Buffered>,
    /// What the worker's model calls spent in all, set when the worker ends.
    pub(crate) spent: Spend,
}

impl SpanBuffer {
    /// Replays the spans into `sink` under `under`; `branch` marks the top spans with the
    /// worker's input index.
    pub(crate) fn replay(
        self,
        sink: &mut dyn Tracer,
        under: Option<SpanId>,
        branch: Option<usize>,
    ) {
        let mut ids: Vec<SpanId> = Vec::with_capacity(self.spans.len());
        let mut last_end = None;
        for s in self.spans {
            let top = s.parent.is_none();
            let parent = match s.parent {
                None => under,
                Some(p) => usize::try_from(p)
                    .ok()
                    .and_then(|p| p.checked_sub(1))
                    .and_then(|p| ids.get(p).copied())
                    .or(under),
            };
            let id = sink.open(s.kind, &s.name, parent, s.start);
            ids.push(id);
            for (k, v) in s.attrs {
                sink.attr(id, k, v);
            }
            if let (true, Some(i)) = (top, branch) {
                sink.attr(id, "kora.parallel.branch", AttrValue::count(i));
            }
            // A span the worker left open (it raised mid-call) ends with the latest one that closed.
            let end = s.end.or(last_end).unwrap_or(s.start);
            last_end = Some(end.max(last_end.unwrap_or(end)));
            sink.close(id, end, s.status, s.message.as_deref());
        }
    }

    fn get(&mut self, id: SpanId) -> Option<&mut Buffered> {
        let i = usize::try_from(id).ok()?.checked_sub(1)?;
        self.spans.get_mut(i)
    }
}

impl Tracer for SpanBuffer {
    fn open(
        &mut self,
        kind: SpanKind,
        name: &str,
        parent: Option<SpanId>,
        start: SystemTime,
    ) -> SpanId {
        self.spans.push(Buffered {
            kind,
            name: name.to_string(),
            parent,
            start,
            end: None,
            attrs: Vec::new(),
            status: SpanStatus::Unset,
            message: None,
        });
        self.spans.len() as SpanId
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn replays_parents_before_children_with_their_own_times() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let mut b = SpanBuffer::default();
        let a = b.open(SpanKind::Agent, "invoke_agent x", None, t0);
        let c = b.open(SpanKind::ModelCall, "chat m", Some(a), t0);
        b.attr(c, "gen_ai.usage.input_tokens", AttrValue::Int(7));
        b.close(c, t0 + Duration::from_millis(3), SpanStatus::Ok, None);
        b.close(a, t0 + Duration::from_millis(4), SpanStatus::Ok, None);
        assert_eq!((a, c), (1, 2));
        assert_eq!(b.spans[1].parent, Some(1));
        assert_eq!(b.spans[1].end, Some(t0 + Duration::from_millis(3)));
        assert_eq!(b.spans[1].attrs.len(), 1);
    }
}
