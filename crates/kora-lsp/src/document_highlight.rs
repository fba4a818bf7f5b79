//! Document highlight: the occurrences of the symbol under the cursor in this document, bindings
//! marked as writes.

use tower_lsp_server::ls_types::{DocumentHighlight, DocumentHighlightKind};

use crate::analysis::Analysis;
use crate::symbol::{occurrences, symbol_at};

pub fn document_highlight(a: &Analysis, offset: usize) -> Option<Vec<DocumentHighlight>> {
    let entry = a.entry()?;
    let (sym, _) = symbol_at(a, offset)?;
    Some(
        occurrences(a, &sym)
            .into_iter()
            .filter(|o| o.file == 0)
            .map(|o| DocumentHighlight {
                range: entry.lines.range(&entry.text, o.span),
                kind: Some(if o.write {
                    DocumentHighlightKind::WRITE
                } else {
                    DocumentHighlightKind::READ
                }),
            })
            .collect(),
    )
}
