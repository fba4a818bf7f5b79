//! Type expressions and `case` patterns: written from the tree, with parentheses
//! only where a union inside a union, or an `as`/`|` inside an alternative, needs them.

use kora_syntax::ast::{Pattern, PatternKind, TypeExpr, TypeExprKind};
use kora_syntax::span::Span;

use crate::brackets::{Delim, Fill};
use crate::doc::{list, s, text, Doc};
use crate::expr::prec;
use crate::formatter::Fmt;

impl Fmt<'_> {
    pub(crate) fn ty(&mut self, t: &TypeExpr) -> Doc {
        let lead = self.leading(t.span.start);
        let body = match &t.kind {
            TypeExprKind::Named { name, args } if name == "[]" => self.type_args(args, t.span),
            TypeExprKind::Named { name, args } if args.is_empty() => text(name.as_str()),
            TypeExprKind::Named { name, args } => {
                let a = self.type_args(args, t.span);
                list(vec![text(name.as_str()), a])
            }
            TypeExprKind::Literal(_) => self.string(t.span),
            TypeExprKind::None => s("None"),
            TypeExprKind::Union(members) => {
                let mut parts = Vec::new();
                for (i, m) in members.iter().enumerate() {
                    if i > 0 {
                        parts.push(s(" | "));
                    }
                    if matches!(m.kind, TypeExprKind::Union(_)) {
                        parts.push(s("("));
                        parts.push(self.ty(m));
                        parts.push(s(")"));
                    } else {
                        parts.push(self.ty(m));
                    }
                }
                list(parts)
            }
            TypeExprKind::Error => text(self.src.slice(t.span)),
        };
        list(vec![lead, body])
    }

    /// `[A, B]` closing at the end of `span`.
    fn type_args(&mut self, args: &[TypeExpr], span: Span) -> Doc {
        let starts: Vec<u32> = args.iter().map(|a| a.span.start).collect();
        let d = Delim {
            open: "[",
            close: "]",
            close_at: Span::new(span.end.saturating_sub(1), span.end),
            fill: Fill::Hug,
            comma_single: false,
            trailing_comma: true,
        };
        self.delimited(d, &starts, |f, i| f.ty(&args[i]))
    }

    /// A pattern; `top` is the whole pattern of a `case`, where `a, b` needs no brackets.
    pub(crate) fn pattern(&mut self, p: &Pattern, top: bool) -> Doc {
        let lead = self.leading(p.span.start);
        let body = match &p.kind {
            PatternKind::Wildcard => s("_"),
            PatternKind::Capture(n) => text(n.as_str()),
            PatternKind::Star(n) => text(format!("*{}", n.name)),
            PatternKind::Literal(e) => self.expr_at(e, prec::ATOM.min(prec::UNARY)),
            PatternKind::Constructor { name, args, kwargs } => {
                let mut starts: Vec<u32> = args.iter().map(|a| a.span.start).collect();
                starts.extend(kwargs.iter().map(|(k, _)| k.span.start));
                let d = Delim {
                    open: "(",
                    close: ")",
                    close_at: Span::new(p.span.end.saturating_sub(1), p.span.end),
                    fill: Fill::Hug,
                    comma_single: false,
                    trailing_comma: true,
                };
                let n = args.len();
                let inner = self.delimited(d, &starts, |f, i| {
                    if i < n {
                        f.pattern(&args[i], false)
                    } else {
                        let (k, v) = &kwargs[i - n];
                        list(vec![text(format!("{}=", k.name)), f.pattern(v, false)])
                    }
                });
                list(vec![text(name.name.as_str()), inner])
            }
            PatternKind::Sequence(items) => {
                let first = self.src.slice(p.span).chars().next();
                let starts: Vec<u32> = items.iter().map(|x| x.span.start).collect();
                let (open, close, close_at) = match first {
                    Some('[') => ("[", "]", Span::new(p.span.end - 1, p.span.end)),
                    Some('(') if self.src.self_bracketed(p.span) => {
                        ("(", ")", Span::new(p.span.end - 1, p.span.end))
                    }
                    _ if top && items.len() > 1 => {
                        let mut parts = Vec::new();
                        for (i, x) in items.iter().enumerate() {
                            if i > 0 {
                                parts.push(s(", "));
                            }
                            parts.push(self.pattern(x, false));
                        }
                        return list(vec![lead, list(parts)]);
                    }
                    _ => ("(", ")", Span::new(p.span.end, p.span.end)),
                };
                let d = Delim {
                    open,
                    close,
                    close_at,
                    fill: Fill::OnePerLine,
                    comma_single: open == "(",
                    trailing_comma: true,
                };
                self.delimited(d, &starts, |f, i| f.pattern(&items[i], false))
            }
            PatternKind::Or(alts) => {
                let mut parts = Vec::new();
                for (i, a) in alts.iter().enumerate() {
                    if i > 0 {
                        parts.push(s(" | "));
                    }
                    parts.push(self.closed_pattern(a));
                }
                list(parts)
            }
            PatternKind::As(inner, name) => {
                let inner = match inner.kind {
                    PatternKind::As(..) => self.closed_pattern(inner),
                    _ => self.pattern(inner, false),
                };
                list(vec![inner, text(format!(" as {}", name.name))])
            }
            PatternKind::Error => text(self.src.slice(p.span)),
        };
        list(vec![lead, body])
    }

    /// A pattern that may stand beside `|` or before `as`: `|` and `as` inside need parentheses.
    fn closed_pattern(&mut self, p: &Pattern) -> Doc {
        if matches!(p.kind, PatternKind::Or(_) | PatternKind::As(..)) {
            list(vec![s("("), self.pattern(p, false), s(")")])
        } else {
            self.pattern(p, false)
        }
    }
}
