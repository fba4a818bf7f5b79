//! The interpreter's side of the observation seams: attaching a tracer and opening spans on
//! it, recording a worker's spans for its caller, and the module globals a debugger shows.
//!
//! `observe/` defines the `Tracer` and `Debugger` traits and knows no interpreter; these are
//! the calls the evaluator makes on them.

use std::time::SystemTime;

use kora_check::hir::ModId;

use crate::eval::interp::Interp;
use crate::observe::span_buffer::SpanBuffer;
use crate::observe::trace::{AttrValue, SpanId, SpanKind, SpanStatus, Spend, Tracer, Tracing};
use crate::value::Value;

impl<'io> Interp<'io> {
    /// Attaches a tracer: from now on model calls and their attempts are reported to it,
    /// as children of `parent` (a span the caller opened on the same tracer) when given.
    pub fn attach_tracer(&mut self, sink: Box<dyn Tracer + 'io>, parent: Option<SpanId>) {
        self.tracing = Some(Tracing {
            sink,
            open: parent.into_iter().collect(),
            spend: vec![Spend::default()],
        });
    }

    /// Opens a span under the innermost open one (for the CLI's run and test spans).
    pub fn span_open(&mut self, kind: SpanKind, name: &str) -> Option<SpanId> {
        let t = self.tracing.as_mut()?;
        let id = t
            .sink
            .open(kind, name, t.open.last().copied(), SystemTime::now());
        t.open.push(id);
        Some(id)
    }

    pub fn span_attr(&mut self, key: &'static str, value: AttrValue) {
        if let Some(t) = self.tracing.as_mut() {
            if let Some(&id) = t.open.last() {
                t.sink.attr(id, key, value);
            }
        }
    }

    /// Closes the innermost open span.
    pub fn span_close(&mut self, status: SpanStatus, message: Option<&str>) {
        if let Some(t) = self.tracing.as_mut() {
            if let Some(id) = t.open.pop() {
                t.sink.close(id, SystemTime::now(), status, message);
            }
        }
    }

    pub fn is_tracing(&self) -> bool {
        self.tracing.is_some()
    }
}

impl Interp<'_> {
    /// What a debugger shows as a module's globals: module-level names live
    /// in module slots, not in the frame of the module's body.
    pub fn module_globals(&self, module: ModId) -> Vec<(String, Value)> {
        let m = module.0 as usize;
        let (Some(names), Some(values)) = (
            self.prog.modules.get(m).map(|m| &m.globals),
            self.globals.get(m),
        ) else {
            return Vec::new();
        };
        names.iter().cloned().zip(values.iter().cloned()).collect()
    }

    /// `setVariable` on a module's top-level name.
    pub fn set_module_global(
        &mut self,
        module: ModId,
        name: &str,
        value: Value,
    ) -> Result<(), String> {
        let m = module.0 as usize;
        let i = self
            .prog
            .modules
            .get(m)
            .and_then(|md| md.globals.iter().position(|n| n == name))
            .ok_or_else(|| format!("`{name}` is not a top-level name of this module"))?;
        let slot = self
            .globals
            .get_mut(m)
            .and_then(|g| g.get_mut(i))
            .ok_or_else(|| format!("`{name}` has no value yet"))?;
        match slot {
            Value::Cell(c) => *c.borrow_mut() = value,
            other => *other = value,
        }
        Ok(())
    }
}

impl<'io> Interp<'io> {
    /// Starts recording this (worker) interpreter's spans into `buf`.
    pub(crate) fn trace_into(&mut self, buf: &'io mut SpanBuffer) {
        self.attach_tracer(Box::new(buf), None);
    }
}

impl Interp<'_> {
    /// What a worker's model calls spent, read before the worker is dropped.
    pub(crate) fn worker_spend(&self) -> Spend {
        self.tracing
            .as_ref()
            .and_then(|t| t.spend.first().copied())
            .unwrap_or_default()
    }

    /// Replays a worker's spans under the innermost open span, and adds its spend to the
    /// innermost open agent. `branch` marks the worker's top spans with their input index.
    pub(crate) fn adopt_spans(&mut self, buf: SpanBuffer, branch: Option<usize>) {
        let Some(t) = self.tracing.as_mut() else {
            return;
        };
        t.charge(buf.spent);
        let under = t.open.last().copied();
        buf.replay(&mut *t.sink, under, branch);
    }
}

impl Interp<'_> {
    /// Replays the branches' spans, in input order, under the open `parallel for` span and
    /// closes it; what the branches spent goes to the innermost open agent.
    pub(crate) fn close_fan_out_span(
        &mut self,
        branches: Vec<(usize, SpanBuffer)>,
        n: usize,
        finished: usize,
        raised: bool,
    ) {
        for (i, buf) in branches {
            self.adopt_spans(buf, Some(i));
        }
        self.span_attr("kora.parallel.branches", AttrValue::count(n));
        self.span_attr("kora.parallel.finished", AttrValue::count(finished));
        let status = if raised {
            SpanStatus::Error
        } else {
            SpanStatus::Ok
        };
        self.span_close(status, None);
    }
}
