//! `match` at run time: trying patterns in order, guards that fall through, and the two distinct no-match errors.

use kora_check::hir::{self, OutcomeTagPat, Pattern};

use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::{Flow, Interp};
use crate::value::{OutcomeTag, Value};

impl Interp<'_> {
    pub(crate) fn exec_match(&mut self, subject: &hir::Expr, arms: &[hir::Arm]) -> RtResult<Flow> {
        let v = self.eval(subject)?;
        // Recorded only for the error message; an inline array keeps a failing guard
        // (the common case in a dispatcher) from allocating.
        let mut guarded_off = [kora_syntax::Span::default(); 8];
        let mut n_guarded = 0usize;
        for arm in arms {
            if !self.match_pattern(&arm.pattern, &v)? {
                continue;
            }
            if let Some(g) = &arm.guard {
                self.guard_depth += 1;
                let passed = self.truth(g);
                self.guard_depth -= 1;
                if !passed? {
                    if let Some(slot) = guarded_off.get_mut(n_guarded) {
                        *slot = arm.span;
                    }
                    n_guarded += 1;
                    continue;
                }
            }
            return self.exec_block(&arm.body);
        }
        let mut shown = String::new();
        crate::value::format::repr(&self.prog, &v, &mut shown);
        if shown.chars().count() > 60 {
            shown = format!("{}...", shown.chars().take(57).collect::<String>());
        }
        if n_guarded > 0 {
            let src = &self.prog.modules[self.cur_mod].source;
            let idx = kora_syntax::LineIndex::new(src);
            let lines: Vec<String> = guarded_off[..n_guarded.min(guarded_off.len())]
                .iter()
                .map(|s| idx.line(s.start).to_string())
                .collect();
            return Err(RtError::new(
                codes::GUARDED_OFF,
                format!(
                    "every matching arm was guarded off for {shown} (arms on line {}): add an arm without a guard, or widen a guard",
                    lines.join(", ")
                ),
            ));
        }
        let suggestion = match &v {
            Value::Outcome(o) => {
                let what = match o.tag {
                    OutcomeTag::Ok => "value",
                    OutcomeTag::Exhausted => "meter",
                    _ => "reason",
                };
                format!("`case {}({what}):`", o.tag.name())
            }
            Value::Record(r) => format!("`case {}(...):`", self.prog.record(r.ty).name),
            _ => "`case _:`".to_string(),
        };
        Err(RtError::new(
            codes::NO_ARM,
            format!("no arm matched {shown}: add {suggestion}"),
        ))
    }

    fn match_pattern(&mut self, p: &Pattern, v: &Value) -> RtResult<bool> {
        Ok(match p {
            Pattern::Wildcard => true,
            Pattern::Bind(t) => {
                self.assign(t, v.clone())?;
                true
            }
            Pattern::Literal(e) => {
                // String and int literals, the usual dispatch keys, compare without a copy.
                match (&e.kind, v) {
                    (hir::ExprKind::Str(i), Value::Str(s)) => {
                        return Ok(match &self.consts[*i as usize] {
                            Value::Str(lit) => {
                                std::rc::Rc::ptr_eq(lit, s) || lit.as_str() == s.as_str()
                            }
                            _ => false,
                        })
                    }
                    (hir::ExprKind::Int(i), Value::Int(n)) => return Ok(i == n),
                    _ => {}
                }
                let lit = self.eval(e)?;
                let lit = crate::labels::label::plain(&lit).into_owned();
                // Which case a secret picks is an implicit flow (untracked, as a branch is):
                // the literal is compared with the plain value, so `case True:` matches a
                // secret `True` as `case 1:` matches a secret `1`.
                let v = &*crate::labels::label::plain(v);
                // `True` must not match `1`: literal patterns compare types as Python's do for singletons.
                match (&lit, v) {
                    (Value::Bool(a), Value::Bool(b)) => a == b,
                    (Value::Bool(_), _) | (_, Value::Bool(_)) => false,
                    (Value::None, other) => matches!(other, Value::None),
                    _ => crate::value::compare::values_equal(&lit, v),
                }
            }
            Pattern::Outcome(tag, inner) => {
                let Value::Outcome(o) = v else {
                    return Ok(false);
                };
                let want = match tag {
                    OutcomeTagPat::Ok => OutcomeTag::Ok,
                    OutcomeTagPat::Err => OutcomeTag::Err,
                    OutcomeTagPat::Uncertain => OutcomeTag::Uncertain,
                    OutcomeTagPat::Exhausted => OutcomeTag::Exhausted,
                    OutcomeTagPat::Failed => OutcomeTag::Failed,
                };
                if o.tag != want {
                    return Ok(false);
                }
                match inner {
                    Some(p) => {
                        let payload = o.payload.clone();
                        self.match_pattern(p, &payload)?
                    }
                    None => true,
                }
            }
            Pattern::Record(tid, subs) => {
                let Value::Record(r) = v else {
                    return self.match_opened(p, v);
                };
                if r.ty != *tid {
                    return Ok(false);
                }
                for (i, sp) in subs {
                    let fv = r.fields.borrow().get(*i).cloned().unwrap_or_default();
                    if !self.match_pattern(sp, &fv)? {
                        return Ok(false);
                    }
                }
                true
            }
            Pattern::Sequence(ps) => {
                if let Some(view) = crate::labels::shape::seen(v) {
                    return self.match_opened(p, &view);
                }
                // A tuple is immutable: share it. A list is copied so no borrow is held
                // while sub-patterns bind names.
                let items: std::rc::Rc<Vec<Value>> = match v {
                    Value::List(l) => std::rc::Rc::new(l.borrow().clone()),
                    Value::Tuple(t) => t.clone(),
                    _ => return self.match_opened(p, v),
                };
                if items.len() != ps.len() {
                    return Ok(false);
                }
                for (p, x) in ps.iter().zip(items.iter()) {
                    if !self.match_pattern(p, x)? {
                        return Ok(false);
                    }
                }
                true
            }
            Pattern::SequenceStar(before, rest, after) => {
                if let Some(view) = crate::labels::shape::seen(v) {
                    return self.match_opened(p, &view);
                }
                let items: std::rc::Rc<Vec<Value>> = match v {
                    Value::List(l) => std::rc::Rc::new(l.borrow().clone()),
                    Value::Tuple(t) => t.clone(),
                    _ => return self.match_opened(p, v),
                };
                let fixed = before.len() + after.len();
                if items.len() < fixed {
                    return Ok(false);
                }
                let tail = items.len() - after.len();
                for (p, x) in before.iter().zip(&items[..before.len()]) {
                    if !self.match_pattern(p, x)? {
                        return Ok(false);
                    }
                }
                for (p, x) in after.iter().zip(&items[tail..]) {
                    if !self.match_pattern(p, x)? {
                        return Ok(false);
                    }
                }
                self.assign(rest, Value::list(items[before.len()..tail].to_vec()))?;
                true
            }
            Pattern::Class(test, inner) => {
                if !crate::eval::builtins::is_instance(*test, v) {
                    return Ok(false);
                }
                match inner {
                    Some(p) => self.match_pattern(p, v)?,
                    None => true,
                }
            }
            Pattern::Or(alts) => {
                for a in alts {
                    if self.match_pattern(a, v)? {
                        return Ok(true);
                    }
                }
                false
            }
            Pattern::As(inner, t) => {
                if self.match_pattern(inner, v)? {
                    self.assign(t, v.clone())?;
                    true
                } else {
                    false
                }
            }
        })
    }

    /// A list or record read through a label (a view) matches as its parts, each binding
    /// with the label; anything else does not match.
    #[cold]
    fn match_opened(&mut self, p: &Pattern, v: &Value) -> RtResult<bool> {
        match crate::labels::view::opened(v) {
            Some(parts) => self.match_pattern(p, &parts),
            None => Ok(false),
        }
    }
}
