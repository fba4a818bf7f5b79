//! `for` loops: ranges into a local walked on an `i64`, everything else through `iter::Iter`.

use kora_check::hir::{self, Stmt, Target};

use crate::error::RtResult;
use crate::eval::interp::{Flow, Interp};
use crate::value::iter::iterate;
use crate::value::{store, Value};

impl Interp<'_> {
    pub(crate) fn exec_for(&mut self, t: &Target, it: &hir::Expr, body: &[Stmt]) -> RtResult<Flow> {
        let iterable = match (&it.kind, t) {
            (hir::ExprKind::Call(f, args), Target::Local(slot))
                if matches!(f.kind, hir::ExprKind::Builtin(b) if b.0 == crate::eval::builtins::id::RANGE)
                    && args.keywords.is_empty()
                    && args.star.is_empty()
                    && (1..=3).contains(&args.positional.len()) =>
            {
                // `for i in range(...)` with int bounds loops without making the range.
                let mut vals: [Value; 3] = Default::default();
                for (v, a) in vals.iter_mut().zip(&args.positional) {
                    *v = self.eval(a)?;
                }
                let n = args.positional.len();
                let bounds = match &vals[..n] {
                    [Value::Int(stop)] => Some((0, *stop, 1)),
                    [Value::Int(start), Value::Int(stop)] => Some((*start, *stop, 1)),
                    [Value::Int(start), Value::Int(stop), Value::Int(step)] if *step != 0 => {
                        Some((*start, *stop, *step))
                    }
                    _ => None,
                };
                if let Some((start, stop, step)) = bounds {
                    return self.range_loop(*slot, start, stop, step, body);
                }
                let id = hir::BuiltinId(crate::eval::builtins::id::RANGE);
                let all = vals.into_iter().take(n).collect();
                crate::eval::builtins::call_builtin(self, id, all, Vec::new()).map_err(
                    |mut e| {
                        if e.pending.is_none() {
                            e.pending = Some(it.span);
                        }
                        e
                    },
                )?
            }
            _ => self.eval(it)?,
        };
        // Ranges and lists are the common loops: walk them without an iterator object.
        if let (Value::Range(r), Target::Local(slot)) = (&iterable, t) {
            return self.range_loop(*slot, r.start, r.stop, r.step, body);
        }
        let mut iter = iterate(&iterable)?;
        while let Some(v) = iter.next() {
            self.assign(t, v)?;
            match self.exec_block(body)? {
                Flow::Break | Flow::BreakWith => break,
                Flow::Return => return Ok(Flow::Return),
                Flow::Normal | Flow::Continue => {}
            }
        }
        Ok(Flow::Normal)
    }

    /// A `for` over a range into a local: the counter is an `i64`, not an iterator.
    fn range_loop(
        &mut self,
        slot: u32,
        start: i64,
        stop: i64,
        step: i64,
        body: &[Stmt],
    ) -> RtResult<Flow> {
        let mut i = start;
        while (step > 0 && i < stop) || (step < 0 && i > stop) {
            store(&mut self.stack[self.base + slot as usize], Value::Int(i));
            match self.exec_block(body)? {
                Flow::Break | Flow::BreakWith => break,
                Flow::Return => return Ok(Flow::Return),
                Flow::Normal | Flow::Continue => {}
            }
            i = match i.checked_add(step) {
                Some(n) => n,
                None => break,
            };
        }
        Ok(Flow::Normal)
    }
}
