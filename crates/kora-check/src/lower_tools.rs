//! Lowering what a tool loop needs: `tools=[...]`, the `on tool_call` / `on tool_result`
//! handlers a statement carries to its `analyze`, and the `with context(...)` fence.

use crate::codes;
use crate::hir::{self, ExprKind as H};
use crate::lower::Lowerer;
use crate::types::Ty;
use kora_syntax::ast::{self, ArgKind, ExprKind as AE, FuncKind};
use kora_syntax::{Diagnostic, Span};

/// The handler events an `analyze` with tools understands, and their parameters.
const EVENTS: &[(&str, &[&str])] = &[
    ("tool_call", &["name", "args"]),
    ("tool_result", &["name", "args", "result"]),
];

impl Lowerer<'_> {
    /// Holds a statement's `on ...` handlers until the `analyze` in it claims them.
    pub(crate) fn stash_handlers(&mut self, hs: &[ast::Handler]) {
        self.pending_handlers = hs.to_vec();
    }

    /// Handlers no `analyze` claimed: the statement makes no model call to watch.
    pub(crate) fn unclaimed_handlers(&mut self) {
        let hs = std::mem::take(&mut self.pending_handlers);
        if let Some(h) = hs.first() {
            self.err(
                Diagnostic::error(
                    codes::HANDLER_WITHOUT_CALL,
                    format!("`on {}` needs an `analyze` call to watch", h.event.name),
                    h.event.span,
                )
                .with_label("this statement makes no model call")
                .with_help("attach the handler to the statement that calls `analyze(...)`"),
            );
        }
    }

    /// `tools=[f, some_agent]`: a list of `tool` and `agent` declarations.
    pub(crate) fn tools_arg(&mut self, e: &ast::Expr) -> hir::Expr {
        let (x, ty) = self.expr(e);
        if let H::List(items) = &x.kind {
            let spans: Vec<Span> = match &e.kind {
                AE::List(es) => es.iter().map(|i| i.span).collect(),
                _ => Vec::new(),
            };
            for (i, item) in items.iter().enumerate() {
                let at = spans.get(i).copied().unwrap_or(e.span);
                let sig = match item.kind {
                    H::Global(g) => self.info().sigs.get(&g).cloned(),
                    H::ModuleGlobal(m, g) => self.ctx.mods[m.0 as usize].sigs.get(&g).cloned(),
                    _ => None,
                };
                if let Some(sig) = sig {
                    if sig.kind == FuncKind::Def {
                        self.err(
                            Diagnostic::error(
                                codes::NOT_A_TOOL,
                                format!("`{}` is a `def`, not a `tool` or an `agent`", sig.name),
                                at,
                            )
                            .with_label("a model may only call declared tools")
                            .with_help(format!(
                                "declare it `tool {}(...) -> T:` with a docstring that tells the model what it does",
                                sig.name
                            )),
                        );
                    }
                }
            }
        } else if !matches!(ty, Ty::List(_) | Ty::Any) {
            self.err(
                Diagnostic::error(
                    codes::NOT_A_TOOL,
                    format!("`tools=` takes a list of tools, found `{ty}`"),
                    e.span,
                )
                .with_label("not a list")
                .with_help("write `tools=[name, other_name]`"),
            );
        }
        x
    }

    /// The handlers of the statement, claimed by the `analyze` being lowered.
    pub(crate) fn claim_handlers(
        &mut self,
        has_tools: bool,
        stream: bool,
        expect: &Ty,
        span: Span,
    ) -> (
        Option<hir::ToolHandler>,
        Option<hir::ToolHandler>,
        Option<hir::ToolHandler>,
    ) {
        if has_tools && stream {
            self.err(
                Diagnostic::error(
                    codes::TOOLS_SHAPE,
                    "a call given `tools=` does not stream",
                    span,
                )
                .with_label("`stream` and `tools=` on one call")
                .with_help("drop `stream`: a tool loop answers once, with a typed result"),
            );
        } else if has_tools && *expect == Ty::Str {
            self.err(
                Diagnostic::error(
                    codes::TOOLS_SHAPE,
                    "a call given `tools=` needs a typed result",
                    span,
                )
                .with_label("the answer here would be plain text")
                .with_help(
                    "annotate the assignment: `r: Result[Answer] = analyze(..., tools=[...])`",
                ),
            );
        }
        let hs = std::mem::take(&mut self.pending_handlers);
        let (mut call, mut result, mut token) = (None, None, None);
        // One `on ...` per call: tokens and tool calls are two different calls' concerns.
        let watches_tokens = hs.iter().any(|h| h.event.name == "token");
        if let (true, Some(other)) = (watches_tokens, hs.iter().find(|h| h.event.name != "token")) {
            self.err(
                Diagnostic::error(
                    codes::BAD_HANDLER,
                    format!("`on token` and `on {}` on one call", other.event.name),
                    other.event.span,
                )
                .with_label("a second kind of handler")
                .with_help("a streamed call takes `on token`; a tool loop takes `on tool_call` / `on tool_result`"),
            );
            return (None, None, None);
        }
        for h in &hs {
            if h.event.name == "token" {
                if token.is_some() {
                    self.err(
                        Diagnostic::error(
                            codes::BAD_HANDLER,
                            "a second `on token` on one call",
                            h.event.span,
                        )
                        .with_label("already handled above")
                        .with_help("merge the two bodies into one handler"),
                    );
                } else if has_tools {
                    self.err(
                        Diagnostic::error(
                            codes::TOOLS_SHAPE,
                            "a call given `tools=` does not stream",
                            h.event.span,
                        )
                        .with_label("`on token` on a tool loop")
                        .with_help(
                            "drop `on token`: a tool loop answers once, with a typed result",
                        ),
                    );
                } else if h.params.len() != 1 {
                    self.err(
                        Diagnostic::error(
                            codes::BAD_HANDLER,
                            format!("`on token` takes 1 parameter, got {}", h.params.len()),
                            h.span,
                        )
                        .with_label("wrong number of names")
                        .with_help("write `on token(piece):`"),
                    );
                } else {
                    token = Some(self.token_handler(h));
                }
                continue;
            }
            let Some((_, params)) = EVENTS.iter().find(|(n, _)| *n == h.event.name) else {
                self.err(
                    Diagnostic::error(
                        codes::BAD_HANDLER,
                        format!("there is no `on {}` event", h.event.name),
                        h.event.span,
                    )
                    .with_label("unknown event")
                    .with_help("a tool loop has `on tool_call(name, args):` and `on tool_result(name, args, result):`"),
                );
                continue;
            };
            if !has_tools {
                self.err(
                    Diagnostic::error(
                        codes::BAD_HANDLER,
                        format!("`on {}` watches tools, but this call is given none", h.event.name),
                        h.event.span,
                    )
                    .with_label("no `tools=` on the call")
                    .with_help("pass the tools the model may call: `analyze(data, \"prompt\", tools=[...])`"),
                );
                continue;
            }
            if h.params.len() != params.len() {
                self.err(
                    Diagnostic::error(
                        codes::BAD_HANDLER,
                        format!(
                            "`on {}` takes {} parameters, got {}",
                            h.event.name,
                            params.len(),
                            h.params.len()
                        ),
                        h.span,
                    )
                    .with_label("wrong number of names")
                    .with_help(format!(
                        "write `on {}({}):`",
                        h.event.name,
                        params.join(", ")
                    )),
                );
                continue;
            }
            let slot = if h.event.name == "tool_call" {
                &mut call
            } else {
                &mut result
            };
            if slot.is_some() {
                self.err(
                    Diagnostic::error(
                        codes::BAD_HANDLER,
                        format!("a second `on {}` on one call", h.event.name),
                        h.event.span,
                    )
                    .with_label("already handled above")
                    .with_help("merge the two bodies into one handler"),
                );
                continue;
            }
            *slot = Some(self.tool_handler(h));
        }
        (call, result, token)
    }

    /// `on token(piece):` runs per streamed piece; it watches the call and cannot end it.
    fn token_handler(&mut self, h: &ast::Handler) -> hir::ToolHandler {
        let params = vec![
            self.store_name(&h.params[0].name, h.params[0].span, Some(Ty::Str))
                .0,
        ];
        let saved = self.token_handler.replace(self.fns.len());
        let saved_ret = self.handler_ret.take();
        let loops = std::mem::take(&mut self.f().loops);
        let body = self.block(&h.body);
        self.f().loops = loops;
        self.handler_ret = saved_ret;
        self.token_handler = saved;
        hir::ToolHandler { params, body }
    }

    pub(crate) fn refuse_token_return(&mut self, span: Span) {
        self.err(
            Diagnostic::error(codes::BAD_HANDLER, "`return` inside `on token`", span)
                .with_label("an `on token` handler cannot end the call or its function")
                .with_help("the handler sees each piece as it arrives; match the call's outcome after it to act on the whole answer"),
        );
    }

    fn tool_handler(&mut self, h: &ast::Handler) -> hir::ToolHandler {
        // name, args, result: the result's type depends on which tool ran.
        let tys = [
            Ty::Str,
            Ty::Dict(Box::new(Ty::Str), Box::new(Ty::Any)),
            Ty::Any,
        ];
        let params = h
            .params
            .iter()
            .zip(tys)
            .map(|(p, t)| self.store_name(&p.name, p.span, Some(t)).0)
            .collect();
        // `return "text"` answers the loop, not the enclosing function; `break` cannot
        // reach a loop outside the handler.
        let ret = if h.event.name == "tool_call" {
            Ty::Str
        } else {
            Ty::Any
        };
        let saved = self.handler_ret.replace((self.fns.len(), ret));
        let loops = std::mem::take(&mut self.f().loops);
        let body = self.block(&h.body);
        self.f().loops = loops;
        self.handler_ret = saved;
        hir::ToolHandler { params, body }
    }

    /// `with context(max_input_tokens=N, reserve_output_tokens=N):`
    pub(crate) fn context_block(
        &mut self,
        args: &[ast::Arg],
        body: &[ast::Stmt],
        span: Span,
    ) -> Option<hir::StmtKind> {
        let (mut max_input, mut reserve) = (None, None);
        for a in args {
            let (name, e) = match &a.kind {
                ArgKind::Keyword(k, e) => (k.name.as_str(), e),
                _ => {
                    self.arg_expr(a);
                    self.bad_context_arg(a.span, "`with context` takes keyword arguments only");
                    continue;
                }
            };
            let (x, t) = self.expr(e);
            if !Ty::Int.accepts(&t) {
                self.mismatch(&Ty::Int, &t, e.span, "a token count");
            }
            match name {
                "max_input_tokens" => max_input = Some(x),
                "reserve_output_tokens" => reserve = Some(x),
                other => self.bad_context_arg(a.span, &format!("`with context` has no `{other}=`")),
            }
        }
        let b = self.block(body);
        let Some(max_input) = max_input else {
            self.bad_context_arg(span, "`with context` needs `max_input_tokens=`");
            return None;
        };
        Some(hir::StmtKind::Context {
            max_input,
            reserve_output: reserve,
            body: b,
        })
    }

    fn bad_context_arg(&mut self, span: Span, msg: &str) {
        self.err(
            Diagnostic::error(codes::BAD_CONTEXT, msg.to_string(), span)
                .with_label("not a context setting")
                .with_help("write `with context(max_input_tokens=N, reserve_output_tokens=N):`"),
        );
    }
}
