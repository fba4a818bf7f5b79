//! Lowering external modules: `use mcp NAME as alias` and `use python MODULE as alias`, their
//! calls (`alias.member(...)`), their tools (`alias.tools`, `alias.member`) and their mocks.
//!
//! An external module's members are found at run time by whatever the embedder registered for
//! its kind, so a call is checked there, not here: the checker only knows a module's members
//! when a cached listing exists (`.kora/mcp/NAME.json`, written by `kora check --mcp` and
//! `kora mcp list`). With one, an unknown tool, an unknown or missing argument and an argument
//! of the wrong type are reported before anything runs. Python modules are never listed.
//! Like a standard module, an external module is not a value: its alias is always followed by
//! `.member`.

use rustc_hash::FxHashMap;
use serde_json::Value as Json;

use kora_syntax::ast::{self, ArgKind};
use kora_syntax::{Diagnostic, Span};

use crate::codes;
use crate::hir::{self, ExprKind as H};
use crate::lower::{Ctx, Lowerer};
use crate::lower_expr::{ex, Lowered};
use crate::suggest;
use crate::types::{Tags, Ty};

/// The kinds of external module this checker accepts after `use`.
pub const KINDS: &[&str] = &["mcp", "python"];

/// One tool of a cached listing, as the checker reads it.
#[derive(Debug, Clone)]
pub struct ExtTool {
    pub name: String,
    /// `(parameter, type, required)` from the tool's `inputSchema`.
    pub params: Vec<(String, Ty, bool)>,
}

/// What the checker knows of the external modules a program uses.
#[derive(Default, Clone)]
pub(crate) struct Externals {
    pub list: Vec<hir::External>,
    /// Per module, its cached tools (`None`: not listed, so calls are checked at run time).
    pub tools: Vec<Option<Vec<ExtTool>>>,
}

impl Externals {
    /// The id of `kind NAME`, registering it at its first use.
    pub(crate) fn id(&mut self, kind: &str, name: &str, place: &str) -> hir::ExtId {
        if let Some(i) = self
            .list
            .iter()
            .position(|e| e.kind == kind && e.name == name)
        {
            return hir::ExtId(i as u32);
        }
        self.list.push(hir::External {
            kind: kind.to_string(),
            name: name.to_string(),
            place: place.to_string(),
        });
        self.tools.push(None);
        hir::ExtId(self.list.len() as u32 - 1)
    }
}

/// Where a cached tool listing of MCP server `name` is looked for, nearest folder first.
pub fn cache_paths(entry: &std::path::Path, name: &str) -> Vec<std::path::PathBuf> {
    let dir = entry.parent().unwrap_or(std::path::Path::new("."));
    dir.ancestors()
        .map(|d| d.join(".kora").join("mcp").join(format!("{name}.json")))
        .collect()
}

/// Reads a cached `tools/list` (`{"tools": [{"name", "inputSchema"}, ...]}`); `None` if unusable.
pub fn parse_cache(text: &str) -> Option<Vec<ExtTool>> {
    let j: Json = serde_json::from_str(text).ok()?;
    let tools = j.get("tools")?.as_array()?;
    let mut out = Vec::new();
    for t in tools {
        let name = t.get("name")?.as_str()?.to_string();
        let schema = t.get("inputSchema").cloned().unwrap_or(Json::Null);
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Json::as_array)
            .map(|r| r.iter().filter_map(Json::as_str).collect())
            .unwrap_or_default();
        let params = schema
            .get("properties")
            .and_then(Json::as_object)
            .map(|props| {
                props
                    .iter()
                    .map(|(k, s)| (k.clone(), schema_ty(s), required.contains(&k.as_str())))
                    .collect()
            })
            .unwrap_or_default();
        out.push(ExtTool { name, params });
    }
    Some(out)
}

