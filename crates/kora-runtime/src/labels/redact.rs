//! `redact(value)`: the value with each classified leaf replaced by a placeholder token, so it
//! may go to any model; a model's answer that quotes a token gets the real value back, labelled.
//!
//! Tokens are process-wide (`[REDACTED-7]`), so a value redacted before a `parallel for` is
//! restored in any branch's answer. What a token stands for is kept as plain text and the
//! secret's label: the restored string is classified again, never plain.

use std::sync::Mutex;

use crate::labels::label::{self, Tag};
use crate::value::Value;

struct Entry {
    token: String,
    text: String,
    tag: Tag,
}

static TOKENS: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

fn tokens() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    TOKENS.lock().unwrap_or_else(|e| e.into_inner())
}

/// `redact(v)`.
pub fn redact(p: &kora_check::hir::Program, v: &Value) -> Value {
    label::map_leaves(v, &mut |x| match x {
        Value::Labeled(_) | Value::LabeledSmall(_)
            if label::tag_of(x).is_some_and(Tag::is_classified) =>
        {
            let (inner, tag) = label::split(x);
            let tag = tag.unwrap_or_default();
            let text = crate::value::format::to_string(p, &inner);
            let mut t = tokens();
            if let Some(e) = t.iter().find(|e| e.text == text) {
                return Value::str(e.token.clone());
            }
            let token = format!("[REDACTED-{}]", t.len() + 1);
            t.push(Entry {
                token: token.clone(),
                text,
                tag,
            });
            Value::str(token)
        }
        other => other.clone(),
    })
}

/// `v` with every token in its strings replaced by the value it stands for, labelled as it was.
pub fn restore(v: Value) -> Value {
    if tokens().is_empty() {
        return v;
    }
    label::map_leaves(&v, &mut |x| match x {
        Value::Labeled(_) | Value::LabeledSmall(_) => {
            let (inner, tag) = label::split(x);
            label::wrap_opt(restore_text(&inner), tag)
        }
        other => restore_text(other),
    })
}

/// One string with its tokens put back (and their labels joined on); anything else as it is.
fn restore_text(v: &Value) -> Value {
    let Value::Str(s) = v else {
        return v.clone();
    };
    let t = tokens();
    let mut text = s.as_str().to_string();
    let mut tag: Option<Tag> = None;
    for e in t.iter() {
        if text.contains(&e.token) {
            text = text.replace(&e.token, &e.text);
            tag = label::join(tag, Some(e.tag));
        }
    }
    match tag {
        Some(tag) => label::wrap(Value::str(text), tag),
        None => v.clone(),
    }
}
