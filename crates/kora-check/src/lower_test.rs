//! Lowering `test "name":` blocks (each a function of its own) and `with mock analyze -> value:`.
//!
//! A test lives at the top level of a file and runs only under `kora test`,
//! so its body is lowered like a `def` with no parameters and collected on the
//! module rather than placed in its top level. A mock is checked here as far
//! as types are known; the runtime validates its value against each call.

use kora_syntax::ast::{self, FuncKind};
use kora_syntax::{Diagnostic, Span};

use crate::codes;
use crate::hir;
use crate::lower::Lowerer;
use crate::types::Ty;

impl Lowerer<'_> {
    pub(crate) fn test_block(&mut self, name: &str, body: &[ast::Stmt], span: Span) {
        let header = self.header(span);
        let at_top = self.fns.len() == 1 && self.f().is_module && self.column(span) == 0;
        if !at_top {
            self.err(
                Diagnostic::error(
                    codes::TEST_NOT_TOP_LEVEL,
                    format!("test \"{name}\" is not at the top level of its file"),
                    header,
                )
                .with_label("nested inside another block")
                .with_help("move the `test` block to column 0 of the file: tests are not run conditionally or from a function"),
            );
        }
        if self.tests.iter().any(|(n, _)| n == name) {
            self.err(
                Diagnostic::error(
                    codes::DUPLICATE_TEST,
                    format!("two tests in this file are named \"{name}\""),
                    header,
                )
                .with_label("second test with this name")
                .with_help("give each test a distinct name: `kora test --filter` and reports select tests by name"),
            );
        }
        self.in_test += 1;
        let f = self.lower_function(
            span,
            &format!("test \"{name}\""),
            FuncKind::Def,
            &[],
            Ty::Any,
            None,
            false,
            |l| l.block(body),
        );
        self.in_test -= 1;
        if at_top {
            self.tests.push((name.to_string(), f));
        }
    }

    pub(crate) fn mock(
        &mut self,
        target: &ast::Ident,
        value: &ast::Expr,
        body: &[ast::Stmt],
        span: Span,
    ) -> Option<hir::StmtKind> {
        let header = self.header(span);
        if self.in_test == 0 {
            self.err(
                Diagnostic::error(
                    codes::MOCK_OUTSIDE_TEST,
                    "`with mock` outside a `test` block",
                    header,
                )
                .with_label("a mock belongs to a test")
                .with_help("put this inside `test \"name\":`; a program that runs for real calls its model"),
            );
        }
        if target.name.contains('.') {
            let (v, _) = self.expr(value);
            let b = self.block(body);
            return self.external_mock(target, v, b);
        }
        if target.name != "analyze" {
            self.err(
                Diagnostic::error(
                    codes::MOCK_TARGET,
                    format!("`{}` cannot be mocked", target.name),
                    target.span,
                )
                .with_label("only model calls are mocked")
                .with_help("write `with mock analyze -> Ok(value):`"),
            );
        }
        let (v, ty) = self.expr(value);
        if !matches!(ty, Ty::Outcome(..) | Ty::Any) {
            self.err(
                Diagnostic::error(
                    codes::MOCK_NOT_OUTCOME,
                    format!("a mock answers with an outcome, not a `{ty}`"),
                    value.span,
                )
                .with_label(format!("this is `{ty}`"))
                .with_help("wrap the answer: `Ok(value)`, or `Uncertain(\"why\")` / `Failed(\"why\")` to test the other arms"),
            );
        }
        let b = self.block(body);
        Some(hir::StmtKind::Mock(v, b))
    }

    /// The column (in bytes) where a statement starts: 0 for a file's top level.
    fn column(&self, span: Span) -> usize {
        let start = (span.start as usize).min(self.source.len());
        let line_start = self.source[..start].rfind('\n').map_or(0, |i| i + 1);
        start - line_start
    }
}
