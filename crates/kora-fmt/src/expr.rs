//! Expressions: precedence and parentheses, operator chains, calls, subscripts,
//! displays, comprehensions, lambdas, and Kora's call forms.
//!
//! Parentheses the author wrote around an expression are kept (several become
//! one); parentheses are added only where precedence needs them. The tree has
//! no node for parentheses, so `Source::parens_around` finds them by span.

use kora_syntax::ast::{
    Arg, ArgKind, BinOp, BoolOp, CompClause, CompKind, Expr, ExprKind, Param, UnaryOp,
};
use kora_syntax::span::Span;
use kora_syntax::token::Tok;

use crate::brackets::{Delim, Fill};
use crate::doc::{group, indent, list, s, softline, text, Doc};
use crate::formatter::Fmt;
use crate::literals::{normalize_number, normalize_string};

/// Binding strength, loosest first, as in Python's grammar.
pub(crate) mod prec {
    pub const TUPLE: u8 = 0;
    /// Any single expression (`test`): what an argument or an element may be.
    pub const LAMBDA: u8 = 1;
    pub const IFEXP: u8 = 2;
    pub const OR: u8 = 3;
    pub const AND: u8 = 4;
    pub const NOT: u8 = 5;
    pub const CMP: u8 = 6;
    pub const BOR: u8 = 7;
    pub const BXOR: u8 = 8;
    pub const BAND: u8 = 9;
    pub const SHIFT: u8 = 10;
    pub const ARITH: u8 = 11;
    pub const TERM: u8 = 12;
    pub const UNARY: u8 = 13;
    pub const POWER: u8 = 14;
    pub const PRIMARY: u8 = 15;
    pub const ATOM: u8 = 16;
}

fn bin_prec(op: BinOp) -> u8 {
    match op {
        BinOp::BitOr => prec::BOR,
        BinOp::BitXor => prec::BXOR,
        BinOp::BitAnd => prec::BAND,
        BinOp::Shl | BinOp::Shr => prec::SHIFT,
        BinOp::Add | BinOp::Sub => prec::ARITH,
        BinOp::Mul | BinOp::Div | BinOp::FloorDiv | BinOp::Mod => prec::TERM,
        BinOp::Pow => prec::POWER,
    }
}

/// How a statement's value may be split when it does not fit.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// A name, a literal, a dotted name: parentheses only if they make it fit.
    Atom,
    /// Ends in its own brackets, which break first.
    Bracketed,
    /// `a, b` without parentheses.
    BareTuple,
    /// Operators: wrapped in parentheses to break inside them.
    Other,
}

