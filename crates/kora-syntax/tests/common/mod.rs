//! Test support: a compact s-expression printer for trees, so tests can assert shapes in one line.

#![allow(dead_code)]

use kora_syntax::ast::*;
use kora_syntax::{Diagnostic, Parsed};

pub fn parse_ok(src: &str) -> Parsed {
    let p = kora_syntax::parse(src);
    assert!(
        p.diagnostics.is_empty(),
        "unexpected diagnostics for:\n{src}\n{}",
        p.diagnostics
            .iter()
            .map(|d| format!("{} {} at {:?}", d.code, d.message, d.span()))
            .collect::<Vec<_>>()
            .join("\n")
    );
    p
}

/// The module as one s-expression per statement, joined by newlines.
pub fn sexp(src: &str) -> String {
    let p = parse_ok(src);
    p.module
        .stmts
        .iter()
        .map(stmt)
        .collect::<Vec<_>>()
        .join("\n")
}

/// One expression statement's expression.
pub fn ex(src: &str) -> String {
    let p = parse_ok(src);
    match p.module.stmts.first().map(|s| &s.kind) {
        Some(StmtKind::Expr { expr: e, .. }) => expr(e),
        other => panic!("not an expression statement: {other:?}"),
    }
}

pub fn codes(d: &[Diagnostic]) -> Vec<&'static str> {
    d.iter().map(|d| d.code).collect()
}

fn list<T>(items: &[T], f: impl Fn(&T) -> String) -> String {
    items.iter().map(f).collect::<Vec<_>>().join(" ")
}

fn block(b: &Block) -> String {
    format!("[{}]", list(b, stmt))
}

fn opt_expr(e: &Option<Expr>) -> String {
    e.as_ref().map(expr).unwrap_or_else(|| "_".into())
}

fn handlers(hs: &[Handler]) -> String {
    if hs.is_empty() {
        return String::new();
    }
    format!(
        " {}",
        list(hs, |h| format!(
            "(on {} ({}) {})",
            h.event.name,
            list(&h.params, |p| p.name.clone()),
            block(&h.body)
        ))
    )
}

