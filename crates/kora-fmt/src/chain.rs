//! Postfix chains: `root.attr`, `f(args)`, `xs[i]`, `xs[a:b]` applied one after another.
//!
//! A chain with two or more method calls (an attribute followed by a call or a
//! subscript) is laid out fluently when it breaks, as Black and ruff do: one
//! call per line, each starting with its `.`, the attributes before the first
//! call staying with the root. Shorter chains only break inside their brackets.

use kora_syntax::ast::{Expr, ExprKind};
use kora_syntax::span::Span;
use kora_syntax::token::Tok;

use crate::doc::{group, list, nil, s, text, Doc};
use crate::expr::prec;
use crate::formatter::Fmt;

/// Whether op `i` of a chain is an attribute that a call or subscript follows.
fn is_method(ops: &[&Expr], i: usize) -> bool {
    matches!(ops[i].kind, ExprKind::Attr(..))
        && ops.get(i + 1).is_some_and(|n| {
            matches!(
                n.kind,
                ExprKind::Call { .. } | ExprKind::Index(..) | ExprKind::Slice { .. }
            )
        })
}

impl Fmt<'_> {
    /// The operations of the chain ending in `e`, innermost first, and its root: the
    /// first operand that is not itself a postfix operation (or is parenthesized).
    fn chain_ops<'e>(&self, e: &'e Expr) -> (&'e Expr, Vec<&'e Expr>) {
        let mut ops = vec![e];
        let mut cur = e;
        loop {
            let inner = match &cur.kind {
                ExprKind::Call { func, .. } => func,
                ExprKind::Attr(v, _) | ExprKind::Index(v, _) => v,
                ExprKind::Slice { value, .. } => value,
                _ => break,
            };
            let is_op = matches!(
                inner.kind,
                ExprKind::Call { .. }
                    | ExprKind::Attr(..)
                    | ExprKind::Index(..)
                    | ExprKind::Slice { .. }
            );
            if !is_op || !self.src.parens_around(inner.span).is_empty() {
                cur = inner;
                break;
            }
            ops.push(inner);
            cur = inner;
        }
        ops.reverse();
        (cur, ops)
    }

    pub(crate) fn postfix_chain(&mut self, e: &Expr) -> Doc {
        let (root, ops) = self.chain_ops(e);
        let methods = (0..ops.len()).filter(|&i| is_method(&ops, i)).count();
        let fluent = methods >= 2;
        // `1.real` would read as the float `1.` followed by a name.
        let int_root = matches!(root.kind, ExprKind::Int(_))
            && matches!(ops[0].kind, ExprKind::Attr(..))
            && self.src.parens_around(root.span).is_empty()
            && self.prec_of(root) == prec::ATOM;
        let mut parts = vec![if int_root {
            self.parenthesized(nil(), root, root.span.end)
        } else {
            self.expr_at(root, prec::PRIMARY)
        }];
        let mut called = false;
        let mut prev_end = root.span.end;
        for (i, op) in ops.iter().enumerate() {
            match &op.kind {
                ExprKind::Attr(_, name) => {
                    if fluent && called && is_method(&ops, i) {
                        let dot = self
                            .src
                            .find(prev_end, name.span.start, |t| *t == Tok::Dot)
                            .map_or(name.span.start, |sp| sp.start);
                        let (eol, own) = self.around_break(dot);
                        let brk = self.softline_here();
                        parts.extend([eol, brk, own]);
                    }
                    parts.push(s("."));
                    parts.push(text(name.name.as_str()));
                }
                ExprKind::Call { func, args } => {
                    let open = self.paren_after(func.span.end);
                    let close = Span::new(op.span.end - 1, op.span.end);
                    parts.push(self.call_args(open, close, args));
                    called = true;
                }
                ExprKind::Index(_, idx) => {
                    let close = Span::new(op.span.end - 1, op.span.end);
                    parts.push(self.subscript(idx, close));
                    called = true;
                }
                ExprKind::Slice { lo, hi, step, .. } => {
                    parts.push(self.slice(lo.as_deref(), hi.as_deref(), step.as_deref(), op.span));
                    called = true;
                }
                _ => {}
            }
            prev_end = op.span.end;
        }
        if fluent {
            group(list(parts))
        } else {
            list(parts)
        }
    }

    /// Whether `e` is a chain laid out fluently when it breaks.
    pub(crate) fn is_fluent(&self, e: &Expr) -> bool {
        if !matches!(
            e.kind,
            ExprKind::Call { .. }
                | ExprKind::Attr(..)
                | ExprKind::Index(..)
                | ExprKind::Slice { .. }
        ) {
            return false;
        }
        let (_, ops) = self.chain_ops(e);
        (0..ops.len()).filter(|&i| is_method(&ops, i)).count() >= 2
    }
}