impl Fmt<'_> {
    /// Where `e`'s code starts, counting parentheses written around it.
    pub(crate) fn start_of(&self, e: &Expr) -> u32 {
        self.src
            .parens_around(e.span)
            .last()
            .map_or(e.span.start, |(o, _)| o.start)
    }

    fn is_generator_without_parens(&self, e: &Expr) -> bool {
        matches!(
            &e.kind,
            ExprKind::Comp {
                kind: CompKind::Generator,
                ..
            }
        ) && !self.src.self_bracketed(e.span)
    }

    pub(crate) fn prec_of(&self, e: &Expr) -> u8 {
        match &e.kind {
            ExprKind::Tuple(items) => {
                if items.is_empty() || self.src.self_bracketed(e.span) {
                    prec::ATOM
                } else {
                    prec::TUPLE
                }
            }
            ExprKind::Lambda { .. } | ExprKind::Starred(_) => prec::LAMBDA,
            ExprKind::IfExp { .. } => prec::IFEXP,
            ExprKind::BoolOp(BoolOp::Or, ..) => prec::OR,
            ExprKind::BoolOp(BoolOp::And, ..) => prec::AND,
            ExprKind::Unary(UnaryOp::Not, _) => prec::NOT,
            ExprKind::Unary(..) => prec::UNARY,
            ExprKind::Compare(..) => prec::CMP,
            ExprKind::Binary(op, ..) => bin_prec(*op),
            ExprKind::Int(_) if self.src.slice(e.span).starts_with('-') => prec::UNARY,
            _ => prec::ATOM,
        }
    }

    pub(crate) fn shape(&self, e: &Expr) -> Shape {
        match &e.kind {
            ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Bool(_)
            | ExprKind::None => Shape::Atom,
            ExprKind::Str(_) | ExprKind::Bytes(_) | ExprKind::FString(_) => {
                if self.string_tokens(e.span).len() == 1 {
                    Shape::Atom
                } else {
                    Shape::Other
                }
            }
            ExprKind::Attr(v, _) if self.shape(v) == Shape::Atom => Shape::Atom,
            _ if self.is_fluent(e) => Shape::Other,
            ExprKind::Call { .. }
            | ExprKind::Index(..)
            | ExprKind::Slice { .. }
            | ExprKind::List(_)
            | ExprKind::Dict(_)
            | ExprKind::Set(_)
            | ExprKind::Analyze { .. }
            | ExprKind::AskHuman(_)
            | ExprKind::Classified(_) => Shape::Bracketed,
            ExprKind::Comp { .. } if !self.is_generator_without_parens(e) => Shape::Bracketed,
            ExprKind::Tuple(items) => {
                if items.is_empty() || self.src.self_bracketed(e.span) {
                    Shape::Bracketed
                } else {
                    Shape::BareTuple
                }
            }
            _ => Shape::Other,
        }
    }

    /// `e` where its operand must bind at least as tightly as `min`.
    pub(crate) fn expr_at(&mut self, e: &Expr, min: u8) -> Doc {
        self.expr_with(e, min, false)
    }

    /// `e` as a call's only argument, where a generator needs no parentheses of its own.
    fn expr_with(&mut self, e: &Expr, min: u8, sole_arg: bool) -> Doc {
        let parens = self.src.parens_around(e.span);
        let needed = self.prec_of(e) < min || (self.is_generator_without_parens(e) && !sole_arg);
        if parens.is_empty() && !needed {
            let lead = self.leading(e.span.start);
            let body = self.expr_body(e);
            return list(vec![lead, body]);
        }
        let (open, close) = match parens.last() {
            Some((o, c)) => (o.start, c.start),
            None => (e.span.start, e.span.end),
        };
        let lead = self.leading(open);
        if parens.is_empty() {
            // The parentheses become the node's own, so a second pass sees the same thing.
            match &e.kind {
                ExprKind::Tuple(items) => {
                    let end = Span::new(e.span.end, e.span.end);
                    return list(vec![lead, self.display(items, "(", ")", end, true)]);
                }
                ExprKind::Comp {
                    kind,
                    elt,
                    value,
                    clauses,
                } => {
                    let c = self.comprehension(e, *kind, elt, value.as_deref(), clauses, true);
                    return list(vec![lead, c]);
                }
                _ => {}
            }
        }
        self.parenthesized(lead, e, close)
    }

    /// `( e )` that breaks inside like any bracket; `close` bounds the comments after `e`.
    pub(crate) fn parenthesized(&mut self, lead: Doc, e: &Expr, close: u32) -> Doc {
        let (eol, own) = self.around_break(e.span.start);
        let body = self.breaks(true, |f| f.expr_body(e));
        let dangling = self.dangling(close);
        list(vec![
            lead,
            group(list(vec![
                s("("),
                indent(list(vec![eol, softline(), own, body, dangling])),
                softline(),
                s(")"),
            ])),
        ])
    }

    /// The expression itself, without parentheses around it.
    pub(crate) fn expr_body(&mut self, e: &Expr) -> Doc {
        match &e.kind {
            ExprKind::Int(_) | ExprKind::BigInt(_) | ExprKind::Float(_) => self.number(e),
            ExprKind::Str(_) | ExprKind::Bytes(_) | ExprKind::FString(_) => self.string(e.span),
            ExprKind::Bool(true) => s("True"),
            ExprKind::Bool(false) => s("False"),
            ExprKind::None => s("None"),
            ExprKind::Name(n) => text(n.as_str()),
            ExprKind::List(items) => self.display(items, "[", "]", e.span, false),
            ExprKind::Set(items) => self.display(items, "{", "}", e.span, false),
            ExprKind::Tuple(items) => {
                if items.is_empty() || self.src.self_bracketed(e.span) {
                    self.display(items, "(", ")", e.span, true)
                } else if items.len() == 1 {
                    self.display(items, "(", ")", Span::new(e.span.end, e.span.end), true)
                } else {
                    self.flat_tuple(items)
                }
            }
            ExprKind::Dict(pairs) => self.dict(pairs, e.span),
            ExprKind::Comp {
                kind,
                elt,
                value,
                clauses,
            } => self.comprehension(e, *kind, elt, value.as_deref(), clauses, false),
            ExprKind::Unary(UnaryOp::Not, x) => list(vec![s("not "), self.expr_at(x, prec::NOT)]),
            ExprKind::Unary(op, x) => {
                let sign = match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Pos => "+",
                    _ => "~",
                };
                // `-x**2` is `-(x**2)`: Black writes the parentheses to say so.
                let min = if matches!(x.kind, ExprKind::Binary(BinOp::Pow, ..)) {
                    prec::ATOM
                } else {
                    prec::UNARY
                };
                list(vec![s(sign), self.expr_at(x, min)])
            }
            ExprKind::Binary(BinOp::Pow, a, b) => {
                let tight = self.simple_power_operand(a) && self.simple_power_operand(b);
                let a = self.expr_at(a, prec::PRIMARY);
                let b = self.expr_at(b, prec::UNARY);
                list(vec![a, s(if tight { "**" } else { " ** " }), b])
            }
            ExprKind::Binary(..) | ExprKind::BoolOp(..) => self.chain(e),
            ExprKind::Compare(..) => self.chain(e),
            ExprKind::Call { .. }
            | ExprKind::Attr(..)
            | ExprKind::Index(..)
            | ExprKind::Slice { .. } => self.postfix_chain(e),
            ExprKind::Lambda { params, body } => self.lambda(params, body),
            ExprKind::IfExp { cond, then, orelse } => {
                let t = self.expr_at(then, prec::OR);
                let (eol1, own1) = self.around_break(self.start_of(cond));
                let c = self.expr_at(cond, prec::OR);
                let (eol2, own2) = self.around_break(self.start_of(orelse));
                let o = self.expr_at(orelse, prec::LAMBDA);
                let l1 = self.line_here();
                let l2 = self.line_here();
                group(list(vec![
                    t,
                    eol1,
                    l1,
                    own1,
                    s("if "),
                    c,
                    eol2,
                    l2,
                    own2,
                    s("else "),
                    o,
                ]))
            }
            ExprKind::Analyze { args, stream } => {
                let open = self.paren_after(e.span.start + 1);
                let close = self.closer(open);
                let a = self.call_args(open, close, args);
                let tail = if *stream { s(" stream") } else { s("") };
                list(vec![s("analyze"), a, tail])
            }
            ExprKind::AskHuman(args) => {
                let open = self.paren_after(e.span.start + 1);
                let close = self.closer(open);
                let a = self.call_args(open, close, args);
                list(vec![s("ask_human"), a])
            }
            ExprKind::Classified(x) => {
                let open = self.paren_after(e.span.start + 1);
                let close = self.closer(open);
                let start = self.start_of(x);
                let d = Delim {
                    open: "(",
                    close: ")",
                    close_at: close,
                    fill: Fill::Hug,
                    comma_single: false,
                    trailing_comma: true,
                };
                let inner = self.delimited(d, &[start], |f, _| f.expr_at(x, prec::LAMBDA));
                list(vec![s("classified"), inner])
            }
            ExprKind::Starred(x) => list(vec![s("*"), self.expr_at(x, prec::BOR)]),
            ExprKind::Error => text(self.src.slice(e.span)),
        }
    }

    /// The `(` that opens the list after `offset` (a call's or a keyword form's).
    pub(crate) fn paren_after(&self, offset: u32) -> Span {
        self.src
            .find(offset, u32::MAX, |t| *t == Tok::LParen)
            .unwrap_or(Span::new(offset, offset))
    }

    /// The bracket closing the one at `open`.
    pub(crate) fn closer(&self, open: Span) -> Span {
        self.src
            .closer_of(open.start)
            .unwrap_or(Span::new(open.end, open.end))
    }

    fn number(&self, e: &Expr) -> Doc {
        let raw = self.src.slice(e.span);
        let compact: String = raw.chars().filter(|c| !c.is_whitespace()).collect();
        match compact.strip_prefix('-') {
            Some(digits) => text(format!("-{}", normalize_number(digits))),
            None if !compact.is_empty() => text(normalize_number(&compact)),
            None => match &e.kind {
                ExprKind::Int(v) => text(v.to_string()),
                ExprKind::BigInt(digits) => text(digits.clone()),
                ExprKind::Float(v) => text(format!("{v:?}")),
                _ => text(""),
            },
        }
    }

    /// The string and f-string tokens of a literal (adjacent ones concatenate).
    pub(crate) fn string_tokens(&self, span: Span) -> Vec<String> {
        self.src
            .tokens_in(span)
            .iter()
            .filter_map(|(t, _)| match t {
                Tok::Str(raw) | Tok::Bytes(raw) | Tok::FStr(raw) => {
                    Some(normalize_string(raw, self.opts.quote_style))
                }
                _ => None,
            })
            .collect()
    }

    pub(crate) fn string(&mut self, span: Span) -> Doc {
        let toks: Vec<(u32, String)> = self
            .src
            .tokens_in(span)
            .iter()
            .filter_map(|(t, sp)| match t {
                Tok::Str(raw) | Tok::Bytes(raw) | Tok::FStr(raw) => {
                    Some((sp.start, normalize_string(raw, self.opts.quote_style)))
                }
                _ => None,
            })
            .collect();
        if toks.len() <= 1 {
            return text(toks.into_iter().next().map(|t| t.1).unwrap_or_default());
        }
        let mut parts = Vec::new();
        for (i, (start, t)) in toks.into_iter().enumerate() {
            if i > 0 {
                let (eol, own) = self.around_break(start);
                parts.extend([eol, self.line_here(), own]);
            }
            parts.push(text(t));
        }
        group(list(parts))
    }

    fn simple_power_operand(&self, e: &Expr) -> bool {
        if !self.src.parens_around(e.span).is_empty() {
            return false;
        }
        match &e.kind {
            ExprKind::Name(_) | ExprKind::Int(_) | ExprKind::Float(_) => true,
            ExprKind::Attr(v, _) => self.simple_power_operand(v),
            ExprKind::Unary(UnaryOp::Neg, x) => self.simple_power_operand(x),
            ExprKind::Binary(BinOp::Pow, a, b) => {
                self.simple_power_operand(a) && self.simple_power_operand(b)
            }
            _ => false,
        }
    }

    /// `a + b - c`: one group over the operands of one precedence level, broken before
    /// each operator. `and` and `or` share one group, as Black splits at both alike.
    fn chain(&mut self, e: &Expr) -> Doc {
        let items = self.chain_items(e).unwrap_or_default();
        self.chain_parts(items, true)
    }

    /// The operands of the operator chain `e` (`a + b - c`, `a and b or c`, `a < b <= c`),
    /// each with the operator before it and the binding its operand needs.
    pub(crate) fn chain_items<'e>(
        &self,
        e: &'e Expr,
    ) -> Option<Vec<(Option<&'static str>, &'e Expr, u8)>> {
        match &e.kind {
            ExprKind::BoolOp(..) => {
                let mut items = Vec::new();
                self.bool_items(e, &mut items);
                Some(
                    items
                        .into_iter()
                        .map(|(sym, x)| (sym, x, prec::NOT))
                        .collect(),
                )
            }
            ExprKind::Compare(first, rest) => {
                let mut items = vec![(None, &**first, prec::BOR)];
                items.extend(rest.iter().map(|(op, x)| (Some(op.symbol()), x, prec::BOR)));
                Some(items)
            }
            ExprKind::Binary(op, ..) if *op != BinOp::Pow => {
                let p = self.prec_of(e);
                let mut rest: Vec<(&'static str, &Expr)> = Vec::new();
                let mut cur = e;
                while let ExprKind::Binary(op, a, b) = &cur.kind {
                    if *op == BinOp::Pow || bin_prec(*op) != p {
                        break;
                    }
                    if !std::ptr::eq(cur, e) && !self.src.parens_around(cur.span).is_empty() {
                        break;
                    }
                    rest.push((op.symbol(), b));
                    cur = a;
                }
                rest.reverse();
                let mut items = vec![(None, cur, p)];
                items.extend(rest.into_iter().map(|(sym, x)| (Some(sym), x, p + 1)));
                Some(items)
            }
            _ => None,
        }
    }

    /// The operands of an `and`/`or` tree in order, with the operator before each: a
    /// nested `and`/`or` joins in unless it is parenthesized.
    fn bool_items<'e>(&self, e: &'e Expr, out: &mut Vec<(Option<&'static str>, &'e Expr)>) {
        let ExprKind::BoolOp(op, a, b) = &e.kind else {
            return;
        };
        let p = self.prec_of(e);
        let joins = |x: &Expr, right: bool| {
            matches!(x.kind, ExprKind::BoolOp(..))
                && self.src.parens_around(x.span).is_empty()
                && if right {
                    self.prec_of(x) > p
                } else {
                    self.prec_of(x) >= p
                }
        };
        if joins(a, false) {
            self.bool_items(a, out);
        } else {
            out.push((None, a));
        }
        let word = if *op == BoolOp::And { "and" } else { "or" };
        if joins(b, true) {
            let at = out.len();
            self.bool_items(b, out);
            if let Some(first) = out.get_mut(at) {
                first.0 = Some(word);
            }
        } else {
            out.push((Some(word), b));
        }
    }

    /// The chain's operands and operators; with `breakable`, a line may break before
    /// each operator (inside brackets only), otherwise it never does.
    pub(crate) fn chain_parts(
        &mut self,
        items: Vec<(Option<&'static str>, &Expr, u8)>,
        breakable: bool,
    ) -> Doc {
        let mut parts = Vec::new();
        for (sym, x, min) in items {
            if let Some(sym) = sym {
                if breakable {
                    let (eol, own) = self.around_break(self.start_of(x));
                    parts.extend([eol, self.line_here(), own, s(sym), s(" ")]);
                } else {
                    parts.extend([s(" "), s(sym), s(" ")]);
                }
            }
            parts.push(self.expr_at(x, min));
        }
        group(list(parts))
    }

    /// `a, b` without brackets, never broken: it stands where no line break may go.
    fn flat_tuple(&mut self, items: &[Expr]) -> Doc {
        let mut parts = Vec::new();
        for (i, x) in items.iter().enumerate() {
            if i > 0 {
                parts.push(s(", "));
            }
            parts.push(self.expr_at(x, prec::LAMBDA));
        }
        list(parts)
    }

    /// `[a, b]`, `{a, b}`, `(a, b)`: one item per line when broken.
    fn display(
        &mut self,
        items: &[Expr],
        open: &'static str,
        close: &'static str,
        span: Span,
        tuple: bool,
    ) -> Doc {
        let starts: Vec<u32> = items.iter().map(|x| self.start_of(x)).collect();
        let d = Delim {
            open,
            close,
            close_at: Span::new(span.end.saturating_sub(1).max(span.start), span.end),
            fill: Fill::OnePerLine,
            comma_single: tuple,
            trailing_comma: true,
        };
        self.delimited(d, &starts, |f, i| f.expr_at(&items[i], prec::LAMBDA))
    }

    fn dict(&mut self, pairs: &[(Expr, Expr)], span: Span) -> Doc {
        let starts: Vec<u32> = pairs.iter().map(|(k, _)| self.start_of(k)).collect();
        let d = Delim {
            open: "{",
            close: "}",
            close_at: Span::new(span.end - 1, span.end),
            fill: Fill::OnePerLine,
            comma_single: false,
            trailing_comma: true,
        };
        self.delimited(d, &starts, |f, i| {
            let (k, v) = &pairs[i];
            let k = f.expr_at(k, prec::LAMBDA);
            let v = f.expr_at(v, prec::LAMBDA);
            list(vec![k, s(": "), v])
        })
    }

    pub(crate) fn call_args(&mut self, open: Span, close: Span, args: &[Arg]) -> Doc {
        let _ = open;
        let starts: Vec<u32> = args.iter().map(|a| a.span.start).collect();
        let sole = args.len() == 1;
        let d = Delim {
            open: "(",
            close: ")",
            close_at: close,
            fill: Fill::Hug,
            comma_single: false,
            trailing_comma: true,
        };
        self.delimited(d, &starts, |f, i| f.arg(&args[i], sole))
    }

    fn arg(&mut self, a: &Arg, sole: bool) -> Doc {
        match &a.kind {
            ArgKind::Positional(x) => self.expr_with(x, prec::LAMBDA, sole),
            ArgKind::Keyword(k, v) => list(vec![
                text(k.name.as_str()),
                s("="),
                self.expr_at(v, prec::LAMBDA),
            ]),
            ArgKind::Star(x) => list(vec![s("*"), self.expr_at(x, prec::LAMBDA)]),
            ArgKind::DoubleStar(x) => list(vec![s("**"), self.expr_at(x, prec::LAMBDA)]),
        }
    }

    pub(crate) fn subscript(&mut self, idx: &Expr, close: Span) -> Doc {
        let bare_tuple = matches!(&idx.kind, ExprKind::Tuple(xs) if !xs.is_empty())
            && !self.src.self_bracketed(idx.span)
            && self.src.parens_around(idx.span).is_empty();
        let d = Delim {
            open: "[",
            close: "]",
            close_at: close,
            fill: Fill::Hug,
            comma_single: bare_tuple,
            trailing_comma: false,
        };
        match &idx.kind {
            ExprKind::Tuple(items) if bare_tuple => {
                let starts: Vec<u32> = items.iter().map(|x| self.start_of(x)).collect();
                self.delimited(d, &starts, |f, i| f.expr_at(&items[i], prec::LAMBDA))
            }
            _ => {
                let start = self.start_of(idx);
                self.delimited(d, &[start], |f, _| f.expr_at(idx, prec::LAMBDA))
            }
        }
    }

    /// `[lo:hi:step]`, with spaces around the colons when a part is not simple (PEP 8).
    pub(crate) fn slice(
        &mut self,
        lo: Option<&Expr>,
        hi: Option<&Expr>,
        step: Option<&Expr>,
        span: Span,
    ) -> Doc {
        let saved = std::mem::replace(&mut self.no_breaks, false);
        let doc = self.slice_parts(lo, hi, step, span);
        self.no_breaks = saved;
        doc
    }

    fn slice_parts(
        &mut self,
        lo: Option<&Expr>,
        hi: Option<&Expr>,
        step: Option<&Expr>,
        span: Span,
    ) -> Doc {
        let parts = [lo, hi, step];
        let complex = parts.iter().flatten().any(|x| !self.simple_slice_part(x));
        let mut out = vec![s("[")];
        let count = if step.is_some() { 3 } else { 2 };
        for (i, part) in parts.iter().take(count).enumerate() {
            if i > 0 {
                let before = complex && parts[i - 1].is_some();
                let after = complex && part.is_some();
                out.push(s(match (before, after) {
                    (true, true) => " : ",
                    (true, false) => " :",
                    (false, true) => ": ",
                    (false, false) => ":",
                }));
            }
            if let Some(x) = part {
                out.push(self.expr_at(x, prec::LAMBDA));
            }
        }
        out.push(self.dangling(span.end.saturating_sub(1)));
        out.push(s("]"));
        list(out)
    }

    fn simple_slice_part(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bytes(_)
            | ExprKind::Bool(_)
            | ExprKind::None => true,
            ExprKind::Unary(UnaryOp::Neg | UnaryOp::Pos, x) => self.simple_slice_part(x),
            ExprKind::Attr(v, _) => self.simple_slice_part(v),
            _ => false,
        }
    }

    fn lambda(&mut self, params: &[Param], body: &Expr) -> Doc {
        let mut parts = vec![s("lambda")];
        for (i, p) in params.iter().enumerate() {
            parts.push(s(if i == 0 { " " } else { ", " }));
            if p.star {
                parts.push(s("*"));
            }
            parts.push(text(p.name.name.as_str()));
            if let Some(d) = &p.default {
                parts.push(s("="));
                parts.push(self.expr_at(d, prec::LAMBDA));
            }
        }
        parts.push(s(": "));
        parts.push(self.expr_at(body, prec::LAMBDA));
        list(parts)
    }

    fn comprehension(
        &mut self,
        e: &Expr,
        kind: CompKind,
        elt: &Expr,
        value: Option<&Expr>,
        clauses: &[CompClause],
        force_brackets: bool,
    ) -> Doc {
        let (open, close) = match kind {
            CompKind::List => ("[", "]"),
            CompKind::Set | CompKind::Dict => ("{", "}"),
            CompKind::Generator => ("(", ")"),
        };
        let bracketed =
            force_brackets || kind != CompKind::Generator || self.src.self_bracketed(e.span);
        let saved = self.no_breaks;
        self.no_breaks &= !bracketed;
        let doc = self.comprehension_parts(e, (open, close), bracketed, elt, value, clauses);
        self.no_breaks = saved;
        doc
    }

    fn comprehension_parts(
        &mut self,
        e: &Expr,
        (open, close): (&'static str, &'static str),
        bracketed: bool,
        elt: &Expr,
        value: Option<&Expr>,
        clauses: &[CompClause],
    ) -> Doc {
        let (lead_eol, lead_own) = self.around_break(self.start_of(elt));
        let mut inner = vec![lead_own, self.expr_at(elt, prec::LAMBDA)];
        if let Some(v) = value {
            inner.push(s(": "));
            inner.push(self.expr_at(v, prec::LAMBDA));
        }
        let mut prev_end = value.map_or(elt.span.end, |v| v.span.end);
        for c in clauses {
            let for_at = self
                .src
                .find(prev_end, c.target.span.start, |t| *t == Tok::For)
                .map_or(c.target.span.start, |sp| sp.start);
            let (eol, own) = self.around_break(for_at);
            inner.extend([eol, self.line_here(), own, s("for ")]);
            inner.push(self.expr_at(&c.target, prec::TUPLE));
            inner.push(s(" in "));
            inner.push(self.expr_at(&c.iter, prec::OR));
            prev_end = c.iter.span.end;
            for cond in &c.conds {
                let if_at = self
                    .src
                    .find(prev_end, cond.span.start, |t| *t == Tok::If)
                    .map_or(cond.span.start, |sp| sp.start);
                let (eol, own) = self.around_break(if_at);
                inner.extend([eol, self.line_here(), own, s("if ")]);
                inner.push(self.expr_at(cond, prec::OR));
                prev_end = cond.span.end;
            }
        }
        if !bracketed {
            let mut v = vec![lead_eol];
            v.extend(inner);
            return group(list(v));
        }
        let own = open != "(" || self.src.self_bracketed(e.span);
        let dangling = self.dangling(if own { e.span.end - 1 } else { e.span.end });
        let body = list(vec![lead_eol, softline(), group(list(inner)), dangling]);
        group(list(vec![s(open), indent(body), softline(), s(close)]))
    }
}