/// The Kora type a JSON Schema describes, as far as the checker can use it.
fn schema_ty(s: &Json) -> Ty {
    if let Some(e) = s.get("enum").and_then(Json::as_array) {
        let strs: Option<Vec<String>> = e.iter().map(|v| v.as_str().map(str::to_string)).collect();
        if let Some(strs) = strs.filter(|v| !v.is_empty()) {
            return Ty::Literal(strs);
        }
    }
    match s.get("type") {
        Some(Json::String(t)) => one_ty(t, s),
        Some(Json::Array(ts)) => {
            let tys: Vec<Ty> = ts
                .iter()
                .filter_map(Json::as_str)
                .map(|t| one_ty(t, s))
                .collect();
            if tys.is_empty() || tys.contains(&Ty::Any) {
                Ty::Any
            } else {
                Ty::Union(tys)
            }
        }
        _ => Ty::Any,
    }
}

fn one_ty(t: &str, s: &Json) -> Ty {
    match t {
        "string" => Ty::Str,
        "integer" => Ty::Int,
        "number" => Ty::Float,
        "boolean" => Ty::Bool,
        "null" => Ty::None,
        "array" => Ty::List(Box::new(s.get("items").map_or(Ty::Any, schema_ty))),
        "object" => Ty::Dict(Box::new(Ty::Str), Box::new(Ty::Any)),
        _ => Ty::Any,
    }
}

/// The tool a member names: its exact name, else one whose `-` and `.` read as `_`
/// (`get_sum` calls `get-sum`: a Kora name cannot hold a dash).
pub fn find_tool<'t, T>(
    tools: &'t [T],
    name_of: impl Fn(&T) -> &str,
    member: &str,
) -> Option<&'t T> {
    tools.iter().find(|t| name_of(t) == member).or_else(|| {
        tools
            .iter()
            .find(|t| name_of(t).replace(['-', '.'], "_") == member)
    })
}

/// `file:line:col` of `span` in `source`.
pub(crate) fn place_in(file: &str, source: &str, span: Span) -> String {
    let start = (span.start as usize).min(source.len());
    let before = source.get(..start).unwrap_or("");
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    format!("{file}:{line}:{col}")
}

/// The name a `use KIND MODULE [as alias]` binds, when it binds one.
pub(crate) fn bound_name<'a>(u: &'a ast::UseDecl, module: &'a ast::Ident) -> Option<&'a str> {
    match &u.alias {
        Some(a) => Some(&a.name),
        None if !module.name.contains('.') => Some(&module.name),
        None => None,
    }
}

/// Registers the external modules a file uses at its top level, so every function sees them.
pub(crate) fn register_top_level(
    ctx: &mut Ctx,
    ast: &ast::Module,
    display: &str,
    source: &str,
    out: &mut FxHashMap<String, hir::ExtId>,
) {
    for s in &ast.stmts {
        let ast::StmtKind::Use(u) = &s.kind else {
            continue;
        };
        let ast::UseTarget::Provider { kind, name } = &u.target else {
            continue;
        };
        if !KINDS.contains(&kind.name.as_str()) {
            continue;
        }
        if let Some(bound) = bound_name(u, name) {
            let id = ctx
                .externals
                .id(&kind.name, &name.name, &place_in(display, source, s.span));
            out.insert(bound.to_string(), id);
        }
    }
}

