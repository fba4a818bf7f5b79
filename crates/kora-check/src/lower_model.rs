//! Lowering model choice: `with model("name"):` blocks and an agent's `model("name")`.
//!
//! Both name a `[models]` entry, never a vendor's model: the record's rule for
//! `analyze(..., model=...)` holds at every level. The choice order is call
//! site > the innermost enclosing block or agent (whichever was entered last
//! while the program runs) > `kora run --model` > `kora.toml`'s default.

use crate::codes;
use crate::hir;
use crate::lower::Lowerer;
use crate::types::Ty;
use kora_syntax::ast::{self, ArgKind, ExprKind as AE, FuncKind};
use kora_syntax::{Diagnostic, Span};

impl Lowerer<'_> {
    /// `with model("name"):`: one positional `str`, the name of a `[models]` entry.
    pub(crate) fn model_block(
        &mut self,
        args: &[ast::Arg],
        body: &[ast::Stmt],
        span: Span,
    ) -> Option<hir::StmtKind> {
        let mut name = None;
        for a in args {
            match &a.kind {
                ArgKind::Positional(e) if name.is_none() => {
                    let (x, t) = self.expr(e);
                    if !Ty::Str.accepts(&t) {
                        self.mismatch(&Ty::Str, &t, e.span, "the name of a `[models]` entry");
                    }
                    name = Some(x);
                }
                _ => {
                    self.arg_expr(a);
                    self.bad_model_choice(a.span, "`with model(...)` takes one name");
                }
            }
        }
        let body = self.block(body);
        let Some(name) = name else {
            self.bad_model_choice(
                span,
                "`with model(...)` needs the name of a `[models]` entry",
            );
            return None;
        };
        Some(hir::StmtKind::ModelBlock { name, body })
    }

    /// `agent f() -> T: model("name")`: a string literal, on an agent only.
    pub(crate) fn agent_model(&mut self, def: &ast::FuncDef) -> Option<String> {
        let e = def.model.as_ref()?;
        if def.kind != FuncKind::Agent {
            self.bad_model_choice(
                e.span,
                "only an `agent` chooses its model; a `def` or `tool` uses its caller's",
            );
            return None;
        }
        match &e.kind {
            AE::Str(s) => Some(s.clone()),
            _ => {
                self.bad_model_choice(
                    e.span,
                    "an agent's model is named by a string literal: `model(\"vision\")`",
                );
                None
            }
        }
    }

    fn bad_model_choice(&mut self, span: Span, msg: &str) {
        self.err(
            Diagnostic::error(codes::BAD_MODEL_CHOICE, msg.to_string(), span)
                .with_label("not a model choice")
                .with_help(
                    "name an entry of `[models]` in kora.toml: `with model(\"vision\"):` or `agent f() -> T: model(\"vision\")`",
                ),
        );
    }
}
