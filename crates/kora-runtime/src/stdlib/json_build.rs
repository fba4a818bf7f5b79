//! Building Kora values straight from JSON text: one pass, exact-size containers, object keys shared.
//!
//! Allocation is what a parse costs (a profile of a 2 MB document put two thirds of the
//! instructions in malloc and free), so the builder avoids what it can:
//! - Open arrays and objects push their items onto one stack each, shared by every depth, and
//!   take them off into a container of exactly the right size when they close, instead of
//!   growing a `Vec` or a map by doubling.
//! - Object keys repeat (every record of a list has the same ones), so a short key is made once
//!   per parse and shared after, as CPython's decoder memoizes its keys. The memo is bounded,
//!   so a document of many distinct keys costs no more than without it.

use std::borrow::Cow;

use rustc_hash::FxHashMap;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::value::{Dict, Key, Value};

/// Keys longer than this are not shared: they are rarely repeated names.
const MEMO_KEY_BYTES: usize = 32;
/// At most this many distinct keys are remembered per parse.
const MEMO_KEYS: usize = 4096;

/// The state of one parse.
#[derive(Default)]
pub(super) struct Builder {
    keys: FxHashMap<Box<str>, Value>,
    items: Vec<Value>,
    entries: Vec<(Key, Value)>,
}

impl Builder {
    /// Reads one JSON value (and checks nothing follows it).
    pub(super) fn parse(&mut self, text: &str) -> Result<Value, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_str(text);
        let v = Node(self).deserialize(&mut de)?;
        de.end()?;
        Ok(v)
    }

    fn key(&mut self, k: &str) -> Value {
        if k.len() > MEMO_KEY_BYTES {
            return Value::str(k);
        }
        if let Some(v) = self.keys.get(k) {
            return v.clone();
        }
        let v = Value::str(k);
        if self.keys.len() < MEMO_KEYS {
            self.keys.insert(k.into(), v.clone());
        }
        v
    }
}

/// One value of the document, built with the parse's shared state.
struct Node<'b>(&'b mut Builder);

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, i: i64) -> Result<Value, E> {
        Ok(Value::Int(i))
    }
    fn visit_u64<E>(self, u: u64) -> Result<Value, E> {
        Ok(match i64::try_from(u) {
            Ok(i) => Value::Int(i),
            Err(_) => Value::BigInt(std::rc::Rc::new(num_bigint::BigInt::from(u))),
        })
    }
    fn visit_f64<E>(self, f: f64) -> Result<Value, E> {
        Ok(Value::Float(f))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::str(s))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::str(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::None)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::None)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let b = self.0;
        let start = b.items.len();
        // On an error the caller drops the whole builder, so the stack needs no unwinding here.
        while let Some(x) = seq.next_element_seed(Node(b))? {
            b.items.push(x);
        }
        let v: Vec<Value> = b.items.drain(start..).collect();
        Ok(Value::list(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let b = self.0;
        let start = b.entries.len();
        while let Some(k) = map.next_key::<Cow<'de, str>>()? {
            let k = b.key(&k);
            let v = map.next_value_seed(Node(b))?;
            b.entries.push((Key(k), v));
        }
        let mut d = Dict::with_capacity_and_hasher(b.entries.len() - start, Default::default());
        // A repeated key keeps its first place and its last value, as Python's dict does.
        d.extend(b.entries.drain(start..));
        Ok(Value::dict(d))
    }
}
