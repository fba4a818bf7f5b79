//! The static half of the label rule: a classified value passed straight to `analyze` outside a release is an error (E0830).
//!
//! Only direct flows are judged here, from the syntax tree: an argument that
//! is, or plainly contains, a `classified(...)` expression, or a name whose
//! every assignment in its function is `classified(...)` or `env.get(...)`.
//! Anything less direct (a value through a call, a field, a module) is the
//! runtime's to refuse; the runtime is authoritative, so this pass never
//! guesses and only reports what it can see in one function.

use rustc_hash::FxHashMap;

use kora_syntax::ast::{
    ArgKind, Expr, ExprKind, Module, Param, Pattern, PatternKind, Stmt, StmtKind, UseTarget,
};
use kora_syntax::span::LineIndex;
use kora_syntax::visit::children::{child_blocks, stmt_exprs, sub_exprs};
use kora_syntax::{Diagnostic, Span};

use crate::{codes, scope};

/// Every direct flow of a classified value into `analyze` in one file.
pub fn check(module: &Module, source: &str) -> Vec<Diagnostic> {
    pass(module, source).diags
}

/// A condition (`if`, `elif`, `while`, a `match` subject, a comprehension's `if`) that reads
/// a classified value: the branch it takes is an implicit flow labels do not follow, so
/// `kora audit` shows it to a reviewer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Condition {
    pub span: Span,
    /// `if`, `elif`, `while`, `match` or `comprehension if`.
    pub kind: &'static str,
    /// The classified name it reads, or `classified(...)`.
    pub reads: String,
}

/// Every condition of one file that reads a classified value, in source order.
pub fn conditions(module: &Module, source: &str) -> Vec<Condition> {
    let mut c = pass(module, source).conditions;
    c.sort_by_key(|c| c.span.start);
    c
}

fn pass<'s>(module: &Module, source: &'s str) -> Pass<'s> {
    let mut env_aliases = Vec::new();
    for s in &module.stmts {
        if let StmtKind::Use(u) = &s.kind {
            if let UseTarget::Std(n) = &u.target {
                if n.name == "env" {
                    env_aliases.push(u.alias.as_ref().unwrap_or(n).name.clone());
                }
            }
        }
    }
    let mut pass = Pass {
        source,
        lines: LineIndex::new(source),
        env_aliases,
        diags: Vec::new(),
        conditions: Vec::new(),
    };
    pass.scope(&module.stmts, &[]);
    pass
}

/// Where a name's classified value came from.
#[derive(Clone, Copy)]
enum Origin {
    Classified(Span),
    EnvGet(Span),
}

impl Origin {
    fn span(self) -> Span {
        match self {
            Origin::Classified(s) | Origin::EnvGet(s) => s,
        }
    }
}

/// What one function (or the module's top level) assigns to a name.
#[derive(Default)]
struct Binding {
    /// The first classified assignment.
    first: Option<Origin>,
    /// Some binding of the name is not a classified assignment, so its value is not known here.
    plain: bool,
}

impl Binding {
    fn classified(&self) -> Option<Origin> {
        if self.plain {
            None
        } else {
            self.first
        }
    }
}

type Bindings = FxHashMap<String, Binding>;

/// What the walk knows at one point of one function.
struct Here<'b> {
    bindings: &'b Bindings,
    /// Names released by the `declassify` blocks around this point.
    released: Vec<String>,
    /// Names bound by an enclosing lambda or comprehension, which hide the function's.
    shadowed: Vec<String>,
}

/// A classified value found in an argument of `analyze`.
enum Flow {
    /// A `classified(...)` expression written in the argument.
    Direct(Span),
    /// A name whose every assignment is classified.
    Named {
        name: String,
        at: Span,
        origin: Origin,
    },
}

struct Pass<'s> {
    source: &'s str,
    lines: LineIndex,
    env_aliases: Vec<String>,
    diags: Vec<Diagnostic>,
    conditions: Vec<Condition>,
}

