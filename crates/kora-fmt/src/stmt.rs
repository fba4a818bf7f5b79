//! Statements: simple ones on one line, compound ones as a header and an indented
//! body, and the values of statements, which break inside parentheses added for
//! the purpose when they do not fit (and only then).

use kora_syntax::ast::{
    BinOp, ElseClause, Expr, ExprKind, FieldDecl, FuncDef, FuncKind, Handler, MatchArm, Module,
    ParallelMode, Param, RecordDecl, Stmt, StmtKind, UnaryOp, UseTarget,
};
use kora_syntax::span::Span;
use kora_syntax::token::Tok;

use crate::block::{stmt_entries, Entry, EntryKind};
use crate::brackets::{Delim, Fill};
use crate::doc::{group_with, hardline, if_break, indent, line, list, nil, s, softline, text, Doc};
use crate::expr::{prec, Shape};
use crate::formatter::Fmt;

impl Fmt<'_> {
    pub(crate) fn module(&mut self, m: &Module) -> Doc {
        let entries = stmt_entries(&m.stmts);
        let end = self.src.text.len() as u32;
        self.block(&entries, true, end)
    }

    /// A value standing alone in a statement (`x = ...`, `return ...`, `if ...:`):
    /// parentheses around it are dropped, and added back only to break inside them.
    pub(crate) fn stmt_value(&mut self, e: &Expr) -> Doc {
        self.value(e, true)
    }

    fn value(&mut self, e: &Expr, best_fit: bool) -> Doc {
        let mut lead = nil();
        if let Some(&(open, close)) = self.src.parens_around(e.span).last() {
            if self.comment_within(open.start, e.span.start)
                || self.comment_within(e.span.end, close.start)
            {
                return self.expr_at(e, prec::TUPLE);
            }
            lead = self.leading(open.start);
        }
        let body = match self.shape(e) {
            Shape::Atom => {
                let inner = list(vec![self.leading(e.span.start), self.expr_body(e)]);
                if best_fit {
                    Doc::BestFitParens(Box::new(inner))
                } else {
                    inner
                }
            }
            Shape::Bracketed => list(vec![self.leading(e.span.start), self.expr_body(e)]),
            Shape::BareTuple => match &e.kind {
                ExprKind::Tuple(items) if items.len() > 1 => {
                    self.breaks(true, |f| f.bare_list(items))
                }
                _ => self.expr_body(e),
            },
            Shape::Other => {
                let lead = self.leading(e.span.start);
                match self.split_in_operand(e) {
                    Some(doc) => list(vec![lead, doc]),
                    None => {
                        let body = self.breaks(true, |f| f.expr_body(e));
                        optional_parens(list(vec![lead, body]))
                    }
                }
            }
        };
        list(vec![lead, body])
    }

    /// `a + f(x)`, `(a + b) % n`, `not f(x)`: one operator, with brackets first or last,
    /// breaks inside those brackets rather than in parentheses added around it all
    /// (ruff's rule, after Black's "omit optional parentheses").
    fn split_in_operand(&mut self, e: &Expr) -> Option<Doc> {
        if self.comment_within(e.span.start, e.span.end) {
            return None;
        }
        if let ExprKind::Unary(op, x) = &e.kind {
            if !self.has_own_brackets(x) || matches!(x.kind, ExprKind::Binary(BinOp::Pow, ..)) {
                return None;
            }
            let sign = match op {
                UnaryOp::Not => "not ",
                UnaryOp::Neg => "-",
                UnaryOp::Pos => "+",
                UnaryOp::Invert => "~",
            };
            let min = if *op == UnaryOp::Not {
                prec::NOT
            } else {
                prec::UNARY
            };
            return Some(list(vec![s(sign), self.expr_at(x, min)]));
        }
        let items = self.chain_items(e)?;
        let (first, last) = (items.first()?.1, items.last()?.1);
        if items.len() != 2 || !(self.has_own_brackets(first) || self.has_own_brackets(last)) {
            return None;
        }
        Some(self.chain_parts(items, false))
    }

    /// Whether `e` ends or starts in non-empty brackets a line may break inside (a
    /// subscript does not count: breaking one looks odd).
    fn has_own_brackets(&self, e: &Expr) -> bool {
        if !self.src.parens_around(e.span).is_empty() {
            return true;
        }
        match &e.kind {
            ExprKind::Call { args, .. }
            | ExprKind::Analyze { args, .. }
            | ExprKind::AskHuman(args) => !args.is_empty(),
            ExprKind::Classified(_) | ExprKind::Comp { .. } => true,
            ExprKind::List(xs) | ExprKind::Set(xs) => !xs.is_empty(),
            ExprKind::Dict(kv) => !kv.is_empty(),
            ExprKind::Tuple(xs) => !xs.is_empty() && self.src.self_bracketed(e.span),
            _ => false,
        }
    }

    /// `a, b` on one line: each item may only break inside its own brackets.
    fn flat_list(&mut self, items: &[Expr]) -> Doc {
        let mut parts = Vec::new();
        for (i, x) in items.iter().enumerate() {
            if i > 0 {
                parts.push(s(", "));
            }
            parts.push(self.expr_at(x, prec::LAMBDA));
        }
        list(parts)
    }

    /// `a, b` where a statement allows it: in parentheses, one per line, when it breaks.
    fn bare_list(&mut self, items: &[Expr]) -> Doc {
        let mut parts = Vec::new();
        for (i, x) in items.iter().enumerate() {
            let start = self.start_of(x);
            let (eol, own) = self.around_break(start);
            if i > 0 {
                parts.push(s(","));
                parts.push(eol);
                parts.push(line());
            } else {
                parts.push(eol);
                parts.push(softline());
            }
            parts.push(own);
            parts.push(self.expr_at(x, prec::LAMBDA));
        }
        parts.push(if_break(s(","), nil(), None));
        group_with(
            list(vec![
                if_break(s("("), nil(), None),
                indent(list(parts)),
                softline(),
                if_break(s(")"), nil(), None),
            ]),
            None,
            false,
        )
    }

    /// `header: [after]` and the indented body; `limit` is where the code after it starts.
    pub(crate) fn suite(&mut self, header: Doc, after: Doc, body: &[Stmt], limit: u32) -> Doc {
        let first = body.first().map_or(limit, |s| s.span.start);
        let trailing = self.trailing(first);
        let entries = stmt_entries(body);
        let inner = self.block(&entries, false, limit);
        list(vec![header, s(":"), after, trailing, indent(inner)])
    }

    pub(crate) fn stmt(&mut self, st: &Stmt, limit: u32) -> Doc {
        match &st.kind {
            StmtKind::Expr { expr, handlers } => {
                let head = self.value(expr, false);
                self.with_tail(head, handlers, None, limit)
            }
            StmtKind::Assign {
                targets,
                value,
                handlers,
            } => {
                let mut parts = Vec::new();
                for t in targets {
                    parts.push(self.expr_at(t, prec::TUPLE));
                    parts.push(s(" = "));
                }
                parts.push(self.stmt_value(value));
                self.with_tail(list(parts), handlers, None, limit)
            }
            StmtKind::AnnAssign {
                target,
                ty,
                value,
                handlers,
                else_,
            } => {
                let mut parts = vec![text(target.name.as_str()), s(": "), self.ty(ty)];
                if let Some(v) = value {
                    parts.push(s(" = "));
                    // `(a if c else b) else:` reads wrongly without its parentheses.
                    if else_.is_some() && self.prec_of(v) < prec::OR {
                        parts.push(self.expr_at(v, prec::OR));
                    } else {
                        parts.push(self.stmt_value(v));
                    }
                }
                self.with_tail(list(parts), handlers, else_.as_ref(), limit)
            }
            StmtKind::AugAssign { target, op, value } => {
                let t = self.expr_at(target, prec::TUPLE);
                let v = self.stmt_value(value);
                list(vec![t, text(format!(" {}= ", op.symbol())), v])
            }
            StmtKind::If { branches, orelse } => self.if_stmt(branches, orelse.as_deref(), limit),
            StmtKind::While { cond, body } => {
                let header = list(vec![s("while "), self.stmt_value(cond)]);
                self.suite(header, nil(), body, limit)
            }
            StmtKind::For {
                target,
                iter,
                body,
                parallel,
                into,
            } => {
                let mut h = Vec::new();
                if let Some(into) = into {
                    h.push(self.expr_at(&into.target, prec::TUPLE));
                    if let Some(t) = &into.ty {
                        h.push(s(": "));
                        h.push(self.ty(t));
                    }
                    h.push(s(" = "));
                }
                if parallel.is_some() {
                    h.push(s("parallel "));
                }
                h.push(s("for "));
                h.push(self.expr_at(target, prec::TUPLE));
                h.push(s(" in "));
                h.push(self.stmt_value(iter));
                if *parallel == Some(ParallelMode::First) {
                    h.push(s(" first"));
                }
                self.suite(list(h), nil(), body, limit)
            }
            StmtKind::Break(v) => self.keyword_value("break", v.as_ref()),
            StmtKind::Return(v) => self.keyword_value("return", v.as_ref()),
            StmtKind::Continue => s("continue"),
            StmtKind::Pass => s("pass"),
            StmtKind::Def(fd) => self.def(fd, limit),
            StmtKind::Record(r) => self.record(r, st.span, limit),
            StmtKind::TypeAlias { name, ty } => list(vec![
                s("type "),
                text(name.name.as_str()),
                s(" = "),
                self.ty(ty),
            ]),
            StmtKind::Match { subject, arms } => {
                let header = list(vec![s("match "), self.stmt_value(subject)]);
                let first = arms.first().map_or(limit, |a| a.span.start);
                let trailing = self.trailing(first);
                let entries: Vec<Entry<'_>> = arms
                    .iter()
                    .map(|a| Entry {
                        span: a.span,
                        kind: EntryKind::Arm(a),
                    })
                    .collect();
                let inner = self.block(&entries, false, limit);
                list(vec![header, s(":"), trailing, indent(inner)])
            }
            StmtKind::Use(u) => {
                let mut parts = vec![s("use ")];
                match &u.target {
                    UseTarget::Std(n) => parts.push(text(n.name.as_str())),
                    UseTarget::File { span, .. } => parts.push(self.string(*span)),
                    UseTarget::Provider { kind, name } => {
                        parts.push(text(format!("{} {}", kind.name, name.name)))
                    }
                }
                if let Some(a) = &u.alias {
                    parts.push(text(format!(" as {}", a.name)));
                }
                list(parts)
            }
            StmtKind::Nonlocal(names) | StmtKind::Global(names) => {
                let kw = if matches!(st.kind, StmtKind::Nonlocal(_)) {
                    "nonlocal "
                } else {
                    "global "
                };
                let joined: Vec<&str> = names.iter().map(|n| n.name.as_str()).collect();
                text(format!("{kw}{}", joined.join(", ")))
            }
            StmtKind::Assert { cond, msg } => {
                let mut parts = vec![s("assert "), self.stmt_value(cond)];
                if let Some(m) = msg {
                    parts.push(s(", "));
                    parts.push(self.stmt_value(m));
                }
                list(parts)
            }
            StmtKind::Del(targets) => {
                // Not in parentheses: `del (a, b)` deletes a tuple, not two targets.
                let body = match targets.as_slice() {
                    [one] => self.stmt_value(one),
                    many => self.flat_list(many),
                };
                list(vec![s("del "), body])
            }
            StmtKind::Budget { args, body } => {
                let a = self.block_args(st.span, args);
                self.suite(list(vec![s("budget"), a]), nil(), body, limit)
            }
            StmtKind::Context { args, body } => {
                let a = self.block_args(st.span, args);
                self.suite(list(vec![s("with context"), a]), nil(), body, limit)
            }
            StmtKind::ModelBlock { args, body } => {
                let a = self.block_args(st.span, args);
                self.suite(list(vec![s("with model"), a]), nil(), body, limit)
            }
            StmtKind::Mock {
                target,
                value,
                body,
            } => {
                let header = list(vec![
                    text(format!("with mock {} -> ", target.name)),
                    self.stmt_value(value),
                ]);
                self.suite(header, nil(), body, limit)
            }
            StmtKind::Declassify { value, sink, body } => {
                let header = list(vec![
                    s("declassify "),
                    self.stmt_value(value),
                    text(format!(" for {}", sink.name)),
                ]);
                self.suite(header, nil(), body, limit)
            }
            StmtKind::Test { body, .. } => {
                let name_at = self
                    .src
                    .find(st.span.start, st.span.end, |t| matches!(t, Tok::Str(_)))
                    .unwrap_or(Span::new(st.span.start, st.span.start));
                let header = list(vec![s("test "), self.string(name_at)]);
                self.suite(header, nil(), body, limit)
            }
            StmtKind::PythonImport { .. } | StmtKind::Error => {
                self.consume_within(st.span.end);
                text(self.src.slice(st.span))
            }
        }
    }

    fn keyword_value(&mut self, kw: &'static str, v: Option<&Expr>) -> Doc {
        match v {
            Some(v) => list(vec![s(kw), s(" "), self.stmt_value(v)]),
            None => s(kw),
        }
    }

    /// The `(...)` of `budget(...)`, `with context(...)`, `with model(...)`.
    fn block_args(&mut self, span: Span, args: &[kora_syntax::ast::Arg]) -> Doc {
        let open = self.paren_after(span.start);
        let close = self.closer(open);
        self.call_args(open, close, args)
    }

    /// `else (why, kind):` and `on event(params):` blocks after a statement.
    fn with_tail(
        &mut self,
        head: Doc,
        handlers: &[Handler],
        else_: Option<&ElseClause>,
        limit: u32,
    ) -> Doc {
        let mut parts = vec![head];
        if let Some(e) = else_ {
            let else_limit = handlers.first().map_or(limit, |h| h.span.start);
            let header = match &e.binds {
                Some((a, b)) => text(format!(" else ({}, {})", a.name, b.name)),
                None => s(" else"),
            };
            parts.push(self.suite(header, nil(), &e.body, else_limit));
        }
        if !handlers.is_empty() {
            let entries: Vec<Entry<'_>> = handlers
                .iter()
                .map(|h| Entry {
                    span: h.span,
                    kind: EntryKind::Handler(h),
                })
                .collect();
            parts.push(indent(self.block(&entries, false, limit)));
        }
        list(parts)
    }

    pub(crate) fn handler(&mut self, h: &Handler, limit: u32) -> Doc {
        let mut header = format!("on {}", h.event.name);
        if !h.params.is_empty() {
            let names: Vec<&str> = h.params.iter().map(|p| p.name.as_str()).collect();
            header.push_str(&format!("({})", names.join(", ")));
        }
        self.suite(text(header), nil(), &h.body, limit)
    }

    fn if_stmt(
        &mut self,
        branches: &[(Expr, Vec<Stmt>)],
        orelse: Option<&[Stmt]>,
        limit: u32,
    ) -> Doc {
        let mut parts = Vec::new();
        for (i, (cond, body)) in branches.iter().enumerate() {
            let body_end = body.last().map_or(cond.span.end, |b| b.span.end);
            let next_kw = match branches.get(i + 1) {
                Some((c, _)) => self
                    .src
                    .find(body_end, c.span.start, |t| *t == Tok::Elif)
                    .map(|sp| sp.start),
                None => orelse.and_then(|o| {
                    let to = o.first().map_or(limit, |b| b.span.start);
                    self.src
                        .find(body_end, to, |t| *t == Tok::Else)
                        .map(|sp| sp.start)
                }),
            };
            let body_limit = next_kw.unwrap_or(limit);
            let kw = if i == 0 { "if " } else { "elif " };
            let header = list(vec![s(kw), self.stmt_value(cond)]);
            parts.push(self.suite(header, nil(), body, body_limit));
            if let Some(k) = next_kw {
                parts.push(hardline());
                parts.push(self.clause_comments(k));
            }
        }
        if let Some(o) = orelse {
            parts.push(self.suite(s("else"), nil(), o, limit));
        }
        list(parts)
    }

    fn def(&mut self, fd: &FuncDef, limit: u32) -> Doc {
        let kw = match fd.kind {
            FuncKind::Def => "def ",
            FuncKind::Tool => "tool ",
            FuncKind::Agent => "agent ",
        };
        let open = self.paren_after(fd.name.span.end);
        let close = self.closer(open);
        let starts: Vec<u32> = fd.params.iter().map(|p| p.span.start).collect();
        let d = Delim {
            open: "(",
            close: ")",
            close_at: close,
            fill: Fill::Hug,
            comma_single: false,
            trailing_comma: true,
        };
        let params = self.delimited(d, &starts, |f, i| f.param(&fd.params[i]));
        let mut header = vec![s(kw), text(fd.name.name.as_str()), params];
        if let Some(r) = &fd.ret {
            header.push(s(" -> "));
            header.push(self.ty(r));
        }
        let mut after = Vec::new();
        if fd.isolated {
            after.push(s(" isolated"));
        }
        if let Some(m) = &fd.model {
            after.push(s(" model("));
            after.push(self.expr_at(m, prec::LAMBDA));
            after.push(s(")"));
        }
        self.suite(list(header), list(after), &fd.body, limit)
    }

    fn param(&mut self, p: &Param) -> Doc {
        let mut parts = Vec::new();
        if p.star {
            parts.push(s("*"));
        }
        parts.push(text(p.name.name.as_str()));
        if let Some(t) = &p.ty {
            parts.push(s(": "));
            parts.push(self.ty(t));
        }
        if let Some(d) = &p.default {
            parts.push(s(if p.ty.is_some() { " = " } else { "=" }));
            parts.push(self.expr_at(d, prec::LAMBDA));
        }
        list(parts)
    }

    fn record(&mut self, r: &RecordDecl, span: Span, limit: u32) -> Doc {
        let colon = self
            .src
            .find(r.name.span.end, span.end, |t| *t == Tok::Colon)
            .map_or(r.name.span.end, |sp| sp.end);
        let mut entries: Vec<Entry<'_>> = r
            .fields
            .iter()
            .map(|f| Entry {
                span: f.span,
                kind: EntryKind::Field(f),
            })
            .collect();
        for (tok, sp) in self.src.tokens_in(Span::new(colon, span.end)) {
            let loose = matches!(tok, Tok::Str(_) | Tok::Pass)
                && !r
                    .fields
                    .iter()
                    .any(|f| f.span.start <= sp.start && sp.end <= f.span.end);
            if loose {
                entries.push(Entry {
                    span: *sp,
                    kind: EntryKind::Raw,
                });
            }
        }
        entries.sort_by_key(|e| e.span.start);
        let first = entries.first().map_or(limit, |e| e.span.start);
        let trailing = self.trailing(first);
        let inner = self.block(&entries, false, limit);
        list(vec![
            text(format!("type {}", r.name.name)),
            s(":"),
            trailing,
            indent(inner),
        ])
    }

    pub(crate) fn field(&mut self, f: &FieldDecl) -> Doc {
        let mut parts = vec![text(f.name.name.as_str()), s(": "), self.ty(&f.ty)];
        if let Some(d) = &f.default {
            parts.push(s(" = "));
            parts.push(self.stmt_value(d));
        }
        list(parts)
    }

    pub(crate) fn arm(&mut self, arm: &MatchArm, limit: u32) -> Doc {
        let mut header = vec![s("case "), self.pattern(&arm.pattern, true)];
        if let Some(g) = &arm.guard {
            header.push(s(" if "));
            header.push(self.stmt_value(g));
        }
        self.suite(list(header), nil(), &arm.body, limit)
    }
}

/// The parentheses a statement's value gets only when it must break.
fn optional_parens(inner: Doc) -> Doc {
    group_with(
        list(vec![
            if_break(s("("), nil(), None),
            indent(list(vec![softline(), inner])),
            softline(),
            if_break(s(")"), nil(), None),
        ]),
        None,
        false,
    )
}