impl Lowerer<'_> {
    /// The external module a name stands for here, unless a local binding shadows it.
    pub(crate) fn ext_alias(&self, name: &str) -> Option<hir::ExtId> {
        for f in self.fns.iter().rev() {
            if let Some(m) = f.ext_aliases.get(name) {
                return Some(*m);
            }
            if f.comp.iter().any(|c| c.contains_key(name)) {
                return None;
            }
            if !f.is_module && !f.global_decl.contains(name) && f.slots.contains_key(name) {
                return None;
            }
        }
        self.info().ext_aliases.get(name).copied()
    }

    fn ext(&self, id: hir::ExtId) -> &hir::External {
        &self.ctx.externals.list[id.0 as usize]
    }

    /// `use mcp NAME [as alias]` / `use python MODULE [as alias]`.
    pub(crate) fn external_use(
        &mut self,
        u: &ast::UseDecl,
        kind: &ast::Ident,
        name: &ast::Ident,
        span: Span,
    ) -> Option<hir::StmtKind> {
        if !KINDS.contains(&kind.name.as_str()) {
            let mut d = Diagnostic::error(
                codes::UNKNOWN_EXTERNAL_KIND,
                format!("`use {} ...` names no kind of external module", kind.name),
                kind.span,
            )
            .with_label("not `mcp` or `python`");
            d = match suggest::closest(&kind.name, KINDS.iter().copied()) {
                Some(s) => d.with_help(format!("did you mean `use {s} {} as ...`?", name.name)),
                None => d.with_help(
                    "write `use mcp SERVER as alias` for a `[mcp.SERVER]` of kora.toml, or `use python MODULE as alias`",
                ),
            };
            self.err(d);
            return None;
        }
        if kind.name == "mcp" && name.name.contains('.') {
            self.err(
                Diagnostic::error(
                    codes::UNKNOWN_EXTERNAL_KIND,
                    format!("`{}` is not an MCP server name", name.name),
                    name.span,
                )
                .with_label("a `[mcp.NAME]` table's name has no dots")
                .with_help("name the server as its `[mcp.NAME]` table in kora.toml does"),
            );
            return None;
        }
        let Some(bound) = bound_name(u, name) else {
            self.err(
                Diagnostic::error(
                    codes::USE_NEEDS_AS,
                    format!("`use {} {}` needs `as NAME`", kind.name, name.name),
                    span,
                )
                .with_label("a dotted module binds no name of its own")
                .with_help(format!(
                    "write `use {} {} as {}`",
                    kind.name,
                    name.name,
                    name.name.rsplit('.').next().unwrap_or("m")
                )),
            );
            return None;
        };
        if !self.fns.last().is_some_and(|f| f.is_module) {
            let place = self.place(span);
            let id = self.ctx.externals.id(&kind.name, &name.name, &place);
            let bound = bound.to_string();
            self.f().ext_aliases.insert(bound, id);
        }
        None
    }

    /// `alias` alone, where a value is needed.
    pub(crate) fn external_not_a_value(&mut self, id: hir::ExtId, span: Span) {
        let e = self.ext(id).clone();
        let help = if e.kind == "mcp" {
            "pass its tools with `tools=alias.tools`, or call one: `alias.tool_name(arg=...)`"
        } else {
            "call one of its functions: `alias.function(...)`"
        };
        self.err(
            Diagnostic::error(
                codes::EXTERNAL_NOT_VALUE,
                format!("the {} module `{}` is not a value", e.kind, e.name),
                span,
            )
            .with_label("an external module's name must be followed by `.member`")
            .with_help(help),
        );
    }

    /// The cached tool a member names, or an error when a listing exists and lacks it.
    /// `Ok(None)`: nothing is known, the run decides.
    fn known_tool(&mut self, id: hir::ExtId, member: &ast::Ident) -> Result<Option<ExtTool>, ()> {
        let Some(tools) = self.ctx.externals.tools[id.0 as usize].clone() else {
            return Ok(None);
        };
        if let Some(t) = find_tool(&tools, |t| &t.name, &member.name) {
            return Ok(Some(t.clone()));
        }
        let e = self.ext(id).clone();
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let mut d = Diagnostic::error(
            codes::NO_EXTERNAL_MEMBER,
            format!("the MCP server `{}` has no tool `{}`", e.name, member.name),
            member.span,
        )
        .with_label("not in its cached tool list")
        .with_note(format!(
            "from .kora/mcp/{}.json; refresh it with `kora check --mcp` if the server changed",
            e.name
        ));
        let spelled: Vec<String> = names.iter().map(|n| n.replace(['-', '.'], "_")).collect();
        d = match suggest::closest(&member.name, spelled.iter().map(String::as_str)) {
            Some(s) => d.with_help(format!("did you mean `{s}`?")),
            None => d.with_help(format!("its tools are: {}", names.join(", "))),
        };
        self.err(d);
        Err(())
    }

    /// `alias.tools` or `alias.member` used as a value.
    pub(crate) fn external_attr(
        &mut self,
        id: hir::ExtId,
        name: &ast::Ident,
        span: Span,
    ) -> Lowered {
        if self.ext(id).kind != "mcp" {
            let e = self.ext(id).clone();
            self.err(
                Diagnostic::error(
                    codes::EXTERNAL_NOT_VALUE,
                    format!(
                        "`{}.{}` of a Python module is not a value",
                        e.name, name.name
                    ),
                    span,
                )
                .with_label("Python functions are called, never passed")
                .with_help(format!("call it: `{}(...)`", name.name)),
            );
            return (ex(H::None, span), Ty::Any);
        }
        if name.name == "tools" {
            return (
                ex(H::ExternalMember(id, None), span),
                Ty::List(Box::new(Ty::Any)),
            );
        }
        let _ = self.known_tool(id, name);
        (
            ex(H::ExternalMember(id, Some(name.name.clone())), span),
            Ty::Any,
        )
    }

    /// `alias.member(args)`.
    pub(crate) fn external_call(
        &mut self,
        id: hir::ExtId,
        member: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
        expect: Option<Ty>,
    ) -> Lowered {
        let is_mcp = self.ext(id).kind == "mcp";
        let tool = if is_mcp {
            self.known_tool(id, member).ok().flatten()
        } else {
            None
        };
        let (a, tys, kws) = self.external_args(args);
        if is_mcp {
            self.check_mcp_args(member, &a, &tys, &kws, tool.as_ref(), args, span);
        }
        let expect = match expect {
            Some(Ty::Outcome(t, _)) => *t,
            Some(t) => t,
            None => Ty::Any,
        };
        let call = hir::ExternalCall {
            ext: id,
            member: member.name.clone(),
            args: a,
            expect: expect.clone(),
            site: self.site_of(span),
        };
        (
            ex(H::ExternalCall(Box::new(call)), span),
            // An external call answers Ok or Err, Exhausted when a budget runs out first and
            // Failed when the module cannot answer; never Uncertain.
            Ty::Outcome(
                Box::new(expect),
                Tags(Tags::OK.0 | Tags::ERR.0 | Tags::EXHAUSTED.0 | Tags::FAILED.0),
            ),
        )
    }

    /// An MCP tool takes its arguments by name (or as one dict); a cached schema checks them.
    #[allow(clippy::too_many_arguments)]
    fn check_mcp_args(
        &mut self,
        member: &ast::Ident,
        a: &hir::Args,
        tys: &[Ty],
        kws: &[(String, Span, Ty)],
        tool: Option<&ExtTool>,
        args: &[ast::Arg],
        span: Span,
    ) {
        let one_dict = a.positional.len() == 1
            && kws.is_empty()
            && matches!(tys.first(), Some(Ty::Dict(..) | Ty::Any));
        if !a.positional.is_empty() && !one_dict || !a.star.is_empty() {
            let at = args
                .iter()
                .find(|x| matches!(x.kind, ArgKind::Positional(_) | ArgKind::Star(_)))
                .map_or(span, |x| x.span);
            self.err(
                Diagnostic::error(
                    codes::EXTERNAL_ARGS,
                    format!("the MCP tool `{}` takes its arguments by name", member.name),
                    at,
                )
                .with_label("a positional argument")
                .with_help(format!(
                    "write `{}(name=value, ...)`, or pass one dict of them",
                    member.name
                )),
            );
            return;
        }
        let Some(tool) = tool else { return };
        if one_dict {
            return;
        }
        for (k, kspan, _) in kws {
            if !tool.params.iter().any(|p| &p.0 == k) {
                let mut d = Diagnostic::error(
                    codes::UNKNOWN_KEYWORD,
                    format!("the MCP tool `{}` has no argument `{k}`", tool.name),
                    *kspan,
                )
                .with_label("not in its input schema");
                let known: Vec<&str> = tool.params.iter().map(|p| p.0.as_str()).collect();
                d = d.with_help(suggest::did_you_mean_or_list(k, &known, "arguments"));
                self.err(d);
            }
        }
        for ((k, _, got), (_, x)) in kws.iter().zip(a.keywords.iter()) {
            if let Some((_, want, _)) = tool.params.iter().find(|p| &p.0 == k) {
                if !want.accepts(got) {
                    let what = format!("argument `{k}` of the MCP tool `{}`", tool.name);
                    self.mismatch(want, got, x.span, &what);
                }
            }
        }
        let missing: Vec<&str> = tool
            .params
            .iter()
            .filter(|p| p.2 && !kws.iter().any(|k| k.0 == p.0))
            .map(|p| p.0.as_str())
            .collect();
        if !missing.is_empty() {
            self.err(
                Diagnostic::error(
                    codes::ARITY,
                    format!(
                        "the MCP tool `{}` is missing {}",
                        tool.name,
                        missing
                            .iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    span,
                )
                .with_label("required by its input schema")
                .with_help(format!("pass `{}=...`", missing[0])),
            );
        }
    }

    /// The arguments of an external call, with the type of each positional and keyword one.
    #[allow(clippy::type_complexity)]
    fn external_args(
        &mut self,
        args: &[ast::Arg],
    ) -> (hir::Args, Vec<Ty>, Vec<(String, Span, Ty)>) {
        let mut out = hir::Args::default();
        let (mut tys, mut kws) = (Vec::new(), Vec::new());
        for arg in args {
            match &arg.kind {
                ArgKind::Positional(e) => {
                    let (x, t) = self.expr(e);
                    out.positional.push(x);
                    tys.push(t);
                }
                ArgKind::Keyword(k, e) => {
                    let (x, t) = self.expr(e);
                    let s = self.sym(&k.name);
                    out.keywords.push((s, x));
                    kws.push((k.name.clone(), k.span, t));
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
                            arg.span,
                        )
                        .with_help("pass the keyword arguments by name"),
                    );
                }
            }
        }
        (out, tys, kws)
    }

    /// `with mock alias.member -> value:`.
    pub(crate) fn external_mock(
        &mut self,
        target: &ast::Ident,
        value: hir::Expr,
        body: Vec<hir::Stmt>,
    ) -> Option<hir::StmtKind> {
        let (alias, member) = target.name.split_once('.')?;
        let Some(id) = self.ext_alias(alias) else {
            self.err(
                Diagnostic::error(
                    codes::MOCK_TARGET,
                    format!("`{}` cannot be mocked", target.name),
                    target.span,
                )
                .with_label(format!("`{alias}` is not an external module here"))
                .with_help("mock `analyze`, or a member of a `use mcp` / `use python` module: `with mock fs.read_file -> Ok(\"text\"):`"),
            );
            return None;
        };
        if member.contains('.') {
            self.err(
                Diagnostic::error(
                    codes::MOCK_TARGET,
                    format!("`{}` cannot be mocked", target.name),
                    target.span,
                )
                .with_label("one member of the module, `alias.member`")
                .with_help("name the function or tool the program calls"),
            );
            return None;
        }
        if self.ext(id).kind == "mcp" {
            let m = ast::Ident {
                name: member.to_string(),
                span: target.span,
            };
            let _ = self.known_tool(id, &m);
        }
        Some(hir::StmtKind::MockExternal {
            ext: id,
            member: member.to_string(),
            value,
            body,
        })
    }
}
