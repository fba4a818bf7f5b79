//! `assert cond, "message"`: on failure the message shows the values that were compared.
//!
//! A failing `assert a == b` is only useful with `a` and `b` in front of
//! you, so a comparison's operands are evaluated here once, kept, and shown
//! with `repr` when it fails; any other condition shows the value it had.

use kora_check::hir::{self, ExprKind as E};
use kora_syntax::ast::{CmpOp, UnaryOp};

use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::compare::compare_op;
use crate::value::format::repr_string;
use crate::value::Value;

impl Interp<'_> {
    pub(crate) fn exec_assert(&mut self, c: &hir::Expr, msg: Option<&hir::Expr>) -> RtResult<()> {
        let Some(shown) = self.assert_holds(c)? else {
            return Ok(());
        };
        let text = match msg {
            Some(m) => {
                let v = self.eval(m)?;
                let mut s = String::new();
                crate::value::format::to_str(&self.prog, &v, &mut s);
                s
            }
            None => {
                let src = &self.prog.modules[self.cur_mod].source;
                src.get(c.span.range()).unwrap_or("assertion").to_string()
            }
        };
        Err(RtError::new(
            codes::ASSERTION,
            format!("assertion failed: {text}{shown}"),
        ))
    }

    /// `None` when the condition holds; otherwise the lines that show its values.
    fn assert_holds(&mut self, c: &hir::Expr) -> RtResult<Option<String>> {
        match &c.kind {
            E::Compare(first, rest) => {
                let mut left = self.eval(first)?;
                for (op, re) in rest {
                    let right = self.eval(re)?;
                    let holds = compare_op(*op, &left, &right).map_err(|mut e| {
                        e.pending.get_or_insert(c.span);
                        e
                    })?;
                    if !holds {
                        return Ok(Some(self.show_pair(*op, &left, &right)));
                    }
                    left = right;
                }
                Ok(None)
            }
            E::Unary(UnaryOp::Not, inner) => {
                let v = self.eval(inner)?;
                Ok(v.truthy()
                    .then(|| format!("\n  expected a false value, got: {}", self.show(&v))))
            }
            _ => {
                let v = self.eval(c)?;
                Ok((!v.truthy()).then(|| format!("\n  got: {}", self.show(&v))))
            }
        }
    }

    fn show_pair(&self, op: CmpOp, left: &Value, right: &Value) -> String {
        let (l, r) = (self.show(left), self.show(right));
        match op {
            CmpOp::In | CmpOp::NotIn => format!("\n  item:      {l}\n  container: {r}"),
            _ => format!(
                "\n  left:  {l}\n  right: {r}\n  (`{}` is false)",
                op.symbol()
            ),
        }
    }

    /// A value as `repr` shows it, shortened so one huge value cannot bury the message.
    fn show(&self, v: &Value) -> String {
        const MAX: usize = 300;
        let s = repr_string(&self.prog, v);
        if s.chars().count() <= MAX {
            return s;
        }
        let cut: String = s.chars().take(MAX).collect();
        format!("{cut}... ({} characters)", s.chars().count())
    }
}
