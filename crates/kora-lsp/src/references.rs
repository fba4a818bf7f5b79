//! Find all references: every place that names the symbol under the cursor, in the document and
//! the modules it uses (the declaration included when the client asks for it).

use tower_lsp_server::ls_types::{Location, Uri};

use crate::analysis::Analysis;
use crate::importers::Found;
use crate::symbol::{occurrences, symbol_at, Occurrence, Symbol};

/// The URI of one of the analysis's files: the document's own for the entry.
pub fn file_uri(a: &Analysis, entry: &Uri, file: usize) -> Option<Uri> {
    if file == 0 {
        return Some(entry.clone());
    }
    Uri::from_file_path(&a.files.get(file)?.path)
}

pub fn location(a: &Analysis, entry: &Uri, o: &Occurrence) -> Option<Location> {
    let f = a.files.get(o.file)?;
    Some(Location::new(
        file_uri(a, entry, o.file)?,
        f.lines.range(&f.text, o.span),
    ))
}

pub fn references(
    a: &Analysis,
    uri: &Uri,
    offset: usize,
    include_declaration: bool,
    upward: impl Fn(&Symbol) -> Found,
) -> Option<Vec<Location>> {
    let (sym, _) = symbol_at(a, offset)?;
    let mut out: Vec<Location> = occurrences(a, &sym)
        .iter()
        .filter(|o| include_declaration || !o.write)
        .filter_map(|o| location(a, uri, o))
        .collect();
    for (entry, other, found) in upward(&sym) {
        for o in found.iter().filter(|o| include_declaration || !o.write) {
            match location(&other, &entry, o) {
                Some(l) if !out.contains(&l) => out.push(l),
                _ => {}
            }
        }
    }
    Some(out)
}
