//! Binding a call's arguments to the callee's frame slots: keywords, defaults, `*rest`, the entry checks.

use std::cell::RefCell;
use std::rc::Rc;

use kora_check::hir;

use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::{Interp, KwNames};
use crate::value::{Function, Value};

impl Interp<'_> {
    /// Puts the captured-variable boxes in place at entry: fresh cells for the slots an
    /// inner function captures, the closure's own cells for what it captured.
    #[inline(never)]
    pub(crate) fn fill_boxes(&mut self, c: &Rc<Function>, base: usize) {
        let def = &c.def;
        for &s in &def.cell_slots {
            let slot = &mut self.stack[base + s as usize];
            let v = std::mem::take(slot);
            *slot = Value::Cell(Rc::new(RefCell::new(v)));
        }
        for &(s, ci) in &def.free_slots {
            if let Some(cell) = c.captures.get(ci as usize) {
                self.stack[base + s as usize] = Value::Cell(cell.clone());
            }
        }
    }

    /// The error for parameter `p` of `def`, whose slot in the frame at `base` holds a
    /// value its annotation refuses. Out of line: the call path only tests.
    #[cold]
    #[inline(never)]
    pub(crate) fn bad_argument(
        &self,
        def: &hir::Function,
        p: &hir::Param,
        base: usize,
    ) -> Box<RtError> {
        let i = def
            .params
            .iter()
            .position(|q| std::ptr::eq(q, p))
            .unwrap_or(0);
        let v = &self.stack[base + p.slot as usize];
        let msg = format!(
            "argument {} (`{}`) of `{}` must be `{}`, got {}",
            i + 1,
            self.prog.name(p.name),
            def.name,
            p.ty,
            crate::value::conform::describe(&self.prog, v)
        );
        RtError::new(codes::TYPE, msg)
    }

    /// The general argument binding: keywords, defaults, `*rest`.
    ///
    /// Positional values sit at `base..base + npos` and keyword values right after them;
    /// everything is moved within the value stack, so binding allocates nothing unless
    /// `*rest` collects extras. Kept out of line so the positional call path of
    /// `invoke_plain` stays small.
    #[inline(never)]
    pub(crate) fn bind_args(
        &mut self,
        c: &Rc<Function>,
        base: usize,
        npos: usize,
        kw: KwNames<'_>,
    ) -> RtResult<()> {
        let def = &c.def;
        let nparams = def.params.len();
        let nlocals = def.nlocals as usize;
        let nkw = kw.len();
        // Park keyword values above the frame so filling slots cannot overwrite one not yet read.
        let top = base + nlocals.max(npos + nkw);
        // Not `resize`: its generic fill is an out-of-line call per frame.
        self.stack.truncate(top);
        self.stack.reserve(top.saturating_sub(self.stack.len()));
        while self.stack.len() < top {
            self.stack.push(Value::None);
        }
        for i in 0..nkw {
            let v = std::mem::take(&mut self.stack[base + npos + i]);
            self.stack.push(v);
        }
        let mut small = [false; 16];
        let mut big = Vec::new();
        let filled: &mut [bool] = if nparams <= small.len() {
            &mut small[..nparams]
        } else {
            big.resize(nparams, false);
            &mut big
        };
        if npos > nparams {
            let Some(s) = def.star else {
                return Err(RtError::new(
                    codes::ARGUMENTS,
                    format!(
                        "{}() takes {} positional argument{} but {} were given",
                        def.name,
                        nparams,
                        if nparams == 1 { "" } else { "s" },
                        npos
                    ),
                ));
            };
            let extra: Vec<Value> = (nparams..npos)
                .map(|i| std::mem::take(&mut self.stack[base + i]))
                .collect();
            self.stack[base + s as usize] = Value::tuple(extra);
        } else if let Some(s) = def.star {
            self.stack[base + s as usize] = Value::tuple(Vec::new());
        }
        for (i, f) in filled.iter_mut().enumerate().take(npos.min(nparams)) {
            debug_assert_eq!(
                def.params[i].slot as usize, i,
                "parameters own the first slots"
            );
            *f = true;
        }
        for i in 0..nkw {
            let k = kw.get(i);
            let v = std::mem::take(&mut self.stack[top + i]);
            match def.params.iter().position(|p| p.name == k) {
                Some(i) if filled[i] => {
                    return Err(RtError::new(
                        codes::ARGUMENTS,
                        format!(
                            "{}() got multiple values for argument '{}'",
                            def.name,
                            self.prog.name(k)
                        ),
                    ))
                }
                Some(i) => {
                    crate::value::store(&mut self.stack[base + def.params[i].slot as usize], v);
                    filled[i] = true;
                }
                None => {
                    return Err(RtError::new(
                        codes::ARGUMENTS,
                        format!(
                            "{}() got an unexpected keyword argument '{}'",
                            def.name,
                            self.prog.name(k)
                        ),
                    ))
                }
            }
        }
        self.stack.truncate(base + nlocals);
        let mut di = 0;
        let mut missing = Vec::new();
        for (i, p) in def.params.iter().enumerate() {
            if let Some(d) = &p.default {
                if !filled[i] {
                    let v = if p.fresh_default {
                        self.eval(d)?
                    } else {
                        c.defaults.get(di).cloned().unwrap_or_default()
                    };
                    crate::value::store(&mut self.stack[base + p.slot as usize], v);
                }
                di += 1;
            } else if !filled[i] {
                missing.push(format!("'{}'", self.prog.name(p.name)));
            }
        }
        if !missing.is_empty() {
            return Err(RtError::new(
                codes::ARGUMENTS,
                format!(
                    "{}() missing {} required argument{}: {}",
                    def.name,
                    missing.len(),
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(" and ")
                ),
            ));
        }
        Ok(())
    }
}
