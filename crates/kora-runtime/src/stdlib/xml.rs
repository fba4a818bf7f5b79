//! `xml`: XML read into an `xml.Element` tree or a declared record, with no entity expansion at all.
//!
//! The defect fixed: XML parsers that expand entities (billion laughs) or
//! fetch external ones (XXE). A document declaring entities is refused at
//! its DOCTYPE, before any expansion; only the five predefined entities and
//! character references are read. Into a record, a field takes the
//! element's attribute of that name, else its child element(s) of that name,
//! and a field named `text` takes the element's text.

use quick_xml::events::Event;
use quick_xml::{Reader, XmlVersion};

use kora_check::hir::Program;
use kora_check::types::Ty;

use super::typed::Lenience;
use super::{err, ok, Args};
use crate::error::RtResult;
use crate::eval::interp::Interp;
use crate::value::{Dict, Key, Value};

const MAX_DEPTH: usize = 256;

struct Elem {
    tag: String,
    attrs: Vec<(String, String)>,
    text: String,
    children: Vec<Elem>,
}

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    let text = a.str(0)?;
    let root = match parse(text) {
        Ok(e) => e,
        Err(why) => return Ok(err(why)),
    };
    let prog = it.prog.clone();
    let elem_ty = it.host().types.xml_element;
    let v = match &a.expect {
        Ty::Record(id, _) if Some(*id) != elem_ty => {
            let mut path = format!("<{}>", root.tag);
            match as_record(&prog, &root, &a.expect, &mut path) {
                Ok(v) => v,
                Err(why) => return Ok(err(why)),
            }
        }
        _ => element(it, &root, elem_ty),
    };
    Ok(match it.narrow_root(v, &a.expect, Lenience::Strict) {
        Ok(v) => ok(v),
        Err(why) => err(why),
    })
}

#[cfg(test)]
pub(super) fn parse_for_tests(text: &str) -> bool {
    parse(text).is_ok()
}

