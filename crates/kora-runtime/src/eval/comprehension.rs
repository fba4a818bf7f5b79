//! Comprehensions and the generator arguments of `any`, `all` and `sum`, consumed without a list.

use kora_check::hir::{self, CompKind};
use kora_syntax::ast::BinOp;

use crate::error::RtResult;
use crate::eval::expr::{at, hashable};
use crate::eval::interp::Interp;
use crate::value::iter::iterate;
use crate::value::{Dict, Set, Value};

impl Interp<'_> {
    pub(crate) fn comprehension(&mut self, c: &hir::Comp) -> RtResult<Value> {
        let mut acc = match c.kind {
            CompKind::List | CompKind::Generator => Acc::List(Vec::new()),
            CompKind::Set => Acc::Set(Set::default()),
            CompKind::Dict => Acc::Dict(Dict::default()),
        };
        let mut size = None;
        self.comp_each(c, 0, &mut size, &mut |_, k, v| {
            match &mut acc {
                Acc::List(l) => {
                    crate::value::grow::room(l, "the list")?;
                    l.push(k)
                }
                Acc::Set(s) => {
                    crate::value::grow::entry_room(s.len(), 32, "the set")?;
                    s.insert(hashable(k)?);
                }
                Acc::Dict(d) => {
                    crate::value::grow::entry_room(d.len(), 48, "the dict")?;
                    d.insert(hashable(k)?, v.unwrap_or_default());
                }
            }
            Ok(true)
        })?;
        let built = match acc {
            Acc::List(v) => Value::list(v),
            Acc::Set(s) => Value::set(s),
            Acc::Dict(d) => Value::dict(d),
        };
        // How many elements there are is decided by what was iterated (the size row).
        Ok(crate::labels::label::wrap_opt(built, size))
    }

    /// `any(x for ...)` / `all(x for ...)`: consumes the generator lazily and stops
    /// at the first decisive element, as Python does.
    pub(crate) fn lazy_any_all(&mut self, c: &hir::Comp, want: bool) -> RtResult<Value> {
        let mut found = false;
        // The answer depends on every element read (the table's gather row).
        let mut tag = None;
        let mut size = None;
        self.comp_each(c, 0, &mut size, &mut |_, k, _| {
            if crate::labels::label::any() {
                tag = crate::labels::label::join(tag, crate::labels::label::deep(&k));
            }
            if k.truthy() == want {
                found = true;
                return Ok(false);
            }
            Ok(true)
        })?;
        Ok(crate::labels::label::wrap_opt(
            Value::Bool(if want { found } else { !found }),
            crate::labels::label::join(tag, size),
        ))
    }

    /// `sum(x for ...)`: adds as the generator produces, so no list is built.
    pub(crate) fn lazy_sum(&mut self, c: &hir::Comp) -> RtResult<Value> {
        let mut acc = Value::Int(0);
        let mut size = None;
        self.comp_each(c, 0, &mut size, &mut |_, x, _| {
            acc = match (&acc, &x) {
                (Value::Int(s), Value::Int(i)) if s.checked_add(*i).is_some() => Value::Int(s + i),
                (Value::Float(s), Value::Float(f)) => Value::Float(s + f),
                _ => crate::value::arith::binary(BinOp::Add, &acc, &x)?,
            };
            Ok(true)
        })?;
        Ok(crate::labels::label::wrap_opt(acc, size))
    }

    #[allow(clippy::type_complexity)]
    /// Runs the comprehension's clauses, handing each produced element (and its
    /// value, for a dict) to `sink`; the sink returns false to stop early. Once labels
    /// exist, `size` gathers the labels of what the clauses iterate: they decide how many
    /// elements there are.
    fn comp_each(
        &mut self,
        c: &hir::Comp,
        i: usize,
        size: &mut Option<crate::labels::label::Tag>,
        sink: &mut dyn FnMut(&mut Self, Value, Option<Value>) -> RtResult<bool>,
    ) -> RtResult<bool> {
        let Some(clause) = c.clauses.get(i) else {
            let k = self.eval(&c.elt)?;
            let v = match &c.value {
                Some(v) => Some(self.eval(v)?),
                None => None,
            };
            return at(sink(self, k, v), &c.elt);
        };
        let iterable = self.eval(&clause.iter)?;
        if crate::labels::label::any() {
            *size = crate::labels::label::join(*size, crate::labels::label::deep(&iterable));
        }
        let mut it = at(iterate(&iterable), &clause.iter)?;
        // The innermost clause produces elements itself rather than through one more call.
        let last = i + 1 == c.clauses.len();
        'items: while let Some(v) = it.next() {
            self.assign(&clause.target, v)?;
            for cond in &clause.conds {
                if !self.truth(cond)? {
                    continue 'items;
                }
            }
            let go_on = if last {
                let k = self.eval(&c.elt)?;
                let v = match &c.value {
                    Some(v) => Some(self.eval(v)?),
                    None => None,
                };
                at(sink(self, k, v), &c.elt)?
            } else {
                self.comp_each(c, i + 1, size, sink)?
            };
            if !go_on {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

enum Acc {
    List(Vec<Value>),
    Set(Set),
    Dict(Dict),
}
