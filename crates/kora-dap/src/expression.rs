//! The expressions a debugger evaluates itself: breakpoint conditions, logpoint fields and `setVariable` values, read against one stopped frame.
//!
//! Only what cannot act on the world is accepted: names, literals, operators,
//! fields, indexing and displays. A call could reach a model, a tool or a file,
//! so it is refused when the breakpoint is set, not when it would run.

use kora_check::hir::Program;
use kora_runtime::value::{arith, compare, index};
use kora_runtime::Value;
use kora_syntax::ast::{BoolOp, Expr, ExprKind, StmtKind};

/// Parses `text` as one expression the debugger may evaluate, or says why not.
pub fn parse(text: &str) -> Result<Expr, String> {
    let parsed = kora_syntax::parse(text.trim());
    if let Some(d) = parsed.diagnostics.first() {
        return Err(format!(
            "`{}` is not an expression: {}",
            text.trim(),
            d.message
        ));
    }
    let expr = match parsed.module.stmts.as_slice() {
        [s] => match &s.kind {
            StmtKind::Expr { expr, handlers } if handlers.is_empty() => expr.clone(),
            _ => return Err(format!("`{}` is not an expression", text.trim())),
        },
        _ => return Err(format!("`{}` is not one expression", text.trim())),
    };
    allowed(&expr)?;
    Ok(expr)
}

/// Refuses anything that could act: calls, model and human questions, lambdas, comprehensions.
fn allowed(e: &Expr) -> Result<(), String> {
    let refuse = |what: &str| {
        Err(format!(
            "{what} cannot be used here: a debugger expression is only names, literals, operators, fields and indexing, because evaluating anything else could call a model, spend budget or write a file"
        ))
    };
    match &e.kind {
        ExprKind::Int(_)
        | ExprKind::BigInt(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bytes(_)
        | ExprKind::Bool(_)
        | ExprKind::None
        | ExprKind::Name(_) => Ok(()),
        ExprKind::List(xs) | ExprKind::Tuple(xs) | ExprKind::Set(xs) => {
            xs.iter().try_for_each(allowed)
        }
        ExprKind::Dict(kv) => kv.iter().try_for_each(|(k, v)| {
            allowed(k)?;
            allowed(v)
        }),
        ExprKind::Unary(_, x) | ExprKind::Attr(x, _) => allowed(x),
        ExprKind::Binary(_, a, b) | ExprKind::BoolOp(_, a, b) | ExprKind::Index(a, b) => {
            allowed(a)?;
            allowed(b)
        }
        ExprKind::Compare(first, rest) => {
            allowed(first)?;
            rest.iter().try_for_each(|(_, x)| allowed(x))
        }
        ExprKind::IfExp { cond, then, orelse } => {
            allowed(cond)?;
            allowed(then)?;
            allowed(orelse)
        }
        ExprKind::Call { .. } | ExprKind::Analyze { .. } | ExprKind::AskHuman(_) => {
            refuse("a call")
        }
        ExprKind::Lambda { .. } => refuse("a lambda"),
        ExprKind::Comp { .. } => refuse("a comprehension"),
        ExprKind::FString(_) => refuse("an f-string"),
        _ => refuse("this expression"),
    }
}

/// The names an expression is evaluated against: the frame's locals first, then its module's globals.
pub struct Scope<'a> {
    pub prog: &'a Program,
    pub locals: &'a [(String, Value)],
    pub globals: &'a [(String, Value)],
}