impl Pass<'_> {
    /// One function body (or the top level): its own names, its own releases.
    fn scope(&mut self, body: &[Stmt], params: &[Param]) {
        let mut bindings = Bindings::default();
        for p in params {
            mark_plain(&mut bindings, &p.name.name);
        }
        self.bind_block(body, &mut bindings);
        let mut here = Here {
            bindings: &bindings,
            released: Vec::new(),
            shadowed: Vec::new(),
        };
        self.flow_block(body, &mut here);
    }

    /// Records every binding of the function, nested blocks included, nested functions not.
    fn bind_block(&self, stmts: &[Stmt], b: &mut Bindings) {
        for s in stmts {
            match &s.kind {
                StmtKind::Assign {
                    targets,
                    value,
                    handlers,
                } => {
                    for t in targets {
                        match &t.kind {
                            ExprKind::Name(n) => self.assign(b, n, value),
                            _ => mark_targets(b, t),
                        }
                    }
                    mark_handlers(b, handlers);
                }
                StmtKind::AnnAssign {
                    target,
                    value,
                    handlers,
                    else_,
                    ..
                } => {
                    if let Some(v) = value {
                        self.assign(b, &target.name, v);
                    }
                    mark_handlers(b, handlers);
                    if let Some((why, kind)) = else_.as_ref().and_then(|e| e.binds.as_ref()) {
                        mark_plain(b, &why.name);
                        mark_plain(b, &kind.name);
                    }
                }
                StmtKind::Expr { handlers, .. } => mark_handlers(b, handlers),
                StmtKind::AugAssign { target, .. } => mark_targets(b, target),
                StmtKind::For { target, into, .. } => {
                    mark_targets(b, target);
                    if let Some(i) = into {
                        mark_targets(b, &i.target);
                    }
                }
                StmtKind::Match { arms, .. } => {
                    for a in arms {
                        mark_pattern(b, &a.pattern);
                    }
                }
                StmtKind::Def(d) => mark_plain(b, &d.name.name),
                StmtKind::Use(u) => match (&u.alias, &u.target) {
                    (Some(a), _) | (None, UseTarget::Std(a)) => mark_plain(b, &a.name),
                    _ => {}
                },
                StmtKind::Nonlocal(ns) | StmtKind::Global(ns) => {
                    for n in ns {
                        mark_plain(b, &n.name);
                    }
                }
                _ => {}
            }
            if matches!(s.kind, StmtKind::Def(_) | StmtKind::Test { .. }) {
                continue;
            }
            for block in child_blocks(s) {
                self.bind_block(block, b);
            }
        }
    }

    fn assign(&self, b: &mut Bindings, name: &str, value: &Expr) {
        let entry = b.entry(name.to_string()).or_default();
        match self.origin(value) {
            Some(o) => {
                entry.first.get_or_insert(o);
            }
            None => entry.plain = true,
        }
    }

    /// Whether a value is classified where it is made: `classified(...)` or `env.get(...)`.
    fn origin(&self, value: &Expr) -> Option<Origin> {
        match &value.kind {
            ExprKind::Classified(_) => Some(Origin::Classified(value.span)),
            ExprKind::Call { func, .. } => match &func.kind {
                ExprKind::Attr(m, member) if member.name == "get" => match &m.kind {
                    ExprKind::Name(n) if self.env_aliases.contains(n) => {
                        Some(Origin::EnvGet(value.span))
                    }
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    }

    fn flow_block(&mut self, stmts: &[Stmt], here: &mut Here<'_>) {
        for s in stmts {
            match &s.kind {
                StmtKind::Def(d) => {
                    for e in stmt_exprs(s) {
                        self.flow_expr(e, here);
                    }
                    // A nested function runs later, outside these releases, with names of its own.
                    self.scope(&d.body, &d.params);
                }
                StmtKind::Test { body, .. } => self.scope(body, &[]),
                StmtKind::Declassify { value, body, .. } => {
                    self.flow_expr(value, here);
                    let released = match &value.kind {
                        ExprKind::Name(n) => Some(n.clone()),
                        _ => None,
                    };
                    let pushed = released.is_some();
                    here.released.extend(released);
                    self.flow_block(body, here);
                    if pushed {
                        here.released.pop();
                    }
                }
                _ => {
                    self.note_conditions(s, here);
                    for e in stmt_exprs(s) {
                        self.flow_expr(e, here);
                    }
                    for block in child_blocks(s) {
                        self.flow_block(block, here);
                    }
                }
            }
        }
    }

    /// Records the conditions of `s` that read a classified value.
    fn note_conditions(&mut self, s: &Stmt, here: &Here<'_>) {
        let found = |kind: &'static str, e: &Expr, this: &mut Self| {
            if let Some(reads) = reads_classified(e, here) {
                this.conditions.push(Condition {
                    span: e.span,
                    kind,
                    reads,
                });
            }
        };
        match &s.kind {
            StmtKind::If { branches, .. } => {
                for (i, (cond, _)) in branches.iter().enumerate() {
                    found(if i == 0 { "if" } else { "elif" }, cond, self);
                }
            }
            StmtKind::While { cond, .. } => found("while", cond, self),
            StmtKind::Match { subject, .. } => found("match", subject, self),
            _ => {}
        }
    }

    fn flow_expr(&mut self, e: &Expr, here: &mut Here<'_>) {
        match &e.kind {
            ExprKind::Analyze { args, .. } => {
                self.analyze_call(args, here);
                for x in sub_exprs(e) {
                    self.flow_expr(x, here);
                }
            }
            ExprKind::Lambda { params, body } => {
                for d in params.iter().filter_map(|p| p.default.as_ref()) {
                    self.flow_expr(d, here);
                }
                let depth = here.shadowed.len();
                here.shadowed
                    .extend(params.iter().map(|p| p.name.name.clone()));
                self.flow_expr(body, here);
                here.shadowed.truncate(depth);
            }
            ExprKind::Comp { clauses, .. } => {
                for cond in clauses.iter().flat_map(|c| c.conds.iter()) {
                    if let Some(reads) = reads_classified(cond, here) {
                        self.conditions.push(Condition {
                            span: cond.span,
                            kind: "comprehension if",
                            reads,
                        });
                    }
                }
                let depth = here.shadowed.len();
                for c in clauses {
                    let mut names = Vec::new();
                    scope::collect_target_names(&c.target, &mut names);
                    here.shadowed.extend(names);
                }
                for x in sub_exprs(e) {
                    self.flow_expr(x, here);
                }
                here.shadowed.truncate(depth);
            }
            _ => {
                for x in sub_exprs(e) {
                    self.flow_expr(x, here);
                }
            }
        }
    }

    fn analyze_call(&mut self, args: &[kora_syntax::ast::Arg], here: &Here<'_>) {
        let mut positional = args.iter().filter_map(|a| match &a.kind {
            ArgKind::Positional(x) => Some(x),
            _ => None,
        });
        let data = positional.next();
        let prompt = positional.next();
        let model = args.iter().find_map(|a| match &a.kind {
            ArgKind::Keyword(k, x) if k.name == "model" => Some(x),
            _ => None,
        });
        for (role, arg) in [("data", data), ("prompt", prompt)] {
            let Some(arg) = arg else { continue };
            let mut flows = Vec::new();
            find_flows(arg, here, &mut flows);
            for f in flows {
                let d = self.report(f, role, model);
                self.diags.push(d);
            }
        }
    }

    fn report(&self, flow: Flow, role: &str, model: Option<&Expr>) -> Diagnostic {
        let (sink_desc, sink) = match model.map(|m| &m.kind) {
            Some(ExprKind::Str(name)) => (format!("`analyze` (model=\"{name}\")"), name.clone()),
            Some(_) => {
                let text = model
                    .and_then(|m| self.source.get(m.span.range()))
                    .unwrap_or("...");
                (format!("`analyze` (model={text})"), "MODEL".to_string())
            }
            None => (
                "`analyze` (the default model)".to_string(),
                "MODEL".to_string(),
            ),
        };
        let which = if sink == "MODEL" {
            " (MODEL: the model the call goes to)"
        } else {
            ""
        };
        match flow {
            Flow::Direct(at) => Diagnostic::error(
                codes::CLASSIFIED_TO_MODEL,
                format!("a `classified(...)` value reaches {sink_desc} without a release"),
                at,
            )
            .with_label(format!("classified here, sent to the model in its {role}"))
            .with_help(format!(
                "bind it to a name (`secret = classified(...)`) and put the `analyze` inside `declassify secret for {sink}:`{which}"
            )),
            Flow::Named { name, at, origin } => {
                let line = self.lines.line(origin.span().start);
                let (whence, label) = match origin {
                    Origin::Classified(_) => (
                        format!("classified at line {line}"),
                        "classified here".to_string(),
                    ),
                    Origin::EnvGet(_) => (
                        format!("from `env.get` at line {line}"),
                        "an environment variable is classified".to_string(),
                    ),
                };
                Diagnostic::error(
                    codes::CLASSIFIED_TO_MODEL,
                    format!(
                        "classified value `{name}` ({whence}) reaches {sink_desc} without a release"
                    ),
                    at,
                )
                .with_label(format!("sent to the model in its {role}"))
                .with_secondary(origin.span(), label)
                .with_help(format!(
                    "if this model may read it, release it for this call: put the `analyze` inside `declassify {name} for {sink}:`{which}"
                ))
            }
        }
    }
}

/// The classified values an argument carries plainly: itself, or inside a
/// display, an f-string or an operator. A call, a field or an index is not
/// plain: what comes out of it is the runtime's to judge.
fn find_flows(e: &Expr, here: &Here<'_>, out: &mut Vec<Flow>) {
    match &e.kind {
        ExprKind::Classified(_) => out.push(Flow::Direct(e.span)),
        ExprKind::Name(n) => {
            if here.shadowed.contains(n) || here.released.contains(n) {
                return;
            }
            if let Some(origin) = here.bindings.get(n).and_then(Binding::classified) {
                out.push(Flow::Named {
                    name: n.clone(),
                    at: e.span,
                    origin,
                });
            }
        }
        ExprKind::List(xs) | ExprKind::Tuple(xs) | ExprKind::Set(xs) => {
            for x in xs {
                find_flows(x, here, out);
            }
        }
        ExprKind::Dict(pairs) => {
            for (k, v) in pairs {
                find_flows(k, here, out);
                find_flows(v, here, out);
            }
        }
        ExprKind::FString(_) => {
            for x in sub_exprs(e) {
                find_flows(x, here, out);
            }
        }
        ExprKind::Binary(_, a, b) => {
            find_flows(a, here, out);
            find_flows(b, here, out);
        }
        ExprKind::Starred(x) => find_flows(x, here, out),
        _ => {}
    }
}

/// The first classified value `e` reads anywhere inside it (a call's arguments, a method's
/// receiver, an operand): `classified(...)` written there, or a name whose every assignment
/// is classified. Released names count too: a branch is an implicit flow either way.
fn reads_classified(e: &Expr, here: &Here<'_>) -> Option<String> {
    match &e.kind {
        ExprKind::Classified(_) => Some("classified(...)".to_string()),
        ExprKind::Name(n) => {
            if here.shadowed.contains(n) {
                return None;
            }
            here.bindings
                .get(n)
                .and_then(Binding::classified)
                .map(|_| n.clone())
        }
        // A lambda's body runs later, with its own names.
        ExprKind::Lambda { .. } => None,
        _ => sub_exprs(e)
            .into_iter()
            .find_map(|x| reads_classified(x, here)),
    }
}

fn mark_plain(b: &mut Bindings, name: &str) {
    b.entry(name.to_string()).or_default().plain = true;
}

fn mark_targets(b: &mut Bindings, target: &Expr) {
    let mut names = Vec::new();
    scope::collect_target_names(target, &mut names);
    for n in names {
        mark_plain(b, &n);
    }
}

fn mark_handlers(b: &mut Bindings, handlers: &[kora_syntax::ast::Handler]) {
    for h in handlers {
        for p in &h.params {
            mark_plain(b, &p.name);
        }
    }
}

fn mark_pattern(b: &mut Bindings, p: &Pattern) {
    match &p.kind {
        PatternKind::Capture(n) => mark_plain(b, n),
        PatternKind::Constructor { args, kwargs, .. } => {
            for a in args {
                mark_pattern(b, a);
            }
            for (_, a) in kwargs {
                mark_pattern(b, a);
            }
        }
        PatternKind::Sequence(ps) | PatternKind::Or(ps) => {
            for a in ps {
                mark_pattern(b, a);
            }
        }
        PatternKind::As(inner, n) => {
            mark_pattern(b, inner);
            mark_plain(b, &n.name);
        }
        PatternKind::Star(n) => mark_plain(b, &n.name),
        PatternKind::Wildcard | PatternKind::Literal(_) | PatternKind::Error => {}
    }
}

#[cfg(test)]
#[path = "label_flow_tests.rs"]
mod tests;
