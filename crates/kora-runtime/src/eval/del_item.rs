//! `del xs[i]`, `del d[key]` and `del xs[lo:hi:step]`: removing items from a list or a dict.
//!
//! A dict keeps the order of what remains (as Python's does), so the entry is shifted out
//! rather than swapped with the last. A container reached through a label is a view, so the
//! removal happens on the one container every path sees, as `xs.pop(i)` or `d.pop(k)` would
//! do it; a list index's label is split off, a dict key keeps its label as `d.pop(key)` does.

use crate::error::{codes, fail, type_error, RtResult};
use crate::value::compare::hash_key;
use crate::value::format::{repr_string, type_name};
use crate::value::index::{indices_error, int_of, normalize, resolve};
use crate::value::Value;
use kora_check::hir::Program;

/// `del v[idx]`.
pub fn del_index(p: &Program, v: &Value, idx: &Value) -> RtResult<()> {
    match v {
        Value::List(l) => {
            let (idx, tag) = crate::labels::label::split(idx);
            let Some(i) = int_of(&idx) else {
                return indices_error("list", &idx)
                    .map_err(|e| crate::labels::label::withhold(e, tag));
            };
            let mut l = l.borrow_mut();
            match normalize(i, l.len()) {
                Some(i) => {
                    l.remove(i);
                    Ok(())
                }
                None => fail(codes::INDEX, "list assignment index out of range"),
            }
        }
        // As `d.pop(key)`: a labelled key finds its entry, and a missing one is shown redacted.
        Value::Dict(d) => {
            let k = hash_key(idx)?;
            match d.borrow_mut().shift_remove(&k) {
                Some(_) => Ok(()),
                None => fail(codes::KEY, repr_string(p, idx)),
            }
        }
        Value::Cell(c) => del_index(p, &c.borrow(), idx),
        Value::Labeled(l) => del_index(p, &l.value, idx),
        _ => type_error(format!(
            "'{}' object does not support item deletion",
            type_name(v)
        )),
    }
}

/// `del v[lo:hi:step]` (lists only, as in Python).
pub fn del_slice(v: &Value, lo: Option<i64>, hi: Option<i64>, step: Option<i64>) -> RtResult<()> {
    match v {
        Value::List(l) => {
            let mut l = l.borrow_mut();
            let r = resolve(lo, hi, step, l.len())?;
            let mut gone: Vec<usize> = r.indices().collect();
            gone.sort_unstable();
            let mut k = 0;
            let mut at = 0;
            l.retain(|_| {
                let keep = gone.get(k) != Some(&at);
                if !keep {
                    k += 1;
                }
                at += 1;
                keep
            });
            Ok(())
        }
        Value::Cell(c) => del_slice(&c.borrow(), lo, hi, step),
        Value::Labeled(l) => del_slice(&l.value, lo, hi, step),
        _ => type_error(format!(
            "'{}' object does not support item deletion",
            type_name(v)
        )),
    }
}

impl crate::eval::interp::Interp<'_> {
    /// `del a, b, ...`: each item removed in order, as Python does.
    pub(crate) fn exec_del(&mut self, items: &[kora_check::hir::Expr]) -> RtResult<()> {
        use kora_check::hir::ExprKind as E;
        for e in items {
            let r = match &e.kind {
                E::Index(o, i) => {
                    let obj = self.eval(o)?;
                    let idx = self.eval(i)?;
                    let r = del_index(&self.prog, &obj, &idx);
                    // Which item went (a list) or whether one did (a dict) is the key's.
                    if let (Ok(()), Some(t)) = (&r, crate::labels::label::deep(&idx)) {
                        crate::labels::shape::mark(&obj, t);
                    }
                    r
                }
                E::Slice(o, lo, hi, step) => {
                    let obj = self.eval(o)?;
                    // Deleting makes no value for the bounds' labels to go on...
                    let mut tag = None;
                    let lo = self.opt_int(lo.as_deref(), &mut tag)?;
                    let hi = self.opt_int(hi.as_deref(), &mut tag)?;
                    let step = self.opt_int(step.as_deref(), &mut tag)?;
                    // ... but they decide how many items remain: the list's shape carries them.
                    let r = del_slice(&obj, lo, hi, step);
                    if let (Ok(()), Some(t)) = (&r, tag) {
                        crate::labels::shape::mark(&obj, t);
                    }
                    r
                }
                // The checker lowers nothing else into a `del`.
                _ => type_error("cannot delete this expression"),
            };
            crate::eval::expr::at(r, e)?;
        }
        Ok(())
    }
}
