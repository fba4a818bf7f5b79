//! `yaml`: YAML 1.2 (saphyr) read into the declared type, with no implicit typing beyond what that type asks for.
//!
//! The defect fixed: YAML 1.1 loaders turn `no`, `on`, `0755` or `3.10` into
//! booleans and numbers behind the program's back (the "Norway problem").
//! Here a scalar keeps its text until the target type says what it is: `no`
//! read into `str` stays `"no"`. Only an unannotated parse resolves plain
//! scalars, by YAML 1.2's core schema. Aliases are expanded under a node
//! budget, so a "billion laughs" document is refused instead of eating memory.

use saphyr_parser::{Event, Parser, ScalarStyle};

use kora_check::hir::Program;
use kora_check::types::Ty;

use super::typed::Lenience;
use super::{err, ok, Args};
use crate::error::RtResult;
use crate::eval::interp::Interp;
use crate::value::{Dict, Key, Value};

/// Nodes a document may expand to, aliases included.
const MAX_NODES: usize = 1_000_000;
const MAX_DEPTH: usize = 256;

#[derive(Clone, Debug)]
enum Node {
    Scalar {
        text: String,
        plain: bool,
        tag: Option<String>,
    },
    Seq(Vec<Node>),
    Map(Vec<(Node, Node)>),
}

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    let text = a.str(0)?;
    let node = match load(text) {
        Ok(n) => n,
        Err(why) => return Ok(err(why)),
    };
    let mut path = String::from("$");
    let prog = it.prog.clone();
    let v = match guided(&prog, &node, &a.expect, &mut path) {
        Ok(v) => v,
        Err(why) => return Ok(err(why)),
    };
    Ok(match it.narrow_root(v, &a.expect, Lenience::Strict) {
        Ok(v) => ok(v),
        Err(why) => err(why),
    })
}

#[cfg(test)]
pub(super) fn load_for_tests(text: &str) -> bool {
    load(text).is_ok()
}

fn load(text: &str) -> Result<Node, String> {
    let mut anchors: Vec<(usize, Node)> = Vec::new();
    // Each open container with the anchor it will be stored under.
    let mut stack: Vec<(Node, usize, Option<Node>)> = Vec::new();
    let mut root = None;
    let mut count = 0usize;
    let mut docs = 0;
    for ev in Parser::new_from_str(text) {
        let (ev, span) = ev.map_err(|e| {
            let m = e.marker();
            format!(
                "invalid YAML at line {}, column {}: {}",
                m.line(),
                m.col() + 1,
                e.info()
            )
        })?;
        let done = match ev {
            Event::DocumentStart(_) => {
                docs += 1;
                if docs > 1 {
                    return Err(format!(
                        "line {}: more than one YAML document; split them before parsing",
                        span.start.line()
                    ));
                }
                None
            }
            Event::Scalar(v, style, anchor, tag) => {
                count += 1;
                let tag = tag.map(|t| format!("{}{}", t.handle, t.suffix));
                let n = Node::Scalar {
                    text: v.into_owned(),
                    plain: style == ScalarStyle::Plain,
                    tag,
                };
                if anchor > 0 {
                    anchors.push((anchor, n.clone()));
                }
                Some(n)
            }
            Event::Alias(id) => {
                let n = anchors
                    .iter()
                    .rev()
                    .find(|(a, _)| *a == id)
                    .map(|(_, n)| n.clone())
                    .ok_or_else(|| {
                        format!("line {}: an alias refers to no anchor", span.start.line())
                    })?;
                count += size(&n);
                if count > MAX_NODES {
                    return Err(format!("the document expands to more than {MAX_NODES} nodes through aliases; refused"));
                }
                Some(n)
            }
            Event::SequenceStart(anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(format!(
                        "line {}: nested deeper than {MAX_DEPTH} levels",
                        span.start.line()
                    ));
                }
                stack.push((Node::Seq(Vec::new()), anchor, None));
                None
            }
            Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(format!(
                        "line {}: nested deeper than {MAX_DEPTH} levels",
                        span.start.line()
                    ));
                }
                stack.push((Node::Map(Vec::new()), anchor, None));
                None
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let (n, anchor, _) = stack.pop().ok_or("unbalanced YAML events")?;
                count += 1;
                if anchor > 0 {
                    anchors.push((anchor, n.clone()));
                }
                Some(n)
            }
            _ => None,
        };
        if count > MAX_NODES {
            return Err(format!(
                "the document has more than {MAX_NODES} nodes; refused"
            ));
        }
        if let Some(n) = done {
            match stack.last_mut() {
                None => root = Some(n),
                Some((Node::Seq(items), _, _)) => items.push(n),
                Some((Node::Map(entries), _, key)) => match key.take() {
                    None => *key = Some(n),
                    Some(k) => entries.push((k, n)),
                },
                Some((Node::Scalar { .. }, _, _)) => return Err("unbalanced YAML events".into()),
            }
        }
    }
    Ok(root.unwrap_or(Node::Scalar {
        text: String::new(),
        plain: true,
        tag: None,
    }))
}

