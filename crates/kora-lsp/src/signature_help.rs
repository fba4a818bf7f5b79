//! Signature help: inside a call's parentheses, the callee's signature (a `def`, a record's
//! constructor, a method of a built-in type, a standard-library member) with the parameter the
//! cursor is on. The call is found in the text, so it works while the call is still unclosed.

use kora_check::facts::Binding;
use tower_lsp_server::ls_types::{
    Documentation, MarkupContent, MarkupKind, ParameterInformation, ParameterLabel, SignatureHelp,
    SignatureInformation,
};

use crate::analysis::{Analysis, FileAnalysis};
use crate::definition::binding_site;
use crate::member_docs::{method, std_member, Sig};
use crate::walk::{def_named_at, std_alias};

/// The call the cursor is in: where its `(` is, and which argument (by position, or the
/// keyword being written) the cursor is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenCall {
    pub paren: usize,
    pub index: usize,
    pub keyword: Option<String>,
}

/// The innermost unclosed `(` before `offset` that follows a name, skipping strings and comments.
pub fn open_call(text: &str, offset: usize) -> Option<OpenCall> {
    let prefix = text.get(..offset)?;
    // Each open bracket: its position and the commas seen at its depth.
    let mut stack: Vec<(usize, u8, usize, usize)> = Vec::new();
    let mut quote: Option<u8> = None;
    let mut comment = false;
    let bytes = prefix.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if comment {
            comment = c != b'\n';
        } else if let Some(q) = quote {
            if c == b'\\' {
                i += 1;
            } else if c == q {
                quote = None;
            }
        } else {
            match c {
                b'#' => comment = true,
                b'"' | b'\'' => quote = Some(c),
                b'(' | b'[' | b'{' => stack.push((i, c, 0, i + 1)),
                b')' | b']' | b'}' => {
                    stack.pop();
                }
                b',' => {
                    if let Some(top) = stack.last_mut() {
                        top.2 += 1;
                        top.3 = i + 1;
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    let &(paren, open, index, arg_start) = stack.iter().rev().find(|(_, c, ..)| *c == b'(')?;
    // Inside `[...]` or `{...}` nested in the call, the cursor is not on an argument.
    if stack.last().is_some_and(|(p, ..)| *p != paren) {
        return None;
    }
    let _ = open;
    let before = prefix[..paren].trim_end();
    if !before.ends_with(|c: char| c == '_' || c.is_alphanumeric()) {
        return None;
    }
    let arg = prefix[arg_start..].trim_start();
    let keyword = arg.split_once('=').and_then(|(k, rest)| {
        let k = k.trim();
        let ident = !k.is_empty() && k.chars().all(|c| c == '_' || c.is_alphanumeric());
        (ident && !rest.starts_with('=')).then(|| k.to_string())
    });
    Some(OpenCall {
        paren,
        index,
        keyword,
    })
}

/// The signature of what is called by the name that ends at `end`.
fn callee_sig(a: &Analysis, entry: &FileAnalysis, end: usize) -> Option<Sig> {
    let text = &entry.text;
    let start = text[..end]
        .char_indices()
        .rev()
        .take_while(|(_, c)| *c == '_' || c.is_alphanumeric())
        .last()
        .map(|(i, _)| i)?;
    let name = &text[start..end];
    let fact = entry
        .names
        .iter()
        .find(|n| n.span.start as usize == start && n.span.end as usize == end);
    if let Some(n) = fact {
        return match &n.binding {
            Binding::Type(t) => {
                let r = a.types.get(t.0 as usize)?;
                Some(Sig {
                    name: r.name.clone(),
                    params: r.fields.iter().map(|(n, t)| format!("{n}: {t}")).collect(),
                    ret: r.name.clone(),
                    doc: r.doc.clone().unwrap_or_default().trim().to_string(),
                })
            }
            Binding::Local { .. } | Binding::Global(..) => {
                let site = binding_site(a, entry, n)?;
                let f = &a.files[site.file];
                let d = def_named_at(&f.ast.stmts, site.span)?;
                Some(Sig {
                    name: d.name.name.clone(),
                    params: d
                        .params
                        .iter()
                        .map(|p| f.slice(p.span).trim().to_string())
                        .collect(),
                    ret: d
                        .ret
                        .as_ref()
                        .map_or("None".into(), |r| f.slice(r.span).to_string()),
                    doc: d.doc.clone().unwrap_or_default().trim().to_string(),
                })
            }
            _ => None,
        };
    }
    let before = text[..start].trim_end();
    let dot = before.strip_suffix('.')?;
    let receiver_start = dot
        .char_indices()
        .rev()
        .take_while(|(_, c)| *c == '_' || c.is_alphanumeric())
        .last()
        .map(|(i, _)| i);
    if let Some(rs) = receiver_start {
        if let Some(module) = std_alias(&entry.ast.stmts, &dot[rs..]) {
            return std_member(&module, name);
        }
    }
    method(entry.receiver_type(dot.len())?, name)
}

pub fn signature_help(a: &Analysis, offset: usize) -> Option<SignatureHelp> {
    let entry = a.entry()?;
    let call = open_call(&entry.text, offset)?;
    let end = entry.text[..call.paren].trim_end().len();
    let sig = callee_sig(a, entry, end)?;
    let param_name = |p: &str| {
        p.trim_start_matches('*')
            .split([':', '=', ' '])
            .next()
            .unwrap_or("")
            .to_string()
    };
    let active = match &call.keyword {
        Some(k) => sig.params.iter().position(|p| &param_name(p) == k),
        None => Some(call.index.min(sig.params.len().saturating_sub(1))),
    };
    let info = SignatureInformation {
        label: sig.label(),
        documentation: (!sig.doc.is_empty()).then(|| {
            Documentation::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value: sig.doc.clone(),
            })
        }),
        parameters: Some(
            sig.params
                .iter()
                .map(|p| ParameterInformation {
                    label: ParameterLabel::Simple(p.clone()),
                    documentation: None,
                })
                .collect(),
        ),
        active_parameter: active.map(|i| i as u32),
    };
    Some(SignatureHelp {
        signatures: vec![info],
        active_signature: Some(0),
        active_parameter: active.map(|i| i as u32),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_open_call_and_argument_are_found_in_unfinished_text() {
        let t = "x = f(1, g(2), \"a,(\", ";
        let c = open_call(t, t.len()).expect("a call");
        assert_eq!((c.paren, c.index, c.keyword), (5, 3, None));
        let t = "x = f(1, g(2";
        assert_eq!(open_call(t, t.len()).map(|c| c.paren), Some(10));
        let t = "x = f(a, key=";
        assert_eq!(
            open_call(t, t.len()).and_then(|c| c.keyword).as_deref(),
            Some("key")
        );
        assert!(open_call("x = (1, ", 8).is_none());
        assert!(open_call("x = f([1, ", 10).is_none());
        assert!(open_call("x = f(1) ", 9).is_none());
    }
}
