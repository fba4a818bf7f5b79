//! Completion: keywords and names in scope, or after a `.` the record's fields, the module's members or the built-in type's methods.

use std::collections::BTreeMap;

use kora_check::facts::Binding;
use kora_check::hir::{ExtId, ModId, BUILTINS};
use kora_check::types::Ty;
use tower_lsp_server::ls_types::{CompletionItem, CompletionItemKind};

use crate::analysis::{Analysis, FileAnalysis};
use crate::walk::def_named_at;

/// Every word the editor may offer as a keyword: Python's, and Kora's own (soft ones included).
/// `first` is left out on purpose: it is a keyword in one position only and a common name.
pub const KEYWORDS: &[&str] = &[
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "break",
    "continue",
    "def",
    "del",
    "elif",
    "else",
    "for",
    "global",
    "if",
    "in",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "return",
    "while",
    "match",
    "case",
    "type",
    "use",
    "tool",
    "agent",
    "analyze",
    "ask_human",
    "classified",
    "declassify",
    "parallel",
    "budget",
    "test",
    "with",
    "context",
    "mock",
    "on",
    "stream",
    "isolated",
    "model",
];

/// Words the lexer reserves but the language rejects (`import`, `from`): recognised only to name the Kora form.
pub const REJECTED: &[&str] = &["import", "from"];

const STR_METHODS: &[&str] = &[
    "capitalize",
    "center",
    "count",
    "endswith",
    "find",
    "format",
    "index",
    "isalnum",
    "isalpha",
    "isdecimal",
    "isdigit",
    "islower",
    "isnumeric",
    "isspace",
    "isupper",
    "join",
    "ljust",
    "lower",
    "lstrip",
    "partition",
    "removeprefix",
    "removesuffix",
    "replace",
    "rfind",
    "rjust",
    "rpartition",
    "rsplit",
    "rstrip",
    "split",
    "splitlines",
    "startswith",
    "strip",
    "swapcase",
    "title",
    "upper",
    "zfill",
];
const LIST_METHODS: &[&str] = &[
    "append", "clear", "copy", "count", "extend", "index", "insert", "pop", "remove", "reverse",
    "sort",
];
const DICT_METHODS: &[&str] = &[
    "clear",
    "copy",
    "get",
    "items",
    "keys",
    "pop",
    "setdefault",
    "update",
    "values",
];
const SET_METHODS: &[&str] = &[
    "add",
    "clear",
    "copy",
    "difference",
    "discard",
    "intersection",
    "isdisjoint",
    "issubset",
    "issuperset",
    "pop",
    "remove",
    "symmetric_difference",
    "union",
    "update",
];

/// What the cursor completes: a member after the `.` at `dot`, or a plain name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Site {
    Member { dot: usize },
    Name,
}

/// Where the identifier being typed starts, and what it completes.
pub fn site(text: &str, offset: usize) -> (usize, Site) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or("");
    let start = before
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
        .last()
        .map(|(i, _)| i)
        .unwrap_or(offset);
    let lead = before[..start].trim_end_matches([' ', '\t']);
    if lead.ends_with('.') && !lead[..lead.len() - 1].ends_with(|c: char| c.is_ascii_digit()) {
        return (
            start,
            Site::Member {
                dot: lead.len() - 1,
            },
        );
    }
    (start, Site::Name)
}

pub fn members(a: &Analysis, dot: usize) -> Vec<CompletionItem> {
    let Some(entry) = a.entry() else {
        return Vec::new();
    };
    let receiver_end = entry.text[..dot].trim_end().len() as u32;
    let module = entry.names.iter().find_map(|n| match n.binding {
        Binding::Module(m) if n.span.end == receiver_end => Some(m),
        _ => None,
    });
    if let Some(m) = module {
        return module_members(a, m);
    }
    if let Some((_, x)) = entry.externals.iter().find(|(s, _)| s.end == receiver_end) {
        return external_members(a, *x);
    }
    let Some(ty) = entry.receiver_type(dot) else {
        return Vec::new();
    };
    let methods = |names: &[&str]| -> Vec<CompletionItem> {
        names
            .iter()
            .map(|n| item(n, CompletionItemKind::METHOD, None))
            .collect()
    };
    match ty {
        Ty::Record(t, _) => a
            .types
            .get(t.0 as usize)
            .map(|r| {
                r.fields
                    .iter()
                    .map(|(n, t)| item(n, CompletionItemKind::FIELD, Some(t.to_string())))
                    .collect()
            })
            .unwrap_or_default(),
        Ty::Str | Ty::Literal(_) => methods(STR_METHODS),
        Ty::List(_) => methods(LIST_METHODS),
        Ty::Dict(..) => methods(DICT_METHODS),
        Ty::Set(_) => methods(SET_METHODS),
        Ty::Tuple(_) | Ty::TupleOf(_) => methods(&["count", "index"]),
        Ty::Float => methods(&["is_integer"]),
        _ => Vec::new(),
    }
}

