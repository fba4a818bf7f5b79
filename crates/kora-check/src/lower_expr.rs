//! Lowering expressions: name resolution to slots, calls checked against signatures, inferred types.

use kora_syntax::ast::{self, ArgKind, BinOp, ExprKind as AE};
use kora_syntax::{Diagnostic, Span};

use crate::codes;
use crate::hir::{self, builtin_id, CompKind, ExprKind as H};
use crate::lower::Lowerer;
use crate::lower_call::join;
use crate::scope::collect_target_names;
use crate::suggest;
use crate::types::Ty;

pub(crate) type Lowered = (hir::Expr, Ty);

pub(crate) fn ex(kind: H, span: Span) -> hir::Expr {
    hir::Expr { kind, span }
}

impl Lowerer<'_> {
    pub fn expr(&mut self, e: &ast::Expr) -> Lowered {
        let lowered = self.expr_kind(e);
        if self.facts.is_some() {
            let at = self.fact_scope();
            if let Some(f) = self.facts.as_mut() {
                f.expr(e, &lowered.0, &lowered.1, at);
            }
        }
        lowered
    }

    fn expr_kind(&mut self, e: &ast::Expr) -> Lowered {
        let lowered = self.expr_plain(e);
        match (&e.kind, crate::literal_labels::get()) {
            (
                AE::Int(_) | AE::Float(_) | AE::Bool(_) | AE::None | AE::Str(_) | AE::Bytes(_),
                Some(label),
            ) => {
                let (v, ty) = lowered;
                let at = self.place(e.span);
                let kind = match label {
                    crate::literal_labels::LiteralLabel::Unverified => {
                        H::Unverified(Box::new(v), format!("the literal at {at}"))
                    }
                    crate::literal_labels::LiteralLabel::Classified => {
                        H::Classified(Box::new(v), format!("the literal at {at}"))
                    }
                };
                (ex(kind, e.span), ty)
            }
            _ => lowered,
        }
    }

    fn expr_plain(&mut self, e: &ast::Expr) -> Lowered {
        let span = e.span;
        let (kind, ty) = match &e.kind {
            AE::Int(i) => (H::Int(*i), Ty::Int),
            AE::BigInt(digits) => (H::BigInt(digits.as_str().into()), Ty::Int),
            AE::Float(f) => (H::Float(*f), Ty::Float),
            AE::Bool(b) => (H::Bool(*b), Ty::Bool),
            AE::None => (H::None, Ty::None),
            AE::Str(s) => (H::Str(self.ctx.string(s)), Ty::Str),
            AE::Bytes(b) => (
                H::Bytes(b.as_slice().into()),
                Ty::Std(crate::std_api::StdType::Bytes),
            ),
            AE::FString(parts) => (H::FString(self.fparts(parts)), Ty::Str),
            AE::Name(n) => return self.load_name(n, span),
            AE::List(xs) => {
                let (k, t) = self.display(xs, true, span);
                (k, Ty::List(Box::new(t)))
            }
            AE::Tuple(xs) => {
                if xs.iter().any(|x| matches!(x.kind, AE::Starred(_))) {
                    let items = xs.iter().map(|x| self.star_item(x)).collect();
                    (H::TupleStar(items), Ty::TupleOf(Box::new(Ty::Any)))
                } else {
                    let mut items = Vec::new();
                    let mut tys = Vec::new();
                    for x in xs {
                        let (e, t) = self.expr(x);
                        items.push(e);
                        tys.push(t);
                    }
                    (H::Tuple(items), Ty::Tuple(tys))
                }
            }
            AE::Set(xs) => {
                let mut items = Vec::new();
                let mut ty = None;
                for x in xs {
                    let (e, t) = self.expr(x);
                    ty = Some(join(ty, t));
                    items.push(e);
                }
                (H::Set(items), Ty::Set(Box::new(ty.unwrap_or(Ty::Any))))
            }
            AE::Dict(kvs) => {
                let mut items = Vec::new();
                let (mut kt, mut vt) = (None, None);
                for (k, v) in kvs {
                    let (ke, kty) = self.expr(k);
                    let (ve, vty) = self.expr(v);
                    kt = Some(join(kt, kty));
                    vt = Some(join(vt, vty));
                    items.push((ke, ve));
                }
                (
                    H::Dict(items),
                    Ty::Dict(
                        Box::new(kt.unwrap_or(Ty::Any)),
                        Box::new(vt.unwrap_or(Ty::Any)),
                    ),
                )
            }
            AE::Comp {
                kind,
                elt,
                value,
                clauses,
            } => return self.comprehension(*kind, elt, value.as_deref(), clauses, span),
            AE::Unary(op, x) => {
                let (xe, xt) = if *op == ast::UnaryOp::Not {
                    self.condition(x)
                } else {
                    self.expr(x)
                };
                let ty = match op {
                    ast::UnaryOp::Not => Ty::Bool,
                    ast::UnaryOp::Invert => Ty::Int,
                    _ => match xt {
                        Ty::Bool => Ty::Int,
                        t if t.is_numeric() => t,
                        _ => Ty::Any,
                    },
                };
                (H::Unary(*op, Box::new(xe)), ty)
            }
            AE::Binary(op, a, b) => {
                let (ae, at) = self.expr(a);
                let (be, bt) = self.expr(b);
                let ty = self.check_binop(*op, &at, &bt, span);
                (H::Binary(*op, Box::new(ae), Box::new(be)), ty)
            }
            AE::BoolOp(op, a, b) => return self.bool_op(*op, a, b, span),
            AE::Compare(first, rest) => {
                let (fe, _) = self.expr(first);
                let rest = rest.iter().map(|(op, x)| (*op, self.expr(x).0)).collect();
                (H::Compare(Box::new(fe), rest), Ty::Bool)
            }
            AE::Call { func, args } => return self.call(func, args, span),
            AE::Attr(obj, name) => return self.attr(obj, name, span),
            AE::Index(o, i) => {
                let (oe, ot) = self.expr(o);
                let (ie, _) = self.expr(i);
                let ty = match &ot {
                    Ty::List(t) => (**t).clone(),
                    Ty::Dict(_, v) => (**v).clone(),
                    Ty::Str | Ty::Literal(_) => Ty::Str,
                    Ty::Tuple(ts) => match &i.kind {
                        AE::Int(n) if (*n as usize) < ts.len() && *n >= 0 => {
                            ts[*n as usize].clone()
                        }
                        _ => Ty::Any,
                    },
                    Ty::TupleOf(t) => (**t).clone(),
                    _ => Ty::Any,
                };
                (H::Index(Box::new(oe), Box::new(ie)), ty)
            }
            AE::Slice {
                value,
                lo,
                hi,
                step,
            } => {
                let (ve, vt) = self.expr(value);
                let mut part =
                    |p: &Option<Box<ast::Expr>>| p.as_ref().map(|x| Box::new(self.expr(x).0));
                let (l, h, s) = (part(lo), part(hi), part(step));
                let ty = match vt {
                    Ty::List(_) | Ty::Str | Ty::TupleOf(_) => vt,
                    Ty::Literal(_) => Ty::Str,
                    _ => Ty::Any,
                };
                (H::Slice(Box::new(ve), l, h, s), ty)
            }
            AE::Lambda { params, body } => {
                let name = "<lambda>".to_string();
                let f = self.lower_function(
                    span,
                    &name,
                    ast::FuncKind::Def,
                    params,
                    Ty::Any,
                    None,
                    false,
                    |l| {
                        let (b, _) = l.expr(body);
                        let bspan = b.span;
                        vec![hir::Stmt {
                            kind: hir::StmtKind::Return(Some(b)),
                            span: bspan,
                        }]
                    },
                );
                (H::Lambda(f), Ty::Func)
            }
            AE::IfExp { cond, then, orelse } => {
                let (c, _) = self.condition(cond);
                let (t, tt) = self.expr(then);
                let (o, ot) = self.expr(orelse);
                let ty = if tt == ot { tt } else { Ty::Any };
                (H::IfExp(Box::new(c), Box::new(t), Box::new(o)), ty)
            }
            AE::Analyze { args, stream } => return self.analyze(args, *stream, span),
            AE::AskHuman(args) => return self.ask_human(args, span),
            AE::Classified(x) => {
                let (v, ty) = self.expr(x);
                let origin = format!("`classified(...)` at {}", self.place(span));
                (H::Classified(Box::new(v), origin), ty)
            }
            AE::Starred(x) => {
                self.expr(x);
                self.err(
                    Diagnostic::error(codes::BAD_TARGET, "`*` is not allowed here", span)
                        .with_label("a starred expression")
                        .with_help("`*xs` unpacks into a call's arguments or a list/tuple display"),
                );
                (H::None, Ty::Any)
            }
            AE::Error => (H::None, Ty::Any),
        };
        (ex(kind, span), ty)
    }

    pub(crate) fn not_yet_expr(&mut self, what: &str, span: Span) {
        self.err(
            Diagnostic::error(codes::NOT_YET, format!("{what} is not available yet"), span)
                .with_label("parsed, but this build cannot run it")
                .with_help("this part of Kora is being built; see the issue list in the README"),
        );
    }

    pub(crate) fn arg_expr(&mut self, a: &ast::Arg) -> Lowered {
        match &a.kind {
            ArgKind::Positional(e)
            | ArgKind::Keyword(_, e)
            | ArgKind::Star(e)
            | ArgKind::DoubleStar(e) => self.expr(e),
        }
    }

    pub(crate) fn star_item(&mut self, x: &ast::Expr) -> (bool, hir::Expr) {
        match &x.kind {
            AE::Starred(inner) => (true, self.expr(inner).0),
            _ => (false, self.expr(x).0),
        }
    }

    pub(crate) fn display(&mut self, xs: &[ast::Expr], list: bool, _span: Span) -> (H, Ty) {
        if xs.iter().any(|x| matches!(x.kind, AE::Starred(_))) {
            let items = xs.iter().map(|x| self.star_item(x)).collect();
            return (
                if list {
                    H::ListStar(items)
                } else {
                    H::TupleStar(items)
                },
                Ty::Any,
            );
        }
        let mut items = Vec::new();
        let mut ty = None;
        for x in xs {
            let (e, t) = self.expr(x);
            ty = Some(join(ty, t));
            items.push(e);
        }
        (H::List(items), ty.unwrap_or(Ty::Any))
    }

    pub fn load_name(&mut self, name: &str, span: Span) -> Lowered {
        if let Some(m) = self.std_alias(name) {
            self.std_not_a_value(m, span);
            return (ex(H::None, span), Ty::Any);
        }
        if let Some(x) = self.ext_alias(name) {
            self.external_not_a_value(x, span);
            return (ex(H::None, span), Ty::Any);
        }
        let f = self.fns.last().expect("in a function");
        for comp in f.comp.iter().rev() {
            if let Some(&s) = comp.get(name) {
                let kind = if f.is_cell[s as usize] {
                    H::Cell(s)
                } else {
                    H::Local(s)
                };
                return (ex(kind, span), f.slot_tys[s as usize].clone());
            }
        }
        if !f.is_module && !f.global_decl.contains(name) {
            if let Some(&s) = f.slots.get(name) {
                let kind = if f.is_cell[s as usize] {
                    H::Cell(s)
                } else {
                    H::Local(s)
                };
                let ty = match self.narrowed(crate::conditions::Place::Local(s)) {
                    Some(t) => t,
                    None => f.slot_tys[s as usize].clone(),
                };
                if let Some(b) = self.f().branch.as_mut() {
                    b.reads.insert(s);
                }
                return (ex(kind, span), ty);
            }
        }
        let info = self.info();
        if let Some(&g) = info.global_ix.get(name) {
            if let Some(&m) = info.mod_aliases.get(name) {
                return (ex(H::Module(m), span), Ty::Module);
            }
            let ty = info.global_tys[g as usize].clone();
            let ty = self
                .narrowed(crate::conditions::Place::Global(g))
                .unwrap_or(ty);
            return (ex(H::Global(g), span), ty);
        }
        if let Some(t) = self.ctx.type_of(self.m, name) {
            return (ex(H::Type(t), span), Ty::Func);
        }
        if let Some(b) = builtin_id(name) {
            return (ex(H::Builtin(b), span), Ty::Func);
        }
        if name == "__name__" {
            let i = self.ctx.string(&self.module_name);
            return (ex(H::Str(i), span), Ty::Str);
        }
        self.undefined(name, span);
        (ex(H::None, span), Ty::Any)
    }

    pub(crate) fn undefined(&mut self, name: &str, span: Span) {
        let f = self.fns.last().expect("in a function");
        let mut candidates: Vec<&str> = Vec::new();
        for c in &f.comp {
            candidates.extend(c.keys().map(String::as_str));
        }
        candidates.extend(f.slots.keys().map(String::as_str));
        candidates.extend(self.info().globals.iter().map(String::as_str));
        candidates.extend(
            self.ctx
                .type_ix
                .keys()
                .map(String::as_str)
                .filter(|k| !k.contains("::")),
        );
        candidates.extend(hir::BUILTINS.iter().copied());
        let mut d = Diagnostic::error(
            codes::UNDEFINED_NAME,
            format!("`{name}` is not defined"),
            span,
        )
        .with_label("not found in this scope");
        d = match suggest::closest(name, candidates) {
            Some(s) => d.with_help(format!("did you mean `{s}`?")),
            None => d.with_help("define it before this line, or check the spelling"),
        };
        self.err(d);
    }

    pub fn field_type(&mut self, obj: &Ty, name: &ast::Ident) -> Option<Ty> {
        let Ty::Record(tid, tname) = obj else {
            return None;
        };
        let rec = &self.ctx.types[tid.0 as usize];
        let field_names: Vec<String> = rec
            .fields
            .iter()
            .map(|f| self.ctx.names.name(f.name).to_string())
            .collect();
        if let Some(i) = field_names.iter().position(|f| *f == name.name) {
            return Some(rec.fields[i].ty.clone());
        }
        let mut d = Diagnostic::error(
            codes::UNKNOWN_FIELD,
            format!("`{tname}` has no field `{}`", name.name),
            name.span,
        )
        .with_label("unknown field");
        d = match suggest::closest(&name.name, field_names.iter().map(String::as_str)) {
            Some(s) => d.with_help(format!("did you mean `{s}`?")),
            None => d.with_help(format!("its fields are: {}", field_names.join(", "))),
        };
        self.err(d);
        Some(Ty::Any)
    }

    pub(crate) fn attr(&mut self, obj: &ast::Expr, name: &ast::Ident, span: Span) -> Lowered {
        if let AE::Name(n) = &obj.kind {
            if let Some(m) = self.std_alias(n) {
                return self.std_module_attr(m, name, span);
            }
            if let Some(x) = self.ext_alias(n) {
                if let Some(f) = self.facts.as_mut() {
                    f.externals.push((obj.span, x));
                }
                return self.external_attr(x, name, span);
            }
        }
        let (oe, ot) = self.expr(obj);
        if let Ty::Std(st) = ot {
            return self.std_property(st, oe, name, span);
        }
        if let H::Module(m) = oe.kind {
            return self.module_member(m, name, span);
        }
        let fty = self.field_type(&ot, name);
        let s = self.sym(&name.name);
        (ex(H::Attr(Box::new(oe), s), span), fty.unwrap_or(Ty::Any))
    }

    fn module_member_kind(&self, m: hir::ModId, name: &ast::Ident, span: Span) -> Option<Lowered> {
        let info = &self.ctx.mods[m.0 as usize];
        if let Some(&g) = info.global_ix.get(&name.name) {
            return Some((
                ex(H::ModuleGlobal(m, g), span),
                info.global_tys[g as usize].clone(),
            ));
        }
        // Exactly that module's record: `a.Config` is package a's, never the program's.
        let t = self.ctx.type_ix.get(&self.ctx.type_key(m, &name.name))?;
        Some((ex(H::Type(*t), span), Ty::Func))
    }

    pub(crate) fn module_member(
        &mut self,
        m: hir::ModId,
        name: &ast::Ident,
        span: Span,
    ) -> Lowered {
        let found = self.module_member_kind(m, name, span);
        if let (Some(lowered), Some(at)) = (&found, self.facts.is_some().then(|| self.fact_scope()))
        {
            if let Some(f) = self.facts.as_mut() {
                f.name(name.span, &lowered.0, &lowered.1, at);
            }
        }
        if let Some(lowered) = found {
            return lowered;
        }
        let info = &self.ctx.mods[m.0 as usize];
        let mut d = Diagnostic::error(
            codes::NO_MEMBER,
            format!("module `{}` has no `{}`", info.display, name.name),
            name.span,
        )
        .with_label("not defined at that file's top level");
        d = match suggest::closest(&name.name, info.globals.iter().map(String::as_str)) {
            Some(s) => d.with_help(format!("did you mean `{s}`?")),
            None => d.with_help(
                "everything defined at a file's top level can be used through its `use` name",
            ),
        };
        self.err(d);
        (ex(H::None, span), Ty::Any)
    }

    pub fn check_binop(&mut self, op: BinOp, a: &Ty, b: &Ty, span: Span) -> Ty {
        use Ty::*;
        let is_str = |t: &Ty| matches!(t, Str | Literal(_));
        if op == BinOp::Mod && is_str(a) {
            self.err(
                Diagnostic::error(
                    codes::PERCENT_FORMAT,
                    "Kora has no `%` formatting of strings",
                    span,
                )
                .with_label("Python's printf-style formatting")
                .with_help(
                    "write an f-string: `f\"{n:d} items\"` (the same specs: `{x:.2f}`, `{n:5d}`, `{s!r}`), or `\"{} items\".format(n)`",
                ),
            );
            return Str;
        }
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Mod | BinOp::FloorDiv | BinOp::Pow => {
                if a.is_numeric() && b.is_numeric() {
                    return if matches!(a, Float) || matches!(b, Float) {
                        Float
                    } else if op == BinOp::Pow {
                        Any
                    } else {
                        Int
                    };
                }
                if op == BinOp::Add && is_str(a) && is_str(b) {
                    return Str;
                }
                if op == BinOp::Add {
                    if let (List(x), List(y)) = (a, b) {
                        return if x == y {
                            a.clone()
                        } else {
                            List(Box::new(Any))
                        };
                    }
                }
                if op == BinOp::Mul
                    && ((is_str(a) && matches!(b, Int)) || (matches!(a, Int) && is_str(b)))
                {
                    return Str;
                }
                let provably_bad = matches!(op, BinOp::Add | BinOp::Sub)
                    && ((is_str(a) && b.is_numeric()) || (a.is_numeric() && is_str(b)));
                if provably_bad {
                    self.err(
                        Diagnostic::error(
                            codes::TYPE_MISMATCH,
                            format!("cannot apply `{}` to `{a}` and `{b}`", op.symbol()),
                            span,
                        )
                        .with_label("these operand types never combine")
                        .with_help(if is_str(a) || is_str(b) {
                            "convert with `str(x)`, or build the text with an f-string"
                        } else {
                            "convert one side so both have the same type"
                        }),
                    );
                }
                Any
            }
            BinOp::Div => {
                if a.is_numeric() && b.is_numeric() {
                    Float
                } else {
                    Any
                }
            }
            _ => {
                if matches!(a, Int | Bool) && matches!(b, Int | Bool) {
                    Int
                } else {
                    Any
                }
            }
        }
    }

    pub(crate) fn comprehension(
        &mut self,
        kind: ast::CompKind,
        elt: &ast::Expr,
        value: Option<&ast::Expr>,
        clauses: &[ast::CompClause],
        span: Span,
    ) -> Lowered {
        let mut hclauses = Vec::new();
        self.f().comp.push(Default::default());
        for c in clauses {
            let (it, ity) = self.expr(&c.iter);
            let mut names = Vec::new();
            collect_target_names(&c.target, &mut names);
            for n in names {
                let captured = self.captured_comp_name(&n);
                let slot = self.f().new_slot(&n, Ty::Any, captured);
                if captured {
                    self.f().extra_cells.push(slot);
                }
                if let Some(m) = self.f().comp.last_mut() {
                    m.insert(n, slot);
                }
            }
            let (target, _) = self.store_target(&c.target, Some(ity.element()));
            let conds = c.conds.iter().map(|x| self.condition(x).0).collect();
            hclauses.push(hir::CompFor {
                target,
                iter: it,
                conds,
            });
        }
        let (e, et) = self.expr(elt);
        let v = value.map(|v| self.expr(v));
        self.f().comp.pop();
        let (k, ty) = match kind {
            ast::CompKind::List => (CompKind::List, Ty::List(Box::new(et))),
            ast::CompKind::Set => (CompKind::Set, Ty::Set(Box::new(et))),
            ast::CompKind::Generator => (CompKind::Generator, Ty::List(Box::new(et))),
            ast::CompKind::Dict => {
                let vt = v.as_ref().map(|x| x.1.clone()).unwrap_or(Ty::Any);
                (CompKind::Dict, Ty::Dict(Box::new(et), Box::new(vt)))
            }
        };
        let comp = hir::Comp {
            kind: k,
            elt: e,
            value: v.map(|x| x.0),
            clauses: hclauses,
        };
        (ex(H::Comp(Box::new(comp)), span), ty)
    }

    /// Whether a lambda inside the current function captures this comprehension variable.
    pub(crate) fn captured_comp_name(&self, name: &str) -> bool {
        let cur = self.fns.last().expect("in a function");
        if cur.is_module {
            return self.scopes.module_cells.contains(name);
        }
        self.scopes.comp_cells.contains(name)
    }

    pub(crate) fn fparts(&mut self, parts: &[ast::FStringPart]) -> Vec<hir::FPart> {
        let mut out = Vec::new();
        for p in parts {
            match p {
                ast::FStringPart::Lit(s) => out.push(hir::FPart::Lit(self.ctx.string(s))),
                ast::FStringPart::Expr {
                    expr,
                    conv,
                    spec,
                    debug_text,
                } => {
                    if let Some(t) = debug_text {
                        out.push(hir::FPart::Lit(self.ctx.string(t)));
                    }
                    let (e, _) = self.expr(expr);
                    // `{x=}` shows the repr unless a conversion or spec is given, as in Python.
                    let conv = match (conv, debug_text) {
                        (None, Some(_)) if spec.is_empty() => Some('r'),
                        _ => *conv,
                    };
                    let spec = self.fparts(spec);
                    out.push(hir::FPart::Field {
                        expr: e,
                        conv,
                        spec,
                    });
                }
            }
        }
        out
    }
}