fn parse(text: &str) -> Result<Elem, String> {
    let mut r = Reader::from_str(text);
    let mut stack: Vec<Elem> = Vec::new();
    let mut root = None;
    let at = |r: &Reader<&[u8]>| line_of(text, r.buffer_position() as usize);
    loop {
        let ev = r.read_event().map_err(|e| {
            format!(
                "invalid XML at line {}: {e}",
                line_of(text, r.error_position() as usize)
            )
        })?;
        match ev {
            Event::DocType(d) => {
                let body = d.to_string();
                if body.contains("<!ENTITY") || body.contains("SYSTEM") || body.contains("PUBLIC") {
                    return Err(format!(
                        "line {}: the document declares entities or an external DTD; Kora reads no entity declarations (they enable billion-laughs and XXE attacks)",
                        at(&r)
                    ));
                }
            }
            Event::Start(ref s) | Event::Empty(ref s) => {
                let empty = matches!(ev, Event::Empty(_));
                if stack.len() >= MAX_DEPTH {
                    return Err(format!(
                        "line {}: nested deeper than {MAX_DEPTH} elements",
                        at(&r)
                    ));
                }
                let tag = s.name().as_ref().to_string();
                let mut attrs = Vec::new();
                for a in s.attributes() {
                    let a = a.map_err(|e| format!("line {}: bad attribute: {e}", at(&r)))?;
                    let v = a.normalized_value(XmlVersion::Implicit1_0).map_err(|e| {
                        format!(
                            "line {}: {e} (only the predefined entities are read)",
                            at(&r)
                        )
                    })?;
                    attrs.push((a.key.as_ref().to_string(), v.into_owned()));
                }
                let e = Elem {
                    tag,
                    attrs,
                    text: String::new(),
                    children: Vec::new(),
                };
                if empty {
                    attach(&mut stack, &mut root, e)?;
                } else {
                    stack.push(e);
                }
            }
            Event::End(_) => {
                let mut e = stack
                    .pop()
                    .ok_or_else(|| format!("line {}: a closing tag closes nothing", at(&r)))?;
                // Indentation between child elements is layout, not text.
                let trimmed = e.text.trim();
                if trimmed.len() != e.text.len() {
                    e.text = trimmed.to_string();
                }
                attach(&mut stack, &mut root, e)?;
            }
            Event::Text(t) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&t.xml_content(XmlVersion::Implicit1_0));
                }
            }
            Event::CData(c) => {
                if let Some(top) = stack.last_mut() {
                    top.text.push_str(&c);
                }
            }
            Event::GeneralRef(g) => {
                let name = g.to_string();
                let ch = match name.as_str() {
                    "lt" => Some('<'),
                    "gt" => Some('>'),
                    "amp" => Some('&'),
                    "apos" => Some('\''),
                    "quot" => Some('"'),
                    _ => g
                        .resolve_char_ref()
                        .map_err(|e| format!("line {}: {e}", at(&r)))?,
                };
                let Some(ch) = ch else {
                    return Err(format!("line {}: the entity `&{name};` is not expanded: Kora reads only the predefined entities", at(&r)));
                };
                if let Some(top) = stack.last_mut() {
                    top.text.push(ch);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !stack.is_empty() {
        return Err(format!(
            "the element <{}> is never closed",
            stack[stack.len() - 1].tag
        ));
    }
    root.ok_or_else(|| "the document has no root element".to_string())
}

fn attach(stack: &mut [Elem], root: &mut Option<Elem>, e: Elem) -> Result<(), String> {
    match stack.last_mut() {
        Some(parent) => parent.children.push(e),
        None if root.is_none() => *root = Some(e),
        None => return Err(format!("a second root element <{}>", e.tag)),
    }
    Ok(())
}

fn line_of(text: &str, byte: usize) -> usize {
    text.as_bytes()[..byte.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The generic tree: `xml.Element(tag, attrs, text, children)`.
fn element(it: &Interp, e: &Elem, ty: Option<kora_check::hir::TypeId>) -> Value {
    let mut attrs = Dict::default();
    for (k, v) in &e.attrs {
        attrs.insert(Key(Value::str(k.as_str())), Value::str(v.as_str()));
    }
    let children = e.children.iter().map(|c| element(it, c, ty)).collect();
    let fields = vec![
        Value::str(e.tag.as_str()),
        Value::dict(attrs),
        Value::str(e.text.as_str()),
        Value::list(children),
    ];
    match ty {
        Some(t) => it.std_record(t, fields),
        None => Value::tuple(fields),
    }
}

/// A record's fields from an element: attribute, else child element(s), else (`text`) the text.
fn as_record(p: &Program, e: &Elem, ty: &Ty, path: &mut String) -> Result<Value, String> {
    let Ty::Record(id, _) = ty else {
        return Ok(Value::str(e.text.as_str()));
    };
    let rec = p.record(*id);
    let mut d = Dict::default();
    for f in &rec.fields {
        let name = p.name(f.name);
        let mark = path.len();
        path.push('/');
        path.push_str(name);
        let kids: Vec<&Elem> = e.children.iter().filter(|c| c.tag == name).collect();
        let v = if let Some((_, v)) = e.attrs.iter().find(|(k, _)| k == name) {
            Some(super::csv::cell(v, &f.ty).map_err(|w| format!("{path}: {w}"))?)
        } else if let Ty::List(inner) = &f.ty {
            let mut items = Vec::new();
            for (i, k) in kids.iter().enumerate() {
                let m2 = path.len();
                path.push_str(&format!("[{i}]"));
                items.push(child(p, k, inner, path)?);
                path.truncate(m2);
            }
            Some(Value::list(items))
        } else if let Some(k) = kids.first() {
            Some(child(p, k, &f.ty, path)?)
        } else if name == "text" {
            Some(super::csv::cell(&e.text, &f.ty).map_err(|w| format!("{path}: {w}"))?)
        } else {
            None
        };
        path.truncate(mark);
        if let Some(v) = v {
            d.insert(Key(Value::str(name)), v);
        }
    }
    Ok(Value::dict(d))
}

fn child(p: &Program, k: &Elem, ty: &Ty, path: &mut String) -> Result<Value, String> {
    match ty {
        Ty::Record(..) => as_record(p, k, ty, path),
        _ => super::csv::cell(&k.text, ty).map_err(|w| format!("{path}: {w}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn billion_laughs_is_refused_at_the_doctype() {
        let doc = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<lolz>&lol2;</lolz>"#;
        let e = parse(doc).err().expect("refused");
        assert!(e.contains("entities"), "{e}");
    }

    #[test]
    fn an_undeclared_entity_is_not_expanded() {
        let e = parse("<a>&ext;</a>").err().expect("refused");
        assert!(e.contains("&ext;"), "{e}");
    }

    #[test]
    fn predefined_entities_and_char_refs_are_read() {
        let e = parse("<a x=\"1 &amp; 2\">&lt;b&gt; &#65;</a>").expect("parses");
        assert_eq!(e.text, "<b> A");
        assert_eq!(e.attrs[0].1, "1 & 2");
    }
}
