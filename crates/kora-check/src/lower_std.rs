//! Lowering standard-library calls: `json.parse(...)`, `db.query(...)`, `dt.year`, checked against `std_api`.
//!
//! A standard module is not a value: `json` only ever appears as the left
//! side of `json.member`, so its calls are bound to a `StdFn` here and the
//! runtime never looks a member up by name.

use kora_syntax::ast::{self, ArgKind, ExprKind as AE};
use kora_syntax::{Diagnostic, Span};

use crate::codes;
use crate::hir::{self, ExprKind as H};
use crate::lower::{Ctx, Lowerer};
use crate::lower_expr::{ex, Lowered};
use crate::std_api::{self, Member, Owner, StdFn, StdMod, StdType};
use crate::suggest;
use crate::types::Ty;

/// Declares the standard library's record types (`http.Response`, ...) before the program's own.
pub(crate) fn register_std_records(ctx: &mut Ctx, module: hir::ModId) {
    for (name, _) in std_api::STD_RECORDS {
        let id = hir::TypeId(ctx.types.len() as u32);
        ctx.type_ix.insert(name.to_string(), id);
        ctx.types.push(hir::RecordType {
            id,
            name: name.to_string(),
            module,
            fields: Vec::new(),
            doc: None,
            span: Span::default(),
        });
    }
    for (name, fields) in std_api::STD_RECORDS {
        let id = ctx.type_ix[*name];
        let mut defs = Vec::new();
        for (fname, fty) in fields.iter() {
            let ty = std_api::parse_sig_type(fty, &Ty::Any, &|n| record_ty(ctx, n));
            defs.push(hir::FieldDef {
                name: ctx.names.intern(fname),
                ty,
                default: None,
            });
        }
        ctx.types[id.0 as usize].fields = defs;
    }
}

fn record_ty(ctx: &Ctx, name: &str) -> Ty {
    match ctx.type_ix.get(name) {
        Some(id) => Ty::Record(*id, name.to_string()),
        None => Ty::Any,
    }
}

/// A `module.Name` type whose module is standard but which that module does not declare.
pub(crate) fn unknown_std_type(name: &str, span: Span) -> Option<Diagnostic> {
    let (module, _) = name.split_once('.')?;
    StdMod::from_name(module)?;
    if name == "json.Value" {
        // Any JSON value: the same as an unannotated parse.
        return None;
    }
    let known = std_api::STD_RECORDS.iter().map(|(n, _)| *n).chain([
        "sql.Db",
        "time.DateTime",
        "json.Value",
    ]);
    let mut d = Diagnostic::error(codes::UNKNOWN_TYPE, format!("unknown type `{name}`"), span)
        .with_label("the standard module declares no such type");
    d = match suggest::closest(name, known) {
        Some(s) => d.with_help(format!("did you mean `{s}`?")),
        None => d.with_help("see docs/stdlib.md for the types each module declares"),
    };
    Some(d)
}

/// Whether a Python form of the name would read better in a message (`json.parse(...)`).
fn call_form(owner: Owner, m: &Member) -> String {
    let params: Vec<&str> = m.params.iter().filter(|p| !p.2).map(|p| p.0).collect();
    match owner {
        Owner::Module(md) => format!("{}.{}({})", md.name(), m.name, params.join(", ")),
        Owner::Value(_) => format!("x.{}({})", m.name, params.join(", ")),
    }
}

