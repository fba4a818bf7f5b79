//! The references the checker keeps no facts for, found by one walk of a file's tree: type names
//! in annotations and patterns, `x.member` accesses, keyword arguments and calls.

use kora_syntax::ast::{
    Arg, ArgKind, Expr, ExprKind, Pattern, PatternKind, Stmt, StmtKind, TypeExpr, TypeExprKind,
    UseTarget,
};
use kora_syntax::visit::{walk_expr, walk_pattern, walk_stmt, walk_type_expr, Visitor};
use kora_syntax::Span;

/// A type name as written: `Money`, or `lib.Point` (`qualifier` is `lib`); `span` covers the name only.
#[derive(Clone, Debug)]
pub struct TypeRef {
    pub qualifier: Option<String>,
    pub name: String,
    pub span: Span,
}

/// `receiver.member`: the receiver's span (its type is in the checker's facts) and the member.
#[derive(Clone, Debug)]
pub struct MemberRef {
    pub receiver: Span,
    pub name: String,
    pub span: Span,
}

/// `name=` in a call or a constructor pattern; `callee` is the span of the callee's last name.
#[derive(Clone, Debug)]
pub struct KeywordRef {
    pub callee: Span,
    pub name: String,
    pub span: Span,
}

/// A call: the span of the callee's last name, the whole call, and its arguments.
#[derive(Clone, Debug)]
pub struct CallRef<'a> {
    pub callee: Span,
    /// For `x.m(...)`, the receiver `x`.
    pub receiver: Option<Span>,
    pub span: Span,
    pub args: &'a [Arg],
}

#[derive(Default)]
pub struct FileRefs<'a> {
    pub types: Vec<TypeRef>,
    pub members: Vec<MemberRef>,
    pub keywords: Vec<KeywordRef>,
    pub calls: Vec<CallRef<'a>>,
    /// `use "./x.ko" as alias`, `use pkg[.module] [as alias]`: the name bound and the span of
    /// the path or the dotted name (the key of the file's uses).
    pub aliases: Vec<(String, Span)>,
    text: &'a str,
}

/// Everything of the above in `stmts` (the text is needed to place a name inside its annotation).
pub fn collect<'a>(text: &'a str, stmts: &'a [Stmt]) -> FileRefs<'a> {
    let mut r = FileRefs {
        text,
        ..FileRefs::default()
    };
    r.visit_block(stmts);
    r
}

/// The span of the last name of a callee: `f` in `f(...)`, `m` in `x.m(...)`.
fn callee_name(e: &Expr) -> Option<(Span, Option<Span>)> {
    match &e.kind {
        ExprKind::Name(_) => Some((e.span, None)),
        ExprKind::Attr(recv, id) => Some((id.span, Some(recv.span))),
        _ => None,
    }
}

impl<'a> Visitor<'a> for FileRefs<'a> {
    fn visit_stmt(&mut self, s: &'a Stmt) {
        if let StmtKind::Use(u) = &s.kind {
            match (&u.alias, &u.target) {
                (Some(alias), UseTarget::File { span, .. }) => {
                    self.aliases.push((alias.name.clone(), *span));
                }
                // `use pkg` binds `pkg`, `use pkg.module` binds `module`; a standard module has
                // no entry in the file's uses, so it resolves to nothing here.
                (alias, UseTarget::Std(n)) => {
                    let bound = match alias {
                        Some(a) => a.name.as_str(),
                        None => n.name.rsplit('.').next().unwrap_or(&n.name),
                    };
                    self.aliases.push((bound.to_string(), n.span));
                }
                _ => {}
            }
        }
        walk_stmt(self, s)
    }

    fn visit_type_expr(&mut self, t: &'a TypeExpr) {
        if let TypeExprKind::Named { name, .. } = &t.kind {
            let start = t.span.start as usize;
            let written = self.text.get(start..start + name.len()) == Some(name.as_str());
            if written {
                let (qualifier, last) = match name.rsplit_once('.') {
                    Some((q, n)) => (Some(q.to_string()), n),
                    None => (None, name.as_str()),
                };
                let at = (start + name.len() - last.len()) as u32;
                self.types.push(TypeRef {
                    qualifier,
                    name: last.to_string(),
                    span: Span::new(at, at + last.len() as u32),
                });
            }
        }
        walk_type_expr(self, t)
    }

    fn visit_pattern(&mut self, p: &'a Pattern) {
        if let PatternKind::Constructor { name, kwargs, .. } = &p.kind {
            let (qualifier, last) = match name.name.rsplit_once('.') {
                Some((q, n)) => (Some(q.to_string()), n),
                None => (None, name.name.as_str()),
            };
            let at = name.span.end.saturating_sub(last.len() as u32);
            let span = Span::new(at, name.span.end);
            self.types.push(TypeRef {
                qualifier,
                name: last.to_string(),
                span,
            });
            for (k, _) in kwargs {
                self.keywords.push(KeywordRef {
                    callee: span,
                    name: k.name.clone(),
                    span: k.span,
                });
            }
        }
        walk_pattern(self, p)
    }

    fn visit_expr(&mut self, e: &'a Expr) {
        match &e.kind {
            ExprKind::Attr(recv, id) => self.members.push(MemberRef {
                receiver: recv.span,
                name: id.name.clone(),
                span: id.span,
            }),
            ExprKind::Call { func, args } => {
                if let Some((callee, receiver)) = callee_name(func) {
                    for a in args {
                        if let ArgKind::Keyword(k, _) = &a.kind {
                            self.keywords.push(KeywordRef {
                                callee,
                                name: k.name.clone(),
                                span: k.span,
                            });
                        }
                    }
                    self.calls.push(CallRef {
                        callee,
                        receiver,
                        span: e.span,
                        args,
                    });
                }
            }
            _ => {}
        }
        walk_expr(self, e)
    }
}