/// After `alias.` on an MCP server: `tools` and each tool of its cached listing, spelled as a
/// call names it (`_` for `-` and `.`). Nothing is known of a Python module's members.
fn external_members(a: &Analysis, x: ExtId) -> Vec<CompletionItem> {
    let Some((e, tools)) = a.externals.get(x.0 as usize) else {
        return Vec::new();
    };
    if e.kind != "mcp" {
        return Vec::new();
    }
    let mut out = vec![item(
        "tools",
        CompletionItemKind::PROPERTY,
        Some(format!(
            "every tool of `{}`, for `analyze(..., tools=...)`",
            e.name
        )),
    )];
    for t in tools.iter().flatten() {
        let params: Vec<String> = t
            .params
            .iter()
            .map(|(n, ty, required)| {
                if *required {
                    format!("{n}: {ty}")
                } else {
                    format!("{n}: {ty} = ...")
                }
            })
            .collect();
        out.push(item(
            &t.name.replace(['-', '.'], "_"),
            CompletionItemKind::FUNCTION,
            Some(format!("({})", params.join(", "))),
        ));
    }
    out
}

fn module_members(a: &Analysis, m: ModId) -> Vec<CompletionItem> {
    let Some(f) = a.file_of(m) else {
        return Vec::new();
    };
    let mut seen = BTreeMap::new();
    for n in &f.names {
        if let (true, Binding::Global(owner, _)) = (n.write, &n.binding) {
            if *owner == m {
                seen.entry(f.slice(n.span).to_string())
                    .or_insert_with(|| global_item(f, n.span, &n.ty));
            }
        }
    }
    for r in a.types.iter().filter(|r| r.module == m) {
        seen.entry(r.name.clone())
            .or_insert_with(|| item(&r.name, CompletionItemKind::STRUCT, Some("type".into())));
    }
    seen.into_values().collect()
}

pub fn names(a: &Analysis, offset: usize) -> Vec<CompletionItem> {
    let mut seen: BTreeMap<String, CompletionItem> = BTreeMap::new();
    if let Some(entry) = a.entry() {
        let off = offset as u32;
        for n in entry.names.iter().filter(|n| n.write) {
            let visible = match &n.binding {
                Binding::Local { scope, .. } => scope.start <= off && off <= scope.end,
                Binding::Global(m, _) => *m == entry.module,
                _ => false,
            };
            if visible {
                seen.entry(entry.slice(n.span).to_string())
                    .or_insert_with(|| global_item(entry, n.span, &n.ty));
            }
        }
    }
    for r in &a.types {
        seen.entry(r.name.clone())
            .or_insert_with(|| item(&r.name, CompletionItemKind::STRUCT, Some("type".into())));
    }
    for b in BUILTINS {
        seen.entry(b.to_string())
            .or_insert_with(|| item(b, CompletionItemKind::FUNCTION, Some("built-in".into())));
    }
    for k in KEYWORDS {
        seen.entry(k.to_string())
            .or_insert_with(|| item(k, CompletionItemKind::KEYWORD, None));
    }
    seen.into_values().collect()
}

/// A bound name: a function when a `def` is written there, otherwise a variable with its type.
fn global_item(f: &FileAnalysis, span: kora_syntax::Span, ty: &Ty) -> CompletionItem {
    let name = f.slice(span);
    match def_named_at(&f.ast.stmts, span) {
        Some(d) => {
            let params: Vec<&str> = d.params.iter().map(|p| f.slice(p.span).trim()).collect();
            item(
                name,
                CompletionItemKind::FUNCTION,
                Some(format!("({})", params.join(", "))),
            )
        }
        None => item(
            name,
            CompletionItemKind::VARIABLE,
            ty.is_known().then(|| ty.to_string()),
        ),
    }
}

fn item(label: &str, kind: CompletionItemKind, detail: Option<String>) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail,
        ..CompletionItem::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_sites_are_found_after_a_dot_but_not_in_a_number() {
        assert_eq!(site("x = p.am", 8), (6, Site::Member { dot: 5 }));
        assert_eq!(site("x = p.", 6), (6, Site::Member { dot: 5 }));
        assert_eq!(site("x = pri", 7), (4, Site::Name));
        assert_eq!(site("x = 1.", 6), (6, Site::Name));
    }
}