fn size(n: &Node) -> usize {
    match n {
        Node::Scalar { .. } => 1,
        Node::Seq(items) => 1 + items.iter().map(size).sum::<usize>(),
        Node::Map(es) => 1 + es.iter().map(|(k, v)| size(k) + size(v)).sum::<usize>(),
    }
}

fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

fn bool_of(text: &str, legacy: bool) -> Option<bool> {
    match text {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        // YAML 1.1 spellings count only when the declared type is `bool`.
        "yes" | "Yes" | "YES" | "on" | "On" | "ON" if legacy => Some(true),
        "no" | "No" | "NO" | "off" | "Off" | "OFF" if legacy => Some(false),
        _ => None,
    }
}

fn int_of(text: &str) -> Option<i64> {
    let t = text.strip_prefix('+').unwrap_or(text);
    if let Some(h) = t.strip_prefix("0x") {
        return i64::from_str_radix(h, 16).ok();
    }
    if let Some(o) = t.strip_prefix("0o") {
        return i64::from_str_radix(o, 8).ok();
    }
    if t.is_empty()
        || !t
            .trim_start_matches('-')
            .chars()
            .all(|c| c.is_ascii_digit())
    {
        return None;
    }
    t.parse().ok()
}

fn float_of(text: &str) -> Option<f64> {
    match text {
        ".inf" | ".Inf" | ".INF" | "+.inf" => return Some(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => return Some(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Some(f64::NAN),
        _ => {}
    }
    let ok = text
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        && text.chars().any(|c| c.is_ascii_digit());
    if ok {
        text.parse().ok()
    } else {
        None
    }
}

/// YAML 1.2 core schema, for a scalar nothing declared a type for.
fn resolve(text: &str, plain: bool, tag: Option<&str>) -> Value {
    match tag {
        Some("!!str") | Some("tag:yaml.org,2002:str") => return Value::str(text),
        _ if !plain => return Value::str(text),
        _ => {}
    }
    if is_null(text) {
        return Value::None;
    }
    if let Some(b) = bool_of(text, false) {
        return Value::Bool(b);
    }
    if let Some(i) = int_of(text) {
        return Value::Int(i);
    }
    if let Some(f) = float_of(text) {
        return Value::Float(f);
    }
    Value::str(text)
}

/// Builds plain values, reading each scalar as the type at its position asks.
fn guided(p: &Program, n: &Node, ty: &Ty, path: &mut String) -> Result<Value, String> {
    match n {
        Node::Scalar { text, plain, tag } => scalar(text, *plain, tag.as_deref(), ty, path),
        Node::Seq(items) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, x) in items.iter().enumerate() {
                let t = match ty {
                    Ty::List(t) | Ty::Set(t) | Ty::TupleOf(t) => (**t).clone(),
                    Ty::Tuple(ts) => ts.get(i).cloned().unwrap_or(Ty::Any),
                    _ => Ty::Any,
                };
                let mark = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(guided(p, x, &t, path)?);
                path.truncate(mark);
            }
            Ok(Value::list(out))
        }
        Node::Map(entries) => {
            let mut d = Dict::default();
            for (k, v) in entries {
                let key = guided(p, k, &Ty::Any, path)?;
                if !key.is_hashable() {
                    return Err(format!("{path}: a mapping key must be a scalar"));
                }
                let name = key.as_str().unwrap_or_default().to_string();
                let t = field_type(p, ty, &name);
                let mark = path.len();
                path.push('.');
                path.push_str(&name);
                let val = guided(p, v, &t, path)?;
                path.truncate(mark);
                d.insert(Key(key), val);
            }
            Ok(Value::dict(d))
        }
    }
}

