//! What the checker learned while lowering, kept for the language server: every expression's type and what every name refers to.
//!
//! Recording is off unless `Options::facts` asks for it, so `kora run` and
//! `kora check` pay one `Option` test per expression. The language server
//! answers hover, go-to-definition and completion from these tables instead
//! of resolving names a second time (two resolvers would drift apart).

use kora_syntax::ast::{self, ExprKind as AE};
use kora_syntax::Span;

use crate::hir::{self, BuiltinId, ExprKind as H, ModId, Target, TypeId};
use crate::types::Ty;

/// What a name refers to, as the checker resolved it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Binding {
    /// A slot of one function's frame; `scope` is the span of the function (the whole file for module-level comprehensions).
    Local {
        scope: Span,
        slot: u32,
    },
    /// A top-level name of a module.
    Global(ModId, u32),
    Type(TypeId),
    Builtin(BuiltinId),
    Module(ModId),
}

/// One occurrence of a name: read, or bound (assignment, `def`, parameter, `for` target, pattern).
#[derive(Clone, Debug)]
pub struct NameFact {
    pub span: Span,
    pub binding: Binding,
    pub write: bool,
    pub ty: Ty,
}

/// The facts of one file, in the order the checker lowered it.
#[derive(Debug, Default)]
pub struct Facts {
    /// Every expression lowered, with its inferred type (`any` when unknown).
    pub exprs: Vec<(Span, Ty)>,
    pub names: Vec<NameFact>,
    /// Each `alias` of an `alias.member` on an external module, and the module it names
    /// (completion offers a server's cached tools after it).
    pub externals: Vec<(Span, hir::ExtId)>,
}

impl Facts {
    /// Notes a lowered expression; a name also becomes a name fact.
    pub(crate) fn expr(&mut self, e: &ast::Expr, lowered: &hir::Expr, ty: &Ty, at: (ModId, Span)) {
        self.exprs.push((e.span, ty.clone()));
        if let AE::Name(_) = &e.kind {
            self.name(e.span, lowered, ty, at);
        }
    }

    /// Notes a name read at `span` (a plain name, or the member of `module.member`).
    pub(crate) fn name(&mut self, span: Span, lowered: &hir::Expr, ty: &Ty, at: (ModId, Span)) {
        let (m, scope) = at;
        let binding = match &lowered.kind {
            H::Local(s) | H::Cell(s) => Binding::Local { scope, slot: *s },
            H::Global(g) => Binding::Global(m, *g),
            H::ModuleGlobal(m, g) => Binding::Global(*m, *g),
            H::Type(t) => Binding::Type(*t),
            H::Builtin(b) => Binding::Builtin(*b),
            H::Module(m) => Binding::Module(*m),
            _ => return,
        };
        self.names.push(NameFact {
            span,
            binding,
            write: false,
            ty: ty.clone(),
        });
    }

    /// Notes a name being bound.
    pub(crate) fn store(&mut self, span: Span, target: &Target, ty: &Ty, at: (ModId, Span)) {
        let (m, scope) = at;
        let binding = match target {
            Target::Local(s) | Target::Cell(s) => Binding::Local { scope, slot: *s },
            Target::Global(g) => Binding::Global(m, *g),
            _ => return,
        };
        self.names.push(NameFact {
            span,
            binding,
            write: true,
            ty: ty.clone(),
        });
    }

    /// Notes a name read through a store target: the `x` of `x = x + y`, which the lowering
    /// appends to in place instead of reading it as an expression.
    pub(crate) fn read_through(&mut self, span: Span, target: &Target, ty: &Ty, at: (ModId, Span)) {
        let before = self.names.len();
        self.store(span, target, ty, at);
        if self.names.len() > before {
            if let Some(n) = self.names.last_mut() {
                n.write = false;
            }
        }
        self.exprs.push((span, ty.clone()));
    }
}
