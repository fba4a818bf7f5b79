//! Lowering calls: arguments, static signature checks, `analyze`, and builtin and method types.

use crate::codes;
use crate::hir::{self, ExprKind as H};
use crate::lower::{Lowerer, Sig};
use crate::lower_expr::{ex, Lowered};
use crate::suggest;
use crate::types::{Tags, Ty};
use kora_syntax::ast::{self, ArgKind, ExprKind as AE};
use kora_syntax::{Diagnostic, Span};

impl Lowerer<'_> {
    pub(crate) fn analyze(&mut self, args: &[ast::Arg], stream: bool, span: Span) -> Lowered {
        // The payload type comes from the annotation on the left: `t: Ticket = analyze(...)`
        // or `r: Result[Ticket] = analyze(...)`; with none, the answer is text.
        let expect = match self.expect.take() {
            Some(Ty::Outcome(t, _)) => *t,
            Some(t) => t,
            None => Ty::Str,
        };
        let mut positional = Vec::new();
        let mut model = None;
        let mut tools = None;
        // Handlers belong to this call; the expressions inside it may not take them.
        let handlers = std::mem::take(&mut self.pending_handlers);
        for a in args {
            match &a.kind {
                ArgKind::Positional(x) => positional.push(self.expr(x).0),
                ArgKind::Keyword(k, x) if k.name == "model" => model = Some(self.expr(x).0),
                ArgKind::Keyword(k, x) if k.name == "tools" => tools = Some(self.tools_arg(x)),
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
            return (ex(H::None, span), Ty::outcome(expect, Tags::MODEL));
        }
        self.pending_handlers = handlers;
        let (on_tool_call, on_tool_result, on_token) =
            self.claim_handlers(tools.is_some(), stream, &expect, span);
        // A token handler is what the pieces go to, so the call streams.
        let stream = stream || on_token.is_some();
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
            tools,
            on_tool_call,
            on_tool_result,
            on_token,
        };
        (
            ex(H::Analyze(Box::new(call)), span),
            Ty::outcome(expect, Tags::MODEL),
        )
    }

    pub(crate) fn args(&mut self, args: &[ast::Arg]) -> (hir::Args, Vec<Ty>, Vec<(String, Span)>) {
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

    pub(crate) fn call(&mut self, func: &ast::Expr, args: &[ast::Arg], span: Span) -> Lowered {
        // Only this call may read the annotation it is assigned to; its arguments may not.
        let expect = self.expect.take();
        if let Some(judge) = self.eval_call(func, args, span) {
            return judge;
        }
        // `obj.method(...)` is a method call, unless `obj` is a module.
        if let AE::Attr(obj, name) = &func.kind {
            if let AE::Name(n) = &obj.kind {
                if let Some(m) = self.std_alias(n) {
                    return self.std_call(
                        crate::std_api::Owner::Module(m),
                        None,
                        name,
                        args,
                        span,
                        expect,
                    );
                }
                if let Some(x) = self.ext_alias(n) {
                    if let Some(f) = self.facts.as_mut() {
                        f.externals.push((obj.span, x));
                    }
                    return self.external_call(x, name, args, span, expect);
                }
            }
            let (oe, ot) = self.expr(obj);
            if let Ty::Std(st) = ot {
                let owner = crate::std_api::Owner::Value(st);
                return self.std_call(owner, Some(oe), name, args, span, expect);
            }
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
        if matches!(fe.kind, H::Builtin(b) if hir::builtin_name(b) == "remaining") {
            return self.remaining(args, span);
        }
        if matches!(fe.kind, H::Builtin(b) if hir::builtin_name(b) == "isinstance") {
            self.check_isinstance(args, span);
        }
        let sig = match fe.kind {
            H::Global(g) => self.info().sigs.get(&g).cloned(),
            _ => None,
        };
        let (a, tys, kws) = self.args(args);
        let ret = self.check_call(&fe, sig.as_deref(), &tys, &kws, &a, span, fty);
        (ex(H::Call(Box::new(fe), a), span), ret)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn check_call(
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
                let ty = self.ctx.record_ty(*tid);
                let sig = Sig {
                    name,
                    kind: ast::FuncKind::Def,
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

    pub(crate) fn check_against(
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
                let known: Vec<&str> = sig.params.iter().map(|p| p.0.as_str()).collect();
                d = d.with_help(suggest::did_you_mean_or_list(
                    k,
                    &known,
                    &format!("{what}s"),
                ));
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

    /// A method call on a value of a known built-in type must name one of its methods.
    pub(crate) fn check_method_exists(&mut self, recv: &Ty, name: &ast::Ident) {
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
pub(crate) fn join(acc: Option<Ty>, t: Ty) -> Ty {
    match acc {
        None => t,
        Some(a) if a == t => a,
        Some(a) if a.is_numeric() && t.is_numeric() => Ty::Float,
        Some(_) => Ty::Any,
    }
}

pub(crate) fn builtin_type(name: &str, args: &[Ty]) -> Ty {
    let first = args.first().cloned().unwrap_or(Ty::Any);
    match name {
        "len" | "ord" | "hash" => Ty::Int,
        "str" | "repr" | "chr" | "input" | "type" | "hex" | "oct" | "bin" => Ty::Str,
        "int" => Ty::Int,
        "float" => Ty::Float,
        "bytes" => Ty::Std(crate::std_api::StdType::Bytes),
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
        "Ok" => Ty::outcome(first, Tags::OK),
        "Err" | "Uncertain" | "Exhausted" | "Failed" => {
            Ty::outcome(Ty::Any, Tags::of_name(name).unwrap_or(Tags::ALL))
        }
        "set" => Ty::Set(Box::new(first.element())),
        _ => Ty::Any,
    }
}

pub(crate) fn method_type(recv: &Ty, name: &str) -> Ty {
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