fn field_type(p: &Program, ty: &Ty, name: &str) -> Ty {
    match ty {
        Ty::Dict(_, v) => (**v).clone(),
        Ty::Record(id, _) => p
            .record(*id)
            .fields
            .iter()
            .find(|f| p.name(f.name) == name)
            .map(|f| f.ty.clone())
            .unwrap_or(Ty::Any),
        _ => Ty::Any,
    }
}

fn scalar(
    text: &str,
    plain: bool,
    tag: Option<&str>,
    ty: &Ty,
    path: &str,
) -> Result<Value, String> {
    let found = |want: &str| Err(format!("{path}: expected {want}, found {text:?}"));
    match ty {
        Ty::Str | Ty::Literal(_) => Ok(Value::str(text)),
        Ty::Int if plain => int_of(text)
            .map(Value::Int)
            .map_or_else(|| found("an integer"), Ok),
        Ty::Float if plain => int_of(text)
            .map(|i| Value::Float(i as f64))
            .or_else(|| float_of(text).map(Value::Float))
            .map_or_else(|| found("a number"), Ok),
        Ty::Bool if plain => bool_of(text, true)
            .map(Value::Bool)
            .map_or_else(|| found("true or false"), Ok),
        Ty::None if plain && is_null(text) => Ok(Value::None),
        Ty::Int | Ty::Float | Ty::Bool | Ty::None => found(match ty {
            Ty::Int => "an integer",
            Ty::Float => "a number",
            Ty::Bool => "true or false",
            _ => "null",
        }),
        Ty::Union(ts) => {
            if plain && is_null(text) && ts.contains(&Ty::None) {
                return Ok(Value::None);
            }
            let mut first = None;
            for t in ts.iter().filter(|t| **t != Ty::None) {
                match scalar(text, plain, tag, t, path) {
                    Ok(v) => return Ok(v),
                    Err(e) => {
                        first.get_or_insert(e);
                    }
                }
            }
            Err(first.unwrap_or_else(|| format!("{path}: no alternative fits {text:?}")))
        }
        _ => Ok(resolve(text, plain, tag)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn norway_stays_a_string_unless_asked() {
        assert!(
            matches!(scalar("no", true, None, &Ty::Str, "$"), Ok(Value::Str(s)) if s.as_str() == "no")
        );
        assert!(matches!(
            scalar("no", true, None, &Ty::Bool, "$"),
            Ok(Value::Bool(false))
        ));
        assert!(matches!(resolve("no", true, None), Value::Str(_)));
    }

    #[test]
    fn alias_bombs_are_refused() {
        let mut doc = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            doc.push_str(&format!("a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n", p = i - 1));
        }
        let e = load(&doc).expect_err("refused");
        assert!(e.contains("refused"), "{e}");
    }

    #[test]
    fn malformed_input_is_an_error_with_a_place() {
        let e = load("a: [1, 2\nb: }").expect_err("invalid");
        assert!(e.contains("line"), "{e}");
    }
}