impl Lowerer<'_> {
    /// The standard module a name stands for here, unless a local binding shadows it.
    pub(crate) fn std_alias(&self, name: &str) -> Option<StdMod> {
        for f in self.fns.iter().rev() {
            if let Some(m) = f.std_aliases.get(name) {
                return Some(*m);
            }
            if f.comp.iter().any(|c| c.contains_key(name)) {
                return None;
            }
            if !f.is_module && !f.global_decl.contains(name) && f.slots.contains_key(name) {
                return None;
            }
        }
        self.info().std_aliases.get(name).copied()
    }

    pub(crate) fn std_not_a_value(&mut self, m: StdMod, span: Span) {
        self.err(
            Diagnostic::error(
                codes::STD_NOT_VALUE,
                format!("the standard module `{}` is not a value", m.name()),
                span,
            )
            .with_label("a module name must be followed by `.member`")
            .with_help(format!(
                "call one of its functions directly, e.g. `{}`",
                std_api::names_of(Owner::Module(m))
                    .next()
                    .and_then(|n| std_api::lookup(Owner::Module(m), n))
                    .map(|mm| call_form(Owner::Module(m), mm))
                    .unwrap_or_default()
            )),
        );
    }

    fn unknown_member(&mut self, owner: Owner, name: &ast::Ident) {
        let what = match owner {
            Owner::Module(m) => format!("module `{}`", m.name()),
            Owner::Value(t) => format!("`{}`", t.name()),
        };
        let mut d = Diagnostic::error(
            codes::NO_STD_MEMBER,
            format!("{what} has no member `{}`", name.name),
            name.span,
        )
        .with_label("not in the standard library");
        d = match suggest::closest(&name.name, std_api::names_of(owner)) {
            Some(s) => d.with_help(format!("did you mean `{s}`?")),
            None => d.with_help(format!(
                "its members are: {}",
                std_api::names_of(owner).collect::<Vec<_>>().join(", ")
            )),
        };
        self.err(d);
    }

    fn not_called(&mut self, owner: Owner, m: &Member, span: Span) {
        self.err(
            Diagnostic::error(
                codes::STD_NOT_VALUE,
                format!("`{}` must be called where it is named", m.name),
                span,
            )
            .with_label("a standard-library function is not a value")
            .with_help(format!(
                "call it: `{}`; to pass it around, wrap it in a `lambda`",
                call_form(owner, m)
            )),
        );
    }

    /// `json.parse` without a call, or `http.Response` (a standard record type).
    pub(crate) fn std_module_attr(&mut self, m: StdMod, name: &ast::Ident, span: Span) -> Lowered {
        let qualified = format!("{}.{}", m.name(), name.name);
        if let Some(&t) = self.ctx.type_ix.get(&qualified) {
            return (ex(H::Type(t), span), Ty::Func);
        }
        match std_api::lookup(Owner::Module(m), &name.name) {
            Some(mm) => self.not_called(Owner::Module(m), mm, span),
            None => self.unknown_member(Owner::Module(m), name),
        }
        (ex(H::None, span), Ty::Any)
    }

    /// `dt.year`: a field-like member of a standard value.
    pub(crate) fn std_property(
        &mut self,
        st: StdType,
        recv: hir::Expr,
        name: &ast::Ident,
        span: Span,
    ) -> Lowered {
        let owner = Owner::Value(st);
        match std_api::lookup(owner, &name.name) {
            Some(m) if m.property => {
                let ret = self.sig_type(m.ret, &Ty::Any);
                let call = hir::StdCall {
                    func: m.func,
                    recv: Some(recv),
                    args: Vec::new(),
                    expect: Ty::Any,
                    site: self.site_of(span),
                };
                (ex(H::StdCall(Box::new(call)), span), ret)
            }
            Some(m) => {
                self.not_called(owner, m, span);
                (ex(H::None, span), Ty::Any)
            }
            None => {
                self.unknown_member(owner, name);
                (ex(H::None, span), Ty::Any)
            }
        }
    }

    fn sig_type(&self, text: &str, t: &Ty) -> Ty {
        let ctx = &*self.ctx;
        std_api::parse_sig_type(text, t, &|n| record_ty(ctx, n))
    }

    /// `file:line:col` of a span's start, for messages the runtime shows about this place.
    pub(crate) fn place(&self, span: Span) -> String {
        let start = (span.start as usize).min(self.source.len());
        let before = self.source.get(..start).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        format!("{}:{line}:{col}", self.site_file)
    }

    pub(crate) fn site_of(&self, span: Span) -> String {
        match self.ops.get(span) {
            Some(op) => format!("{}:{}#{}", self.site_file, op.func, op.index),
            None => format!("{}:@{}", self.site_file, span.start),
        }
    }

    /// `json.parse(text)` or `db.query(sql, params)`: binds arguments to parameters by name.
    pub(crate) fn std_call(
        &mut self,
        owner: Owner,
        recv: Option<hir::Expr>,
        name: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        expect: Option<Ty>,
    ) -> Lowered {
        let Some(m) = std_api::lookup(owner, &name.name) else {
            for a in args {
                self.arg_expr(a);
            }
            self.unknown_member(owner, name);
            return (ex(H::None, span), Ty::Any);
        };
        if m.property {
            for a in args {
                self.arg_expr(a);
            }
            self.err(
                Diagnostic::error(
                    codes::STD_NOT_VALUE,
                    format!("`{}` is a field, not a method", m.name),
                    span,
                )
                .with_label("no call needed")
                .with_help(format!("write `x.{}` without parentheses", m.name)),
            );
            return (ex(H::None, span), Ty::Any);
        }
        let mut bound: Vec<Option<hir::Expr>> = (0..m.params.len()).map(|_| None).collect();
        let mut tys: Vec<Option<Ty>> = vec![None; m.params.len()];
        let mut npos = 0;
        for a in args {
            match &a.kind {
                ArgKind::Positional(e) => {
                    if matches!(
                        m.func,
                        StdFn::DbQuery | StdFn::DbExecute | StdFn::DbExecuteMany
                    ) && npos == 0
                    {
                        self.check_query_text(e);
                    }
                    if npos == 0
                        && owner == Owner::Module(StdMod::Re)
                        && m.func != StdFn::ReEscape
                        && m.func != StdFn::ReCheck
                    {
                        self.check_pattern_literal(e);
                    }
                    let (x, t) = self.expr(e);
                    if npos < m.params.len() {
                        bound[npos] = Some(x);
                        tys[npos] = Some(t);
                    }
                    npos += 1;
                }
                ArgKind::Keyword(k, e) => {
                    let (x, t) = self.expr(e);
                    match m.params.iter().position(|p| p.0 == k.name) {
                        Some(i) if bound[i].is_some() => self.err(
                            Diagnostic::error(
                                codes::ARITY,
                                format!("`{}` got two values for `{}`", m.name, k.name),
                                k.span,
                            )
                            .with_label("already given by position")
                            .with_help("pass each argument once"),
                        ),
                        Some(i) => {
                            if i == 0 && matches!(m.func, StdFn::DbQuery | StdFn::DbExecute) {
                                self.check_query_text(e);
                            }
                            bound[i] = Some(x);
                            tys[i] = Some(t);
                        }
                        None => {
                            let mut d = Diagnostic::error(
                                codes::UNKNOWN_KEYWORD,
                                format!("`{}` has no parameter named `{}`", m.name, k.name),
                                k.span,
                            )
                            .with_label("unknown keyword argument");
                            d = match suggest::closest(&k.name, m.params.iter().map(|p| p.0)) {
                                Some(s) => d.with_help(format!("did you mean `{s}`?")),
                                None => {
                                    d.with_help(format!("call it as `{}`", call_form(owner, m)))
                                }
                            };
                            self.err(d);
                        }
                    }
                }
                ArgKind::Star(e) | ArgKind::DoubleStar(e) => {
                    self.expr(e);
                    self.err(
                        Diagnostic::error(
                            codes::BAD_TARGET,
                            "standard-library calls take plain arguments",
                            a.span,
                        )
                        .with_label("`*` / `**` here")
                        .with_help(format!("call it as `{}`", call_form(owner, m))),
                    );
                }
            }
        }
        if npos > m.params.len() {
            self.err(
                Diagnostic::error(
                    codes::ARITY,
                    format!(
                        "`{}` takes {} argument{} but {npos} were given",
                        m.name,
                        m.params.len(),
                        if m.params.len() == 1 { "" } else { "s" }
                    ),
                    span,
                )
                .with_label("too many arguments")
                .with_help(format!("call it as `{}`", call_form(owner, m))),
            );
        }
        let missing: Vec<&str> = m
            .params
            .iter()
            .zip(&bound)
            .filter(|(p, b)| !p.2 && b.is_none())
            .map(|(p, _)| p.0)
            .collect();
        if !missing.is_empty() {
            self.err(
                Diagnostic::error(
                    codes::ARITY,
                    format!(
                        "`{}` is missing {}",
                        m.name,
                        missing
                            .iter()
                            .map(|x| format!("`{x}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    span,
                )
                .with_label("not enough arguments")
                .with_help(format!("call it as `{}`", call_form(owner, m))),
            );
        }
        for (i, t) in tys.iter().enumerate() {
            if let Some(t) = t {
                let want = self.sig_type(m.params[i].1, &Ty::Any);
                if !want.accepts(t) {
                    let owner_name = match owner {
                        Owner::Module(md) => format!("{}.{}", md.name(), m.name),
                        Owner::Value(t) => format!("{}.{}", t.name(), m.name),
                    };
                    let what = format!("parameter `{}` of `{owner_name}`", m.params[i].0);
                    self.mismatch(&want, t, span, &what);
                }
            }
        }
        let expect = self.typed_target(m, expect, &tys, span);
        let ret = self.sig_type(m.ret, &expect);
        let call = hir::StdCall {
            func: m.func,
            recv,
            args: bound,
            expect,
            site: self.site_of(span),
        };
        (ex(H::StdCall(Box::new(call)), span), ret)
    }

    /// The `T` a typed call reads into: the annotation's type, or the member's default.
    fn typed_target(
        &mut self,
        m: &Member,
        expect: Option<Ty>,
        tys: &[Option<Ty>],
        span: Span,
    ) -> Ty {
        let Some(default) = m.typed else {
            return Ty::Any;
        };
        let declared = match expect {
            Some(Ty::Outcome(t, _)) => Some(*t),
            Some(t) => Some(t),
            None => None,
        };
        match declared {
            Some(t) if t.is_known() => {
                let wants_list = matches!(m.func, StdFn::DbQuery | StdFn::CsvParse);
                if wants_list && !matches!(t, Ty::List(_)) {
                    let example = format!("list[{t}]");
                    self.mismatch(
                        &Ty::List(Box::new(t)),
                        &Ty::Any,
                        span,
                        &format!(
                            "`{}` returns a list of rows: annotate `{example}`; the result",
                            m.name
                        ),
                    );
                    return Ty::Any;
                }
                t
            }
            _ => {
                if m.func == StdFn::NotesRead {
                    if let Some(Some(t)) = tys.get(1) {
                        if !matches!(t, Ty::None) {
                            return t.clone();
                        }
                    }
                }
                self.sig_type(default, &Ty::Any)
            }
        }
    }

    /// A literal pattern is checked before running: linear-time matching has no backreferences.
    fn check_pattern_literal(&mut self, e: &ast::Expr) {
        let AE::Str(p) = &e.kind else {
            return;
        };
        if let Err(err) = regex_syntax::Parser::new().parse(p) {
            let why = match &err {
                regex_syntax::Error::Parse(x) => x.kind().to_string(),
                regex_syntax::Error::Translate(x) => x.kind().to_string(),
                other => other.to_string(),
            };
            self.err(
                Diagnostic::error(
                    codes::BAD_REGEX,
                    format!("invalid regular expression: {why}"),
                    e.span,
                )
                .with_label("this pattern does not compile")
                .with_help("Kora's `re` matches in linear time: no backreferences or lookaround; see docs/stdlib.md"),
            );
        }
    }

    /// Query text built from values at the call is refused: values go in as parameters.
    fn check_query_text(&mut self, e: &ast::Expr) {
        let built = match &e.kind {
            AE::FString(parts) => parts
                .iter()
                .any(|p| matches!(p, ast::FStringPart::Expr { .. })),
            AE::Binary(ast::BinOp::Add | ast::BinOp::Mod, ..) => true,
            AE::Call { func, .. } => {
                matches!(&func.kind, AE::Attr(_, n) if n.name == "format" || n.name == "replace" || n.name == "join")
            }
            _ => false,
        };
        if built {
            self.err(
                Diagnostic::error(
                    codes::SQL_TEXT_BUILT,
                    "SQL text is built from values here",
                    e.span,
                )
                .with_label("values spliced into query text can change what the query does")
                .with_help("write the query as a literal with `?` placeholders and pass the values as `params=[...]`"),
            );
        }
    }
}