pub fn stmt(s: &Stmt) -> String {
    match &s.kind {
        StmtKind::Expr {
            expr: e,
            handlers: h,
        } => format!("{}{}", expr(e), handlers(h)),
        StmtKind::Assign {
            targets,
            value,
            handlers: h,
        } => format!(
            "(= [{}] {}{})",
            list(targets, expr),
            expr(value),
            handlers(h)
        ),
        StmtKind::AnnAssign {
            target,
            ty: t,
            value,
            handlers: h,
            else_,
        } => {
            let els = match else_ {
                None => String::new(),
                Some(c) => match &c.binds {
                    Some((a, b)) => format!(" (else ({} {}) {})", a.name, b.name, block(&c.body)),
                    None => format!(" (else {})", block(&c.body)),
                },
            };
            format!(
                "(: {} {} {}{}{})",
                target.name,
                ty(t),
                opt_expr(value),
                handlers(h),
                els
            )
        }
        StmtKind::AugAssign { target, op, value } => {
            format!("({}= {} {})", op.symbol(), expr(target), expr(value))
        }
        StmtKind::If { branches, orelse } => {
            let mut s = format!(
                "(if {})",
                list(branches, |(c, b)| format!("{} {}", expr(c), block(b)))
            );
            if let Some(o) = orelse {
                s.insert_str(s.len() - 1, &format!(" else {}", block(o)));
            }
            s
        }
        StmtKind::While { cond, body } => format!("(while {} {})", expr(cond), block(body)),
        StmtKind::For {
            target,
            iter,
            body,
            parallel,
            into,
        } => {
            let kw = match parallel {
                None => "for",
                Some(ParallelMode::Collect) => "parallel-for",
                Some(ParallelMode::First) => "parallel-for-first",
            };
            let looped = format!("({kw} {} {} {})", expr(target), expr(iter), block(body));
            match into {
                None => looped,
                Some(i) => match &i.ty {
                    None => format!("(= {} {looped})", expr(&i.target)),
                    Some(_) => format!("(= {}: <type> {looped})", expr(&i.target)),
                },
            }
        }
        StmtKind::Break(e) => format!("(break {})", opt_expr(e)),
        StmtKind::Continue => "continue".into(),
        StmtKind::Pass => "pass".into(),
        StmtKind::Return(e) => format!("(return {})", opt_expr(e)),
        StmtKind::Def(f) => {
            let kind = match f.kind {
                FuncKind::Def => "def",
                FuncKind::Tool => "tool",
                FuncKind::Agent => "agent",
            };
            format!(
                "({kind}{}{} {} ({}) {} {})",
                if f.isolated { "-isolated" } else { "" },
                f.model
                    .as_ref()
                    .map(|m| format!("-model:{}", expr(m)))
                    .unwrap_or_default(),
                f.name.name,
                list(&f.params, param),
                f.ret.as_ref().map(ty).unwrap_or_else(|| "_".into()),
                block(&f.body)
            )
        }
        StmtKind::Record(r) => format!(
            "(type {} {})",
            r.name.name,
            list(&r.fields, |f| format!(
                "({} {} {})",
                f.name.name,
                ty(&f.ty),
                opt_expr(&f.default)
            ))
        ),
        StmtKind::TypeAlias { name, ty: t } => format!("(type {} = {})", name.name, ty(t)),
        StmtKind::Match { subject, arms } => format!(
            "(match {} {})",
            expr(subject),
            list(arms, |a| format!(
                "(case {}{} {})",
                pat(&a.pattern),
                a.guard
                    .as_ref()
                    .map(|g| format!(" if {}", expr(g)))
                    .unwrap_or_default(),
                block(&a.body)
            ))
        ),
        StmtKind::Use(u) => {
            let t = match &u.target {
                UseTarget::Std(i) => i.name.clone(),
                UseTarget::File { path, .. } => format!("{path:?}"),
                UseTarget::Provider { kind, name } => format!("{} {}", kind.name, name.name),
            };
            match &u.alias {
                Some(a) => format!("(use {t} as {})", a.name),
                None => format!("(use {t})"),
            }
        }
        StmtKind::Nonlocal(ns) => format!("(nonlocal {})", list(ns, |n| n.name.clone())),
        StmtKind::Global(ns) => format!("(global {})", list(ns, |n| n.name.clone())),
        StmtKind::Assert { cond, msg } => format!("(assert {} {})", expr(cond), opt_expr(msg)),
        StmtKind::Del(items) => format!("(del {})", list(items, expr)),
        StmtKind::Budget { args: a, body } => {
            format!("(budget ({}) {})", list(a, arg), block(body))
        }
        StmtKind::Context { args: a, body } => {
            format!("(context ({}) {})", list(a, arg), block(body))
        }
        StmtKind::ModelBlock { args: a, body } => {
            format!("(model ({}) {})", list(a, arg), block(body))
        }
        StmtKind::Mock {
            target,
            value,
            body,
        } => {
            format!("(mock {} {} {})", target.name, expr(value), block(body))
        }
        StmtKind::Declassify { value, sink, body } => {
            format!("(declassify {} {} {})", expr(value), sink.name, block(body))
        }
        StmtKind::Test { name, body } => format!("(test {name:?} {})", block(body)),
        StmtKind::PythonImport { module, names } if names.is_empty() => {
            format!("(import {module})")
        }
        StmtKind::PythonImport { module, names } => {
            format!("(from {module} import {})", list(names, |n| n.name.clone()))
        }
        StmtKind::Error => "ERROR".into(),
    }
}

fn param(p: &Param) -> String {
    let mut s = format!("{}{}", if p.star { "*" } else { "" }, p.name.name);
    if let Some(t) = &p.ty {
        s.push_str(&format!(":{}", ty(t)));
    }
    if let Some(d) = &p.default {
        s.push_str(&format!("={}", expr(d)));
    }
    s
}

pub fn ty(t: &TypeExpr) -> String {
    match &t.kind {
        TypeExprKind::Named { name, args } if args.is_empty() => name.clone(),
        TypeExprKind::Named { name, args } => format!("{name}[{}]", list(args, ty)),
        TypeExprKind::Literal(s) => format!("{s:?}"),
        TypeExprKind::None => "None".into(),
        TypeExprKind::Union(ms) => format!("(| {})", list(ms, ty)),
        TypeExprKind::Error => "ERROR".into(),
    }
}

pub fn pat(p: &Pattern) -> String {
    match &p.kind {
        PatternKind::Wildcard => "_".into(),
        PatternKind::Capture(n) => n.clone(),
        PatternKind::Literal(e) => expr(e),
        PatternKind::Constructor { name, args, kwargs } => {
            let mut parts: Vec<String> = args.iter().map(pat).collect();
            parts.extend(kwargs.iter().map(|(k, v)| format!("{}={}", k.name, pat(v))));
            format!("{}({})", name.name, parts.join(" "))
        }
        PatternKind::Sequence(ps) => format!("(seq {})", list(ps, pat)),
        PatternKind::Star(n) => format!("*{}", n.name),
        PatternKind::Or(ps) => format!("(| {})", list(ps, pat)),
        PatternKind::As(p, n) => format!("(as {} {})", pat(p), n.name),
        PatternKind::Error => "ERROR".into(),
    }
}