impl Scope<'_> {
    fn name(&self, n: &str) -> Result<Value, String> {
        let found = self
            .locals
            .iter()
            .chain(self.globals.iter())
            .find(|(k, _)| k == n)
            .map(|(_, v)| v);
        match found {
            Some(Value::Cell(c)) => Ok(c.borrow().clone()),
            Some(v) => Ok(v.clone()),
            None => Err(format!("`{n}` is not defined in this frame")),
        }
    }

    /// Evaluates an expression `parse` accepted.
    pub fn eval(&self, e: &Expr) -> Result<Value, String> {
        let rt = |r: Box<kora_runtime::RtError>| r.message.clone();
        Ok(match &e.kind {
            ExprKind::Int(i) => Value::Int(*i),
            ExprKind::Float(f) => Value::Float(*f),
            ExprKind::Str(s) => Value::str(s.clone()),
            ExprKind::Bytes(b) => kora_runtime::value::bytes::Bytes::value(b.clone()),
            ExprKind::Bool(b) => Value::Bool(*b),
            ExprKind::None => Value::None,
            ExprKind::Name(n) => self.name(n)?,
            ExprKind::List(xs) => Value::list(self.all(xs)?),
            ExprKind::Tuple(xs) => Value::Tuple(std::rc::Rc::new(self.all(xs)?)),
            ExprKind::Unary(op, x) => arith::unary(*op, &self.eval(x)?).map_err(rt)?,
            ExprKind::Binary(op, a, b) => {
                arith::binary(*op, &self.eval(a)?, &self.eval(b)?).map_err(rt)?
            }
            ExprKind::BoolOp(op, a, b) => {
                let a = self.eval(a)?;
                match (op, a.truthy()) {
                    (BoolOp::And, false) | (BoolOp::Or, true) => a,
                    _ => self.eval(b)?,
                }
            }
            ExprKind::Compare(first, rest) => {
                let mut left = self.eval(first)?;
                for (op, x) in rest {
                    let right = self.eval(x)?;
                    if !compare::compare_op(*op, &left, &right).map_err(rt)? {
                        return Ok(Value::Bool(false));
                    }
                    left = right;
                }
                Value::Bool(true)
            }
            ExprKind::IfExp { cond, then, orelse } => {
                if self.eval(cond)?.truthy() {
                    self.eval(then)?
                } else {
                    self.eval(orelse)?
                }
            }
            ExprKind::Index(v, i) => {
                index::get_index(self.prog, &self.eval(v)?, &self.eval(i)?).map_err(rt)?
            }
            ExprKind::Attr(v, field) => self.field(self.eval(v)?, &field.name)?,
            _ => {
                return Err("this expression is evaluated by the program, not the debugger".into())
            }
        })
    }

    fn all(&self, xs: &[Expr]) -> Result<Vec<Value>, String> {
        xs.iter().map(|x| self.eval(x)).collect()
    }

    fn field(&self, v: Value, name: &str) -> Result<Value, String> {
        let inner = kora_runtime::labels::label::plain(&v).into_owned();
        if let Value::Record(r) = &inner {
            let rec = self.prog.record(r.ty);
            if let Some(i) = rec
                .fields
                .iter()
                .position(|f| self.prog.name(f.name) == name)
            {
                if let Some(x) = r.fields.borrow().get(i) {
                    return Ok(x.clone());
                }
            }
            return Err(format!("`{}` has no field `{name}`", rec.name));
        }
        Err(format!(
            "only a record's fields can be read here, not `.{name}` of a {}",
            kora_runtime::value::format::type_name_in(self.prog, &v)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_and_effects_are_refused_when_parsed() {
        for e in [
            "f(1)",
            "i == 3 and save(i)",
            "analyze(x, \"p\")",
            "[x for x in xs]",
            "lambda: 1",
        ] {
            let err = parse(e).err().unwrap_or_default();
            assert!(err.contains("cannot be used here"), "{e}: {err}");
        }
        for e in ["", "i ==", "x = 1", "a\nb"] {
            assert!(parse(e).is_err(), "{e} should be refused");
        }
        for e in [
            "i == 3",
            "not done and n % 2 == 0",
            "o.total > 2",
            "xs[0] in [1, 2]",
        ] {
            assert!(parse(e).is_ok(), "{e} should parse");
        }
    }
}
