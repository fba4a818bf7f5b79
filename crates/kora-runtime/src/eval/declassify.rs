//! The interpreter's side of labels: `classified(...)`, `declassify x for SINK:` blocks, and
//! the checks at the sinks (model calls, dangerous stdlib arguments) that refuse a label.
//!
//! The value-level rules (joining, releasing, rendering) live in `label.rs`; this file only
//! decides, at each boundary, which label is allowed through and says why when it is not.

use kora_check::hir::{self, Stmt};
use kora_syntax::Span;

use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::{Flow, Interp};
use crate::labels::label::{self, Tag};
use crate::observe::trace::{AttrValue, SpanKind, SpanStatus};
use crate::value::Value;

impl Interp<'_> {
    /// `classified(value)`.
    pub(crate) fn eval_classified(&mut self, value: &hir::Expr, origin: &str) -> RtResult<Value> {
        let v = self.eval(value)?;
        Ok(label::wrap(v, Tag::classified(label::origin(origin))))
    }

    /// A literal the label-transparency mode labelled unverified (`literal_labels.rs`).
    pub(crate) fn eval_unverified(&mut self, value: &hir::Expr, origin: &str) -> RtResult<Value> {
        let v = self.eval(value)?;
        Ok(label::wrap(v, Tag::unverified(label::origin(origin))))
    }

    /// `declassify value for sink:`: releases the value's classified parts to `sink` while
    /// the body runs, on every way out of it.
    pub(crate) fn exec_declassify(
        &mut self,
        value: &hir::Expr,
        sink: &str,
        body: &[Stmt],
        span: Span,
    ) -> RtResult<Flow> {
        let unknown = self.with_config(|cfg| (!cfg.knows_sink(sink)).then(|| cfg.sink_names()));
        if let Some(Some(known)) = unknown {
            return Err(RtError::new(
                codes::UNKNOWN_SINK,
                format!(
                    "`declassify ... for {sink}` at {}: no sink `{sink}` (known: {}); name a `[models]` entry, or declare `{sink} = [\"entry\", ...]` under `[sinks]` in kora.toml",
                    self.place(span),
                    known.join(", ")
                ),
            ));
        }
        let v = self.eval(value)?;
        let release = label::release(&v, sink);
        // An inline secret has no box to mark: the release boxed it in a rebuilt value,
        // which the named variable now holds, so the body's reads of it are released.
        if let Some(rebuilt) = release.rebuilt() {
            if let Err(e) = self.put_back(value, rebuilt.clone()) {
                release.end();
                return Err(e);
            }
        }
        // The span names the sink and the place, never the value.
        let traced = self.is_tracing();
        if traced {
            let at = self.place(span);
            self.span_open(SpanKind::Declassify, &format!("declassify for {sink}"));
            self.span_attr("kora.declassify.sink", AttrValue::Str(sink.to_string()));
            self.span_attr("code.location", AttrValue::Str(at));
        }
        let r = self.exec_block(body);
        release.end();
        if traced {
            let status = if r.is_ok() {
                SpanStatus::Ok
            } else {
                SpanStatus::Error
            };
            self.span_close(status, None);
        }
        r
    }

    /// An `if` condition once labels exist. `if name in ALLOWED:` is an allowlist check: when
    /// `name` is unverified and equals an element of `ALLOWED` that is not, the branch runs
    /// with `name` bound to that element, which the program itself vouched for.
    pub(crate) fn allowlist_truth(&mut self, cond: &hir::Expr) -> RtResult<bool> {
        let hir::ExprKind::Compare(first, rest) = &cond.kind else {
            return self.truth(cond);
        };
        let [(kora_syntax::ast::CmpOp::In, container)] = rest.as_slice() else {
            return self.truth(cond);
        };
        let item = self.eval(first)?;
        let pool = self.eval(container)?;
        // A plain item (most are: `if k in seen:`) is a membership test and nothing more; so
        // is a substring test (`if word in text:`), which has no element to narrow to.
        let elements = matches!(
            &*label::plain(&pool),
            Value::List(_) | Value::Tuple(_) | Value::Set(_) | Value::Dict(_)
        );
        if !elements || label::is_scalar(&item) || label::untrusted(&item).is_none() {
            let found = crate::value::compare::contains(&pool, &item)?;
            return Ok(found);
        }
        let Some(target) = name_target(first) else {
            return crate::value::compare::contains(&pool, &item);
        };
        let mut it = crate::value::iter::iterate(&pool)?;
        while let Some(x) = it.next() {
            if crate::value::compare::values_equal(&x, &item) {
                if label::untrusted(&x).is_none() {
                    // Keep a classified label the item had: narrowing is about integrity only.
                    let keep = label::deep(&item)
                        .filter(|t| t.is_classified())
                        .map(Tag::verified);
                    self.assign(&target, label::wrap_opt(x, keep))?;
                }
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The variable an expression names, as an assignment target.
/// Whether an `if` condition has the shape of an allowlist check (`name in POOL`), so
/// every other condition skips `allowlist_truth` and is as cheap as in a plain run.
#[inline]
pub(crate) fn is_allowlist(cond: &hir::Expr) -> bool {
    match &cond.kind {
        hir::ExprKind::Compare(first, rest) => {
            matches!(rest.as_slice(), [(kora_syntax::ast::CmpOp::In, _)])
                && matches!(
                    first.kind,
                    hir::ExprKind::Local(_) | hir::ExprKind::Cell(_) | hir::ExprKind::Global(_)
                )
        }
        _ => false,
    }
}

impl Interp<'_> {
    /// Stores a release's rebuilt value where `declassify` read it: a name, or a field or
    /// item of a place (`o.total`, `xs[0]`, `rows[i].amount`) read again without side
    /// effects. Anything else (`declassify f().x`) has no place to hold it, so the body's
    /// reads of it stay unreleased and are refused, never leaked.
    fn put_back(&mut self, e: &hir::Expr, v: Value) -> RtResult<()> {
        if let Some(target) = name_target(e) {
            return self.assign(&target, v);
        }
        match &e.kind {
            hir::ExprKind::Attr(o, name) if is_place(o) => {
                let obj = self.eval(o)?;
                self.set_attr(&obj, *name, v)
            }
            hir::ExprKind::Index(o, i) if is_place(o) && is_place(i) => {
                let obj = self.eval(o)?;
                let idx = self.eval(i)?;
                crate::value::index::set_index(&obj, &idx, v)
            }
            _ => Ok(()),
        }
    }
}

/// An expression that reads a place and calls nothing, so evaluating it twice is harmless.
fn is_place(e: &hir::Expr) -> bool {
    match &e.kind {
        hir::ExprKind::Local(_)
        | hir::ExprKind::Cell(_)
        | hir::ExprKind::Global(_)
        | hir::ExprKind::Int(_)
        | hir::ExprKind::Str(_) => true,
        hir::ExprKind::Attr(o, _) => is_place(o),
        hir::ExprKind::Index(o, i) => is_place(o) && is_place(i),
        _ => false,
    }
}

fn name_target(e: &hir::Expr) -> Option<hir::Target> {
    match e.kind {
        hir::ExprKind::Local(s) => Some(hir::Target::Local(s)),
        hir::ExprKind::Cell(s) => Some(hir::Target::Cell(s)),
        hir::ExprKind::Global(g) => Some(hir::Target::Global(g)),
        _ => None,
    }
}

/// Refuses an unverified value where it would choose what a dangerous operation touches
/// (`sql` text, a file path, a URL): it must be narrowed first.
pub(crate) fn refuse_unverified(v: &Value, sink: &str) -> RtResult<()> {
    match label::untrusted(v) {
        None => Ok(()),
        Some(tag) => Err(RtError::new(
            codes::UNVERIFIED_TO_SINK,
            format!(
                "{} is unverified and cannot be used as {sink}; narrow it first: parse it into a type (`int(x)`, `json.parse`), or check it against an allowlist (`if x in ALLOWED:`)",
                label::origin_text(tag.untrusted_from),
            ),
        )),
    }
}
