//! Kora's language server (`kora lsp`): diagnostics as you type, hover, definition, references,
//! rename, the outline, completion, signature help, semantic tokens, quick fixes, inlay hints,
//! workspace symbols, highlights, folding and formatting, over stdio.
//!
//! It parses and checks; it never runs a program. The protocol side is
//! async (tower-lsp-server on a single-threaded tokio runtime); checking runs
//! synchronously on a worker thread or in the request handler, and turns the
//! checker's `Rc`-based results into plain data before anything else sees them.

pub mod analysis;
pub mod code_actions;
pub mod completion;
pub mod definition;
pub mod diagnostics;
pub mod document_highlight;
pub mod documents;
pub mod folding_ranges;
pub mod formatting;
pub mod hover;
pub mod importers;
pub mod inlay_hints;
pub mod member_docs;
mod publish;
pub mod references;
pub mod refs;
pub mod rename;
pub mod semantic_tokens;
mod server;
pub mod signature_help;
pub mod symbol;
pub mod symbols;
pub mod text;
pub mod trees;
pub mod walk;
pub mod workspace_symbols;

use std::sync::Mutex;

use tower_lsp_server::{LspService, Server};

pub use publish::QUIET;

/// Serves the language server protocol on stdin/stdout until the client says `exit`.
pub fn serve_stdio() -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread().build()?;
    let handle = rt.handle().clone();
    rt.block_on(async move {
        let (tx, rx) = std::sync::mpsc::channel();
        let docs = documents::Documents::default();
        let worker_docs = docs.clone();
        let (service, socket) = LspService::new(move |client| {
            let worker_client = client.clone();
            let worker_rt = handle.clone();
            // The worker ends when the service (and with it the sender) is dropped.
            std::thread::Builder::new()
                .name("kora-lsp-check".into())
                .spawn(move || publish::run(rx, worker_docs, worker_client, worker_rt))
                .map(|_| ())
                .unwrap_or_else(|e| eprintln!("kora lsp: cannot start the checking thread: {e}"));
            server::Backend {
                client,
                docs,
                jobs: Mutex::new(tx),
                roots: Mutex::new(Vec::new()),
                sent: semantic_tokens::Sent::default(),
            }
        });
        Server::new(tokio::io::stdin(), tokio::io::stdout(), socket)
            .serve(service)
            .await;
    });
    Ok(())
}