fn arg(a: &Arg) -> String {
    match &a.kind {
        ArgKind::Positional(e) => expr(e),
        ArgKind::Keyword(k, e) => format!("{}={}", k.name, expr(e)),
        ArgKind::Star(e) => format!("*{}", expr(e)),
        ArgKind::DoubleStar(e) => format!("**{}", expr(e)),
    }
}

fn fparts(parts: &[FStringPart]) -> String {
    list(parts, |p| match p {
        FStringPart::Lit(s) => format!("{s:?}"),
        FStringPart::Expr {
            expr: e,
            conv,
            spec,
            debug_text,
        } => {
            let mut s = format!("{{{}", expr(e));
            if let Some(d) = debug_text {
                s.push_str(&format!(" dbg={d:?}"));
            }
            if let Some(c) = conv {
                s.push_str(&format!(" !{c}"));
            }
            if !spec.is_empty() {
                s.push_str(&format!(" :{}", fparts(spec)));
            }
            s.push('}');
            s
        }
    })
}

fn clause(c: &CompClause) -> String {
    let mut s = format!("for {} in {}", expr(&c.target), expr(&c.iter));
    for cond in &c.conds {
        s.push_str(&format!(" if {}", expr(cond)));
    }
    s
}

pub fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::BigInt(v) => v.clone(),
        ExprKind::Float(v) => format!("{v:?}"),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Bytes(b) => format!("(bytes {b:?})"),
        ExprKind::FString(parts) => format!("(f {})", fparts(parts)),
        ExprKind::Bool(b) => if *b { "True" } else { "False" }.into(),
        ExprKind::None => "None".into(),
        ExprKind::Name(n) => n.clone(),
        ExprKind::List(xs) => format!("[{}]", list(xs, expr)),
        ExprKind::Tuple(xs) => format!("(tuple {})", list(xs, expr)),
        ExprKind::Set(xs) => format!("(set {})", list(xs, expr)),
        ExprKind::Dict(kvs) => format!(
            "(dict {})",
            list(kvs, |(k, v)| format!("{}:{}", expr(k), expr(v)))
        ),
        ExprKind::Comp {
            kind,
            elt,
            value,
            clauses,
        } => {
            let k = match kind {
                CompKind::List => "listcomp",
                CompKind::Set => "setcomp",
                CompKind::Dict => "dictcomp",
                CompKind::Generator => "genexp",
            };
            let v = value
                .as_ref()
                .map(|v| format!(":{}", expr(v)))
                .unwrap_or_default();
            format!("({k} {}{v} {})", expr(elt), list(clauses, clause))
        }
        ExprKind::Unary(op, x) => {
            let o = match op {
                UnaryOp::Neg => "-",
                UnaryOp::Pos => "+",
                UnaryOp::Not => "not",
                UnaryOp::Invert => "~",
            };
            format!("({o} {})", expr(x))
        }
        ExprKind::Binary(op, a, b) => format!("({} {} {})", op.symbol(), expr(a), expr(b)),
        ExprKind::BoolOp(op, a, b) => {
            let o = match op {
                BoolOp::And => "and",
                BoolOp::Or => "or",
            };
            format!("({o} {} {})", expr(a), expr(b))
        }
        ExprKind::Compare(first, rest) => format!(
            "(cmp {} {})",
            expr(first),
            list(rest, |(op, x)| format!("{} {}", op.symbol(), expr(x)))
        ),
        ExprKind::Call { func, args } => format!(
            "(call {}{}{})",
            expr(func),
            if args.is_empty() { "" } else { " " },
            list(args, arg)
        ),
        ExprKind::Attr(x, n) => format!("(. {} {})", expr(x), n.name),
        ExprKind::Index(x, i) => format!("(index {} {})", expr(x), expr(i)),
        ExprKind::Slice {
            value,
            lo,
            hi,
            step,
        } => {
            let o =
                |x: &Option<Box<Expr>>| x.as_ref().map(|x| expr(x)).unwrap_or_else(|| "_".into());
            format!("(slice {} {} {} {})", expr(value), o(lo), o(hi), o(step))
        }
        ExprKind::Lambda { params, body } => {
            format!("(lambda ({}) {})", list(params, param), expr(body))
        }
        ExprKind::IfExp { cond, then, orelse } => {
            format!("(ifexp {} {} {})", expr(cond), expr(then), expr(orelse))
        }
        ExprKind::Analyze { args: a, stream } => {
            format!(
                "(analyze{} {})",
                if *stream { "-stream" } else { "" },
                list(a, arg)
            )
        }
        ExprKind::AskHuman(a) => format!("(ask_human {})", list(a, arg)),
        ExprKind::Classified(x) => format!("(classified {})", expr(x)),
        ExprKind::Starred(x) => format!("(* {})", expr(x)),
        ExprKind::Error => "ERROR".into(),
    }
}
