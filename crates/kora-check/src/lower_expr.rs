//! Lowering expressions: name resolution to slots, calls checked against signatures, inferred types.

use kora_syntax::ast::{self, ArgKind, BinOp, ExprKind as AE};
use kora_syntax::{Diagnostic, Span};

use crate::codes;
use crate::hir::{self, builtin_id, CompKind, ExprKind as H};
use crate::lower::{Lowerer, Sig};
use crate::scope::collect_target_names;
use crate::suggest;
use crate::types::Ty;

type Lowered = (hir::Expr, Ty);

fn ex(kind: H, span: Span) -> hir::Expr {
    hir::Expr { kind, span }
}

impl Lowerer<'_> {
    pub fn expr(&mut self, e: &ast::Expr) -> Lowered {
        let span = e.span;
        let (kind, ty) = match &e.kind {
            AE::Int(i) => (H::Int(*i), Ty::Int),
            AE::Float(f) => (H::Float(*f), Ty::Float),
            AE::Bool(b) => (H::Bool(*b), Ty::Bool),
            AE::None => (H::None, Ty::None),
            AE::Str(s) => (H::Str(self.ctx.string(s)), Ty::Str),
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
                let (xe, xt) = self.expr(x);
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
            AE::BoolOp(op, a, b) => {
                let (ae, at) = self.expr(a);
                let (be, bt) = self.expr(b);
                let ty = if at == bt { at } else { Ty::Any };
                (H::BoolOp(*op, Box::new(ae), Box::new(be)), ty)
            }
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
                let (c, _) = self.expr(cond);
                let (t, tt) = self.expr(then);
                let (o, ot) = self.expr(orelse);
                let ty = if tt == ot { tt } else { Ty::Any };
                (H::IfExp(Box::new(c), Box::new(t), Box::new(o)), ty)
            }
            AE::Analyze { args, stream } => return self.analyze(args, *stream, span),
            AE::AskHuman(args) => {
                for a in args {
                    self.arg_expr(a);
                }
                self.not_yet_expr("`ask_human`", span);
                (H::None, Ty::Any)
            }
            AE::Classified(x) => {
                self.expr(x);
                self.not_yet_expr("`classified`", span);
                (H::None, Ty::Any)
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

    fn analyze(&mut self, args: &[ast::Arg], stream: bool, span: Span) -> Lowered {
        // The payload type comes from the annotation on the left: `t: Ticket = analyze(...)`
        // or `r: Result[Ticket] = analyze(...)`; with none, the answer is text.
        let expect = match self.expect.take() {
            Some(Ty::Outcome(t)) => *t,
            Some(t) => t,
            None => Ty::Str,
        };
        let mut positional = Vec::new();
        let mut model = None;
        for a in args {
            match &a.kind {
                ArgKind::Positional(x) => positional.push(self.expr(x).0),
                ArgKind::Keyword(k, x) if k.name == "model" => model = Some(self.expr(x).0),
                ArgKind::Keyword(k, x) => {
                    self.expr(x);
                    let what = format!("`analyze(..., {}=...)`", k.name);
                    self.not_yet_expr(&what, a.span);
                }
                _ => {
                    self.arg_expr(a);
                    self.err(
                        Diagnostic::error(
                            codes::BAD_TARGET,
                            "`analyze` takes plain arguments",
                            a.span,
                        )
                        .with_help(
                            "write `analyze(data, \"prompt\")`, optionally with `model=\"name\"`",
                        ),
                    );
                }
            }
        }
        if positional.len() != 2 {
            self.err(
                Diagnostic::error(
                    codes::ARITY,
                    format!(
                        "`analyze` takes the data and a prompt, got {} positional arguments",
                        positional.len()
                    ),
                    span,
                )
                .with_label("expected `analyze(data, \"prompt\")`")
                .with_help(
                    "pass what the model should read first, then the instruction as a string",
                ),
            );
            return (ex(H::None, span), Ty::Outcome(Box::new(expect)));
        }
        let prompt = positional.pop().expect("two arguments");
        let data = positional.pop().expect("two arguments");
        let site = match self.ops.get(span) {
            Some(op) => format!("{}:{}#{}", self.site_file, op.func, op.index),
            None => format!("{}:@{}", self.site_file, span.start),
        };
        let call = hir::AnalyzeCall {
            data,
            prompt,
            model,
            expect: expect.clone(),
            stream,
            site,
        };
        (
            ex(H::Analyze(Box::new(call)), span),
            Ty::Outcome(Box::new(expect)),
        )
    }

    fn not_yet_expr(&mut self, what: &str, span: Span) {
        self.err(
            Diagnostic::error(codes::NOT_YET, format!("{what} is not available yet"), span)
                .with_label("parsed, but this build cannot run it")
                .with_help("this part of Kora is being built; see the issue list in the README"),
        );
    }

    fn arg_expr(&mut self, a: &ast::Arg) -> Lowered {
        match &a.kind {
            ArgKind::Positional(e)
            | ArgKind::Keyword(_, e)
            | ArgKind::Star(e)
            | ArgKind::DoubleStar(e) => self.expr(e),
        }
    }

    fn star_item(&mut self, x: &ast::Expr) -> (bool, hir::Expr) {
        match &x.kind {
            AE::Starred(inner) => (true, self.expr(inner).0),
            _ => (false, self.expr(x).0),
        }
    }

    fn display(&mut self, xs: &[ast::Expr], list: bool, _span: Span) -> (H, Ty) {
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
                return (ex(kind, span), f.slot_tys[s as usize].clone());
            }
        }
        let info = self.info();
        if let Some(&g) = info.global_ix.get(name) {
            if let Some(&m) = info.mod_aliases.get(name) {
                return (ex(H::Module(m), span), Ty::Module);
            }
            return (ex(H::Global(g), span), info.global_tys[g as usize].clone());
        }
        if let Some(&t) = self.ctx.type_ix.get(name) {
            return (ex(H::Type(t), span), Ty::Func);
        }
        if let Some(b) = builtin_id(name) {
            return (ex(H::Builtin(b), span), Ty::Func);
        }
        self.undefined(name, span);
        (ex(H::None, span), Ty::Any)
    }

    fn undefined(&mut self, name: &str, span: Span) {
        let f = self.fns.last().expect("in a function");
        let mut candidates: Vec<&str> = Vec::new();
        for c in &f.comp {
            candidates.extend(c.keys().map(String::as_str));
        }
        candidates.extend(f.slots.keys().map(String::as_str));
        candidates.extend(self.info().globals.iter().map(String::as_str));
        candidates.extend(self.ctx.type_ix.keys().map(String::as_str));
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

    fn attr(&mut self, obj: &ast::Expr, name: &ast::Ident, span: Span) -> Lowered {
        let (oe, ot) = self.expr(obj);
        if let H::Module(m) = oe.kind {
            return self.module_member(m, name, span);
        }
        let fty = self.field_type(&ot, name);
        let s = self.sym(&name.name);
        (ex(H::Attr(Box::new(oe), s), span), fty.unwrap_or(Ty::Any))
    }

    fn module_member(&mut self, m: hir::ModId, name: &ast::Ident, span: Span) -> Lowered {
        let info = &self.ctx.mods[m.0 as usize];
        if let Some(&g) = info.global_ix.get(&name.name) {
            return (
                ex(H::ModuleGlobal(m, g), span),
                info.global_tys[g as usize].clone(),
            );
        }
        if let Some(&t) = self.ctx.type_ix.get(&name.name) {
            return (ex(H::Type(t), span), Ty::Func);
        }
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

    fn args(&mut self, args: &[ast::Arg]) -> (hir::Args, Vec<Ty>, Vec<(String, Span)>) {
        let mut out = hir::Args::default();
        let mut tys = Vec::new();
        let mut kw_names = Vec::new();
        for a in args {
            match &a.kind {
                ArgKind::Positional(e) => {
                    let (x, t) = self.expr(e);
                    out.positional.push(x);
                    tys.push(t);
                }
                ArgKind::Keyword(k, e) => {
                    let (x, _) = self.expr(e);
                    let s = self.sym(&k.name);
                    out.keywords.push((s, x));
                    kw_names.push((k.name.clone(), k.span));
                }
                ArgKind::Star(e) => {
                    let (x, _) = self.expr(e);
                    out.star.push((out.positional.len(), x));
                }
                ArgKind::DoubleStar(e) => {
                    self.expr(e);
                    self.err(
                        Diagnostic::error(
                            codes::BAD_TARGET,
                            "`**` arguments are not supported",
                            a.span,
                        )
                        .with_help("pass the keyword arguments by name"),
                    );
                }
            }
        }
        (out, tys, kw_names)
    }

    fn call(&mut self, func: &ast::Expr, args: &[ast::Arg], span: Span) -> Lowered {
        // `obj.method(...)` is a method call, unless `obj` is a module.
        if let AE::Attr(obj, name) = &func.kind {
            let (oe, ot) = self.expr(obj);
            if let H::Module(m) = oe.kind {
                let (fe, fty) = self.module_member(m, name, func.span);
                let sig = match fe.kind {
                    H::ModuleGlobal(mm, g) => self.ctx.mods[mm.0 as usize].sigs.get(&g).cloned(),
                    _ => None,
                };
                let (a, tys, kws) = self.args(args);
                let ret = self.check_call(&fe, sig.as_deref(), &tys, &kws, &a, span, fty);
                return (ex(H::Call(Box::new(fe), a), span), ret);
            }
            self.check_method_exists(&ot, name);
            let s = self.sym(&name.name);
            let (a, _, _) = self.args(args);
            let ret = method_type(&ot, &name.name);
            return (ex(H::MethodCall(Box::new(oe), s, a), span), ret);
        }
        let (fe, fty) = self.expr(func);
        let sig = match fe.kind {
            H::Global(g) => self.info().sigs.get(&g).cloned(),
            _ => None,
        };
        let (a, tys, kws) = self.args(args);
        let ret = self.check_call(&fe, sig.as_deref(), &tys, &kws, &a, span, fty);
        (ex(H::Call(Box::new(fe), a), span), ret)
    }

    #[allow(clippy::too_many_arguments)]
    fn check_call(
        &mut self,
        fe: &hir::Expr,
        sig: Option<&Sig>,
        tys: &[Ty],
        kws: &[(String, Span)],
        a: &hir::Args,
        span: Span,
        _fty: Ty,
    ) -> Ty {
        let has_star = !a.star.is_empty();
        match &fe.kind {
            H::Type(tid) => {
                let rec = &self.ctx.types[tid.0 as usize];
                let name = rec.name.clone();
                let fields: Vec<(String, Ty, bool)> = rec
                    .fields
                    .iter()
                    .map(|f| {
                        (
                            self.ctx.names.name(f.name).to_string(),
                            f.ty.clone(),
                            f.default.is_some(),
                        )
                    })
                    .collect();
                let ty = Ty::Record(*tid, name.clone());
                let sig = Sig {
                    name,
                    params: fields,
                    star: false,
                    ret: ty.clone(),
                };
                self.check_against(&sig, tys, kws, has_star, span, "field");
                ty
            }
            H::Builtin(b) => builtin_type(hir::builtin_name(*b), tys),
            _ => match sig {
                Some(sig) => {
                    self.check_against(sig, tys, kws, has_star, span, "parameter");
                    sig.ret.clone()
                }
                None => Ty::Any,
            },
        }
    }

    fn check_against(
        &mut self,
        sig: &Sig,
        tys: &[Ty],
        kws: &[(String, Span)],
        has_star: bool,
        span: Span,
        what: &str,
    ) {
        let n = sig.params.len();
        if tys.len() > n && !sig.star && !has_star {
            self.err(
                Diagnostic::error(
                    codes::ARITY,
                    format!(
                        "`{}` takes {} argument{} but {} were given",
                        sig.name,
                        n,
                        if n == 1 { "" } else { "s" },
                        tys.len()
                    ),
                    span,
                )
                .with_label("too many arguments")
                .with_help(format!(
                    "its {what}s are: {}",
                    sig.params
                        .iter()
                        .map(|p| p.0.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            );
            return;
        }
        for (i, t) in tys.iter().enumerate().take(n) {
            let (pname, pty, _) = &sig.params[i];
            if !pty.accepts(t) {
                self.mismatch(pty, t, span, &format!("{what} `{pname}` of `{}`", sig.name));
            }
        }
        for (k, kspan) in kws {
            if !sig.params.iter().any(|p| &p.0 == k) {
                let mut d = Diagnostic::error(
                    codes::UNKNOWN_KEYWORD,
                    format!("`{}` has no {what} named `{k}`", sig.name),
                    *kspan,
                )
                .with_label("unknown keyword argument");
                d = match suggest::closest(k, sig.params.iter().map(|p| p.0.as_str())) {
                    Some(s) => d.with_help(format!("did you mean `{s}`?")),
                    None => d.with_help(format!(
                        "its {what}s are: {}",
                        sig.params
                            .iter()
                            .map(|p| p.0.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                };
                self.err(d);
            }
        }
        if has_star {
            return;
        }
        let missing: Vec<&str> = sig
            .params
            .iter()
            .enumerate()
            .filter(|(i, p)| *i >= tys.len() && !p.2 && !kws.iter().any(|k| k.0 == p.0))
            .map(|(_, p)| p.0.as_str())
            .collect();
        if !missing.is_empty() {
            self.err(
                Diagnostic::error(
                    codes::ARITY,
                    format!(
                        "`{}` is missing {} {what}{}: {}",
                        sig.name,
                        missing.len(),
                        if missing.len() == 1 { "" } else { "s" },
                        missing
                            .iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    span,
                )
                .with_label("not enough arguments")
                .with_help(format!(
                    "pass {} by position or as `{}=...`",
                    missing[0], missing[0]
                )),
            );
        }
    }

    pub fn check_binop(&mut self, op: BinOp, a: &Ty, b: &Ty, span: Span) -> Ty {
        use Ty::*;
        let is_str = |t: &Ty| matches!(t, Str | Literal(_));
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

    fn comprehension(
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
            let conds = c.conds.iter().map(|x| self.expr(x).0).collect();
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
    fn captured_comp_name(&self, name: &str) -> bool {
        let cur = self.fns.last().expect("in a function");
        if cur.is_module {
            return self.scopes.module_cells.contains(name);
        }
        self.scopes
            .scopes
            .iter()
            .any(|s| s.comp_locals.contains(name) && s.cells.contains(name))
    }

    fn fparts(&mut self, parts: &[ast::FStringPart]) -> Vec<hir::FPart> {
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

const STR_METHODS: &[&str] = &[
    "split",
    "rsplit",
    "join",
    "strip",
    "lstrip",
    "rstrip",
    "upper",
    "lower",
    "replace",
    "startswith",
    "endswith",
    "find",
    "rfind",
    "index",
    "count",
    "isdigit",
    "isalpha",
    "isalnum",
    "isspace",
    "isupper",
    "islower",
    "capitalize",
    "title",
    "splitlines",
    "format",
    "zfill",
    "center",
    "ljust",
    "rjust",
    "swapcase",
    "partition",
    "rpartition",
    "removeprefix",
    "removesuffix",
    "isnumeric",
    "isdecimal",
];
const LIST_METHODS: &[&str] = &[
    "append", "extend", "insert", "pop", "remove", "index", "count", "sort", "reverse", "copy",
    "clear",
];
const DICT_METHODS: &[&str] = &[
    "get",
    "keys",
    "values",
    "items",
    "pop",
    "setdefault",
    "update",
    "copy",
    "clear",
];
const SET_METHODS: &[&str] = &[
    "add",
    "discard",
    "remove",
    "pop",
    "union",
    "intersection",
    "difference",
    "symmetric_difference",
    "issubset",
    "issuperset",
    "isdisjoint",
    "copy",
    "clear",
    "update",
];

impl Lowerer<'_> {
    /// A method call on a value of a known built-in type must name one of its methods.
    fn check_method_exists(&mut self, recv: &Ty, name: &ast::Ident) {
        let (tname, list) = match recv {
            Ty::Str | Ty::Literal(_) => ("str", STR_METHODS),
            Ty::List(_) => ("list", LIST_METHODS),
            Ty::Dict(..) => ("dict", DICT_METHODS),
            Ty::Set(_) => ("set", SET_METHODS),
            _ => return,
        };
        if list.contains(&name.name.as_str()) {
            return;
        }
        let mut d = Diagnostic::error(
            codes::NO_METHOD,
            format!("`{tname}` has no method `{}`", name.name),
            name.span,
        )
        .with_label("unknown method");
        d = match suggest::closest(&name.name, list.iter().copied()) {
            Some(s) => d.with_help(format!("did you mean `{s}`?")),
            None => d.with_help(format!("`{tname}` methods are: {}", list.join(", "))),
        };
        self.err(d);
    }
}

/// The least informative common type of two display elements.
fn join(acc: Option<Ty>, t: Ty) -> Ty {
    match acc {
        None => t,
        Some(a) if a == t => a,
        Some(a) if a.is_numeric() && t.is_numeric() => Ty::Float,
        Some(_) => Ty::Any,
    }
}

fn builtin_type(name: &str, args: &[Ty]) -> Ty {
    let first = args.first().cloned().unwrap_or(Ty::Any);
    match name {
        "len" | "ord" | "hash" => Ty::Int,
        "str" | "repr" | "chr" | "input" | "type" => Ty::Str,
        "int" => Ty::Int,
        "float" => Ty::Float,
        "bool" | "any" | "all" | "isinstance" => Ty::Bool,
        "print" => Ty::None,
        "sorted" | "reversed" | "list" => Ty::List(Box::new(first.element())),
        "range" => Ty::List(Box::new(Ty::Int)),
        "abs" => match first {
            Ty::Int | Ty::Float => first,
            _ => Ty::Any,
        },
        "min" | "max" => {
            if args.len() == 1 {
                first.element()
            } else if args.iter().all(|a| *a == first) {
                first
            } else {
                Ty::Any
            }
        }
        "Ok" => Ty::Outcome(Box::new(first)),
        "Err" | "Uncertain" | "Exhausted" | "Failed" => Ty::Outcome(Box::new(Ty::Any)),
        "set" => Ty::Set(Box::new(first.element())),
        _ => Ty::Any,
    }
}

fn method_type(recv: &Ty, name: &str) -> Ty {
    match (recv, name) {
        (
            Ty::Str | Ty::Literal(_),
            "upper" | "lower" | "strip" | "lstrip" | "rstrip" | "replace" | "capitalize" | "title"
            | "join" | "zfill" | "center" | "ljust" | "rjust" | "format" | "swapcase"
            | "removeprefix" | "removesuffix",
        ) => Ty::Str,
        (Ty::Str | Ty::Literal(_), "split" | "rsplit" | "splitlines") => {
            Ty::List(Box::new(Ty::Str))
        }
        (Ty::Str | Ty::Literal(_), "find" | "rfind" | "count" | "index") => Ty::Int,
        (
            Ty::Str | Ty::Literal(_),
            "startswith" | "endswith" | "isdigit" | "isalpha" | "isalnum" | "isspace" | "isupper"
            | "islower" | "isnumeric" | "isdecimal",
        ) => Ty::Bool,
        (Ty::List(t), "pop") => (**t).clone(),
        (Ty::List(_), "copy") => recv.clone(),
        (Ty::List(_), "index" | "count") => Ty::Int,
        (Ty::List(_), "append" | "extend" | "insert" | "sort" | "reverse" | "clear" | "remove") => {
            Ty::None
        }
        (Ty::Dict(k, _), "keys") => Ty::List(k.clone()),
        (Ty::Dict(_, v), "values") => Ty::List(v.clone()),
        (Ty::Dict(k, v), "items") => {
            Ty::List(Box::new(Ty::Tuple(vec![(**k).clone(), (**v).clone()])))
        }
        _ => Ty::Any,
    }
}
