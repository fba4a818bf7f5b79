//! The `LanguageServer` implementation: document sync, and each request answered from the document's newest analysis.

use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::sync::Mutex;

use tower_lsp_server::jsonrpc::Result;
use tower_lsp_server::ls_types::*;
use tower_lsp_server::{Client, LanguageServer};

use crate::completion::{self, Site};
use crate::definition::definition;
use crate::documents::{path_of, Documents};
use crate::hover::hover;
use crate::symbols::document_symbols;
use crate::text::apply_change;

/// Completion after a bare `.` checks a copy of the text with this name typed,
/// so the receiver parses as an attribute access rather than a syntax error.
const PLACEHOLDER: &str = "__kora_completion__";

pub struct Backend {
    pub client: Client,
    pub docs: Documents,
    /// To the diagnostics worker; a `Mutex` because `Sender` is not `Sync` on every toolchain.
    pub jobs: Mutex<Sender<PathBuf>>,
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

    fn located(&self, uri: &Uri, pos: Position) -> Option<(PathBuf, usize)> {
        let path = path_of(uri);
        let text = self.docs.text(&path)?;
        let lines = crate::text::Lines::new(&text);
        Some((path, lines.offset(&text, pos)))
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
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
}
