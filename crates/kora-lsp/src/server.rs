//! The `LanguageServer` implementation: document sync, the capabilities, and each request handed
//! to the file named for it with the document's newest analysis.

use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use kora_syntax::Span;

use crate::analysis::Analysis;
use crate::code_actions::code_actions;
use crate::completion::{self, Site};
use crate::definition::definition;
use crate::document_highlight::document_highlight;
use crate::documents::{path_of, Documents};
use crate::folding_ranges::folding_ranges;
use crate::hover::hover;
use crate::inlay_hints::inlay_hints;
use crate::references::references;
use crate::rename::{prepare_rename, rename};
use crate::signature_help::signature_help;
use crate::symbols::document_symbols;
use crate::text::apply_change;
use crate::workspace_symbols::{file_symbols, kora_files};

/// Completion after a bare `.` checks a copy of the text with this name typed,
/// so the receiver parses as an attribute access rather than a syntax error.
const PLACEHOLDER: &str = "__kora_completion__";

pub struct Backend {
    pub client: Client,
    pub docs: Documents,
    /// To the diagnostics worker; a `Mutex` because `Sender` is not `Sync` on every toolchain.
    pub jobs: Mutex<Sender<PathBuf>>,
    /// The workspace folders, for workspace symbols.
    pub roots: Mutex<Vec<PathBuf>>,
    /// The semantic tokens last sent per document, for deltas.
    pub sent: crate::semantic_tokens::Sent,
}

/// A request refused with a reason the editor shows (a rename to a keyword, say).
fn refused(why: String) -> tower_lsp_server::jsonrpc::Error {
    let mut e = tower_lsp_server::jsonrpc::Error::invalid_params(why.clone());
    e.message = why.into();
    e
}

impl Backend {
    fn schedule(&self, path: PathBuf) {
        if let Ok(tx) = self.jobs.lock() {
            // The worker ends only with the server; nothing to do if it is gone.
            let _ = tx.send(path);
        }
    }

    /// Formatting edits for an open document (only lines `lines` when given).
    fn format(&self, uri: &Uri, lines: Option<(u32, u32)>) -> Result<Option<Vec<TextEdit>>> {
        let path = path_of(uri);
        let Some(text) = self.docs.text(&path) else {
            return Ok(None);
        };
        crate::formatting::format_edits(&path, &text, lines).map_err(|why| {
            let mut e = tower_lsp_server::jsonrpc::Error::internal_error();
            e.message = format!("kora fmt: {why}").into();
            e
        })
    }

    /// The analysis of an open document and the byte offset of `pos` in it.
    fn analysed_at(&self, uri: &Uri, pos: Position) -> Option<(Arc<Analysis>, usize)> {
        let (path, offset) = self.located(uri, pos)?;
        let (_, a) = self.docs.analysis(&path)?;
        Some((a, offset))
    }

    /// The occurrences of `sym` in the workspace files that use its declaring file.
    fn upward(&self, a: &Analysis, sym: &crate::symbol::Symbol) -> crate::importers::Found {
        let roots = self.roots.lock().map(|r| r.clone()).unwrap_or_default();
        crate::importers::upward(&self.docs, &roots, a, sym)
    }

    fn analysed(&self, uri: &Uri) -> Option<Arc<Analysis>> {
        self.docs.analysis(&path_of(uri)).map(|(_, a)| a)
    }

    /// A byte range of the entry file of `a`, from an LSP range.
    fn span_of(a: &Analysis, r: Range) -> Option<Span> {
        let f = a.entry()?;
        let s = f.lines.offset(&f.text, r.start);
        let e = f.lines.offset(&f.text, r.end).max(s);
        Some(Span::new(s as u32, e as u32))
    }

    fn located(&self, uri: &Uri, pos: Position) -> Option<(PathBuf, usize)> {
        let path = path_of(uri);
        let text = self.docs.text(&path)?;
        let lines = crate::text::Lines::new(&text);
        Some((path, lines.offset(&text, pos)))
    }
}

