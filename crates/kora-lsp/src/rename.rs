//! Rename (and prepareRename): every occurrence of a variable, function, record type or field is
//! renamed at once, in the document and the modules it uses; a new name that is not an
//! identifier, is a keyword, or a built-in's name is refused with the reason.

use std::collections::HashMap;

use tower_lsp_server::ls_types::{Range, TextEdit, Uri, WorkspaceEdit};

use crate::analysis::Analysis;
use crate::completion::KEYWORDS;
use crate::importers::Found;
use crate::references::file_uri;
use crate::symbol::{occurrences, symbol_at, Symbol};

/// The range of the name to rename, or why it cannot be renamed.
pub fn prepare_rename(a: &Analysis, offset: usize) -> Result<Range, String> {
    let entry = a.entry().ok_or("the document could not be read")?;
    match symbol_at(a, offset) {
        Some((_, span)) => Ok(entry.lines.range(&entry.text, span)),
        None => Err("there is no variable, function, type or field here to rename".into()),
    }
}

/// Why `name` cannot be a new name, if it cannot.
pub fn refuse_name(name: &str) -> Option<String> {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c == '_' || c.is_alphabetic());
    if !first_ok || !chars.all(|c| c == '_' || c.is_alphanumeric()) {
        return Some(format!(
            "`{name}` is not a name: use letters, digits and `_`, not starting with a digit"
        ));
    }
    if KEYWORDS.contains(&name) || crate::completion::REJECTED.contains(&name) {
        return Some(format!("`{name}` is a keyword"));
    }
    if kora_check::hir::BUILTINS.contains(&name) {
        return Some(format!(
            "`{name}` is a built-in; renaming to it would hide it"
        ));
    }
    None
}

pub fn rename(
    a: &Analysis,
    uri: &Uri,
    offset: usize,
    new_name: &str,
    upward: impl Fn(&Symbol) -> Found,
) -> Result<WorkspaceEdit, String> {
    if let Some(why) = refuse_name(new_name) {
        return Err(why);
    }
    let (sym, _) = symbol_at(a, offset)
        .ok_or("there is no variable, function, type or field here to rename")?;
    if let Symbol::Type(t) = &sym {
        if a.types.get(*t).is_some_and(|r| r.name.contains('.')) {
            return Err("a standard-library type cannot be renamed".into());
        }
    }
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    let mut add = |a: &Analysis, entry: &Uri, o: &crate::symbol::Occurrence| {
        let (Some(f), Some(u)) = (a.files.get(o.file), file_uri(a, entry, o.file)) else {
            return;
        };
        let edit = TextEdit {
            range: f.lines.range(&f.text, o.span),
            new_text: new_name.to_string(),
        };
        let edits = changes.entry(u).or_default();
        // A file reached by two analyses is found twice; one edit per place.
        if !edits.contains(&edit) {
            edits.push(edit);
        }
    };
    for o in occurrences(a, &sym) {
        add(a, uri, &o);
    }
    for (entry, other, found) in upward(&sym) {
        for o in &found {
            add(&other, &entry, o);
        }
    }
    Ok(WorkspaceEdit {
        changes: Some(changes),
        ..WorkspaceEdit::default()
    })
}