impl LanguageServer for Backend {
    #[allow(deprecated)] // `root_uri` is how older clients (Neovim 0.7) name the workspace.
    async fn initialize(&self, p: InitializeParams) -> Result<InitializeResult> {
        let mut roots: Vec<PathBuf> = p
            .workspace_folders
            .iter()
            .flatten()
            .filter_map(|w| w.uri.to_file_path().map(|p| p.into_owned()))
            .collect();
        if roots.is_empty() {
            roots.extend(
                p.root_uri
                    .and_then(|u| u.to_file_path().map(|p| p.into_owned())),
            );
        }
        if let Ok(mut r) = self.roots.lock() {
            *r = roots;
        }
        Ok(InitializeResult {
            server_info: Some(ServerInfo {
                name: "kora".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
            capabilities: ServerCapabilities {
                text_document_sync: Some(TextDocumentSyncCapability::Options(
                    TextDocumentSyncOptions {
                        open_close: Some(true),
                        change: Some(TextDocumentSyncKind::INCREMENTAL),
                        ..TextDocumentSyncOptions::default()
                    },
                )),
                hover_provider: Some(HoverProviderCapability::Simple(true)),
                definition_provider: Some(OneOf::Left(true)),
                document_symbol_provider: Some(OneOf::Left(true)),
                completion_provider: Some(CompletionOptions {
                    trigger_characters: Some(vec![".".into()]),
                    ..CompletionOptions::default()
                }),
                document_formatting_provider: Some(OneOf::Left(true)),
                document_range_formatting_provider: Some(OneOf::Left(true)),
                references_provider: Some(OneOf::Left(true)),
                rename_provider: Some(OneOf::Right(RenameOptions {
                    prepare_provider: Some(true),
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                })),
                signature_help_provider: Some(SignatureHelpOptions {
                    trigger_characters: Some(vec!["(".into(), ",".into()]),
                    retrigger_characters: None,
                    work_done_progress_options: WorkDoneProgressOptions::default(),
                }),
                semantic_tokens_provider: Some(
                    SemanticTokensServerCapabilities::SemanticTokensOptions(
                        SemanticTokensOptions {
                            legend: crate::semantic_tokens::legend(),
                            full: Some(SemanticTokensFullOptions::Delta { delta: Some(true) }),
                            range: None,
                            work_done_progress_options: WorkDoneProgressOptions::default(),
                        },
                    ),
                ),
                code_action_provider: Some(CodeActionProviderCapability::Options(
                    CodeActionOptions {
                        code_action_kinds: Some(vec![CodeActionKind::QUICKFIX]),
                        ..CodeActionOptions::default()
                    },
                )),
                inlay_hint_provider: Some(OneOf::Left(true)),
                workspace_symbol_provider: Some(OneOf::Left(true)),
                document_highlight_provider: Some(OneOf::Left(true)),
                folding_range_provider: Some(FoldingRangeProviderCapability::Simple(true)),
                ..ServerCapabilities::default()
            },
            ..InitializeResult::default()
        })
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, p: DidOpenTextDocumentParams) {
        let d = p.text_document;
        let path = self.docs.open(d.uri, d.text, d.version);
        self.schedule(path);
    }

    async fn did_change(&self, p: DidChangeTextDocumentParams) {
        let changes = p.content_changes;
        let edited = self
            .docs
            .edit(&p.text_document.uri, p.text_document.version, |t| {
                for c in &changes {
                    apply_change(t, c.range, &c.text);
                }
            });
        if let Some(path) = edited {
            self.schedule(path);
        }
    }

    async fn did_close(&self, p: DidCloseTextDocumentParams) {
        self.docs.close(&p.text_document.uri);
        self.sent.forget(&p.text_document.uri);
        self.client
            .publish_diagnostics(p.text_document.uri, Vec::new(), None)
            .await;
    }

    async fn hover(&self, p: HoverParams) -> Result<Option<Hover>> {
        let at = p.text_document_position_params;
        let Some((path, offset)) = self.located(&at.text_document.uri, at.position) else {
            return Ok(None);
        };
        let Some((_, a)) = self.docs.analysis(&path) else {
            return Ok(None);
        };
        Ok(hover(&a, offset).and_then(|(text, span)| {
            let f = a.entry()?;
            Some(Hover {
                contents: HoverContents::Markup(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: text,
                }),
                range: Some(f.lines.range(&f.text, span)),
            })
        }))
    }

    async fn goto_definition(
        &self,
        p: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let at = p.text_document_position_params;
        let uri = at.text_document.uri;
        let Some((path, offset)) = self.located(&uri, at.position) else {
            return Ok(None);
        };
        let Some((_, a)) = self.docs.analysis(&path) else {
            return Ok(None);
        };
        let Some(place) = definition(&a, offset) else {
            return Ok(None);
        };
        let f = &a.files[place.file];
        let target = if place.file == 0 {
            Some(uri)
        } else {
            Uri::from_file_path(&f.path)
        };
        Ok(target.map(|u| {
            GotoDefinitionResponse::Scalar(Location::new(u, f.lines.range(&f.text, place.span)))
        }))
    }

    async fn document_symbol(
        &self,
        p: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let path = path_of(&p.text_document.uri);
        let Some((_, a)) = self.docs.analysis(&path) else {
            return Ok(None);
        };
        Ok(a.entry()
            .map(|f| DocumentSymbolResponse::Nested(document_symbols(f))))
    }

    async fn formatting(&self, p: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        self.format(&p.text_document.uri, None)
    }

    async fn range_formatting(
        &self,
        p: DocumentRangeFormattingParams,
    ) -> Result<Option<Vec<TextEdit>>> {
        let lines = (p.range.start.line, p.range.end.line);
        self.format(&p.text_document.uri, Some(lines))
    }

    async fn completion(&self, p: CompletionParams) -> Result<Option<CompletionResponse>> {
        let at = p.text_document_position;
        let Some((path, offset)) = self.located(&at.text_document.uri, at.position) else {
            return Ok(None);
        };
        let Some(text) = self.docs.text(&path) else {
            return Ok(None);
        };
        let items = match completion::site(&text, offset) {
            (start, Site::Member { dot }) if start == offset => {
                // Typing `.` leaves a line that does not parse; the analysis from just
                // before it knows the receiver, so only without one is the text re-checked.
                let kept = self
                    .docs
                    .analysis_without(&path, &text, dot, offset)
                    .map(|a| completion::members(&a, dot))
                    .filter(|items| !items.is_empty());
                match kept {
                    Some(items) => items,
                    None => {
                        let mut patched = text;
                        patched.insert_str(offset, PLACEHOLDER);
                        let a = self.docs.analysis_of_text(&path, patched);
                        completion::members(&a, dot)
                    }
                }
            }
            (_, Site::Member { dot }) => match self.docs.analysis(&path) {
                Some((_, a)) => completion::members(&a, dot),
                None => Vec::new(),
            },
            (_, Site::Name) => match self.docs.analysis(&path) {
                Some((_, a)) => completion::names(&a, offset),
                None => Vec::new(),
            },
        };
        Ok(Some(CompletionResponse::Array(items)))
    }

    async fn references(&self, p: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let at = p.text_document_position;
        let Some((a, offset)) = self.analysed_at(&at.text_document.uri, at.position) else {
            return Ok(None);
        };
        let uri = &at.text_document.uri;
        let decl = p.context.include_declaration;
        Ok(references(&a, uri, offset, decl, |s| self.upward(&a, s)))
    }

    async fn document_highlight(
        &self,
        p: DocumentHighlightParams,
    ) -> Result<Option<Vec<DocumentHighlight>>> {
        let at = p.text_document_position_params;
        let Some((a, offset)) = self.analysed_at(&at.text_document.uri, at.position) else {
            return Ok(None);
        };
        Ok(document_highlight(&a, offset))
    }

    async fn prepare_rename(
        &self,
        p: TextDocumentPositionParams,
    ) -> Result<Option<PrepareRenameResponse>> {
        let Some((a, offset)) = self.analysed_at(&p.text_document.uri, p.position) else {
            return Ok(None);
        };
        prepare_rename(&a, offset)
            .map(|r| Some(PrepareRenameResponse::Range(r)))
            .map_err(refused)
    }

    async fn rename(&self, p: RenameParams) -> Result<Option<WorkspaceEdit>> {
        let at = p.text_document_position;
        let Some((a, offset)) = self.analysed_at(&at.text_document.uri, at.position) else {
            return Ok(None);
        };
        rename(&a, &at.text_document.uri, offset, &p.new_name, |s| {
            self.upward(&a, s)
        })
        .map(Some)
        .map_err(refused)
    }

    async fn signature_help(&self, p: SignatureHelpParams) -> Result<Option<SignatureHelp>> {
        let at = p.text_document_position_params;
        let Some((path, offset)) = self.located(&at.text_document.uri, at.position) else {
            return Ok(None);
        };
        let Some((_, a)) = self.docs.analysis(&path) else {
            return Ok(None);
        };
        if let Some(help) = signature_help(&a, offset) {
            return Ok(Some(help));
        }
        // An unclosed call may leave the callee unresolved: check the text with it closed.
        let Some(mut text) = self.docs.text(&path) else {
            return Ok(None);
        };
        if offset > text.len() || !text.is_char_boundary(offset) {
            return Ok(None);
        }
        text.insert(offset, ')');
        Ok(signature_help(
            &self.docs.analysis_of_text(&path, text),
            offset,
        ))
    }

    async fn semantic_tokens_full(
        &self,
        p: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        let uri = p.text_document.uri;
        let Some(a) = self.analysed(&uri) else {
            return Ok(None);
        };
        let data = crate::semantic_tokens::tokens(&a);
        Ok(Some(SemanticTokensResult::Tokens(
            self.sent.full(&uri, data),
        )))
    }

    async fn semantic_tokens_full_delta(
        &self,
        p: SemanticTokensDeltaParams,
    ) -> Result<Option<SemanticTokensFullDeltaResult>> {
        let uri = p.text_document.uri;
        let Some(a) = self.analysed(&uri) else {
            return Ok(None);
        };
        let data = crate::semantic_tokens::tokens(&a);
        Ok(Some(
            match self.sent.delta(&uri, &p.previous_result_id, data.clone()) {
                Some(d) => SemanticTokensFullDeltaResult::TokensDelta(d),
                None => SemanticTokensFullDeltaResult::Tokens(self.sent.full(&uri, data)),
            },
        ))
    }

    async fn code_action(&self, p: CodeActionParams) -> Result<Option<CodeActionResponse>> {
        let uri = p.text_document.uri;
        let Some(a) = self.analysed(&uri) else {
            return Ok(None);
        };
        let Some(range) = Self::span_of(&a, p.range) else {
            return Ok(None);
        };
        Ok(Some(code_actions(&a, &uri, range)))
    }

    async fn inlay_hint(&self, p: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let Some(a) = self.analysed(&p.text_document.uri) else {
            return Ok(None);
        };
        let Some(range) = Self::span_of(&a, p.range) else {
            return Ok(None);
        };
        Ok(Some(inlay_hints(&a, range)))
    }

    async fn symbol(&self, p: WorkspaceSymbolParams) -> Result<Option<WorkspaceSymbolResponse>> {
        let roots = self.roots.lock().map(|r| r.clone()).unwrap_or_default();
        let mut files = Vec::new();
        for r in &roots {
            kora_files(r, &mut files);
        }
        let open = self.docs.open_paths();
        let mut out = Vec::new();
        for path in open
            .iter()
            .chain(files.iter().filter(|f| !open.contains(f)))
        {
            let text = match self.docs.text(path) {
                Some(t) => t,
                None => match std::fs::read_to_string(path) {
                    Ok(t) => t,
                    Err(_) => continue,
                },
            };
            let Some(uri) = self.docs.uri(path).or_else(|| Uri::from_file_path(path)) else {
                continue;
            };
            file_symbols(&uri, &text, &p.query, &mut out);
        }
        Ok(Some(WorkspaceSymbolResponse::Flat(out)))
    }

    async fn folding_range(&self, p: FoldingRangeParams) -> Result<Option<Vec<FoldingRange>>> {
        let Some(a) = self.analysed(&p.text_document.uri) else {
            return Ok(None);
        };
        Ok(a.entry().map(folding_ranges))
    }
}
