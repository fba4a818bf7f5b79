//! `Data`: a value as it crosses into an external module and back, and its one JSON form.
//!
//! Plain and thread-safe, so a provider can hand it to its own threads. Its JSON form (used by
//! journals, cassettes and the Python worker's frames) is ordinary JSON wherever JSON can say
//! it, and a one-key object for what it cannot: `{"$tuple": [...]}`, `{"$set": [...]}`,
//! `{"$bytes": "base64"}`, `{"$dict": [[k, v], ...]}` (keys that are not strings, or a dict
//! that would read as one of these forms), `{"$float": "nan" | "inf" | "-inf"}` and
//! `{"$int": "digits"}` (an integer past 64 bits).

use base64::Engine;
use serde_json::{Map, Value as Json};

/// A value crossing the external seam.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    None,
    Bool(bool),
    Int(i64),
    /// An integer past 64 bits, in decimal; see `convert.rs` for where it becomes a value.
    BigInt(String),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    List(Vec<Data>),
    Tuple(Vec<Data>),
    Set(Vec<Data>),
    Dict(Vec<(Data, Data)>),
}

const TAGS: &[&str] = &["$tuple", "$set", "$bytes", "$dict", "$float", "$int"];

fn b64() -> base64::engine::GeneralPurpose {
    base64::engine::general_purpose::STANDARD
}

impl Data {
    /// The tagged JSON form (lossless).
    pub fn to_json(&self) -> Json {
        match self {
            Data::None => Json::Null,
            Data::Bool(b) => Json::Bool(*b),
            Data::Int(i) => Json::from(*i),
            Data::BigInt(s) => one("$int", Json::String(s.clone())),
            Data::Float(f) => match serde_json::Number::from_f64(*f) {
                Some(n) => Json::Number(n),
                None => one("$float", Json::String(float_word(*f).into())),
            },
            Data::Str(s) => Json::String(s.clone()),
            Data::Bytes(b) => one("$bytes", Json::String(b64().encode(b))),
            Data::List(xs) => Json::Array(xs.iter().map(Data::to_json).collect()),
            Data::Tuple(xs) => one(
                "$tuple",
                Json::Array(xs.iter().map(Data::to_json).collect()),
            ),
            Data::Set(xs) => one("$set", Json::Array(xs.iter().map(Data::to_json).collect())),
            Data::Dict(kvs) => {
                let plain = kvs.iter().all(|(k, _)| matches!(k, Data::Str(_)))
                    && !(kvs.len() == 1
                        && matches!(&kvs[0].0, Data::Str(k) if TAGS.contains(&k.as_str())));
                if plain {
                    let mut m = Map::new();
                    for (k, v) in kvs {
                        if let Data::Str(k) = k {
                            m.insert(k.clone(), v.to_json());
                        }
                    }
                    // A repeated key cannot be an object's: keep every pair.
                    if m.len() == kvs.len() {
                        return Json::Object(m);
                    }
                }
                one(
                    "$dict",
                    Json::Array(
                        kvs.iter()
                            .map(|(k, v)| Json::Array(vec![k.to_json(), v.to_json()]))
                            .collect(),
                    ),
                )
            }
        }
    }

    /// Reads the tagged JSON form back; `Err` names what does not fit.
    pub fn from_json(j: &Json) -> Result<Data, String> {
        Ok(match j {
            Json::Null => Data::None,
            Json::Bool(b) => Data::Bool(*b),
            Json::Number(n) => match n.as_i64() {
                Some(i) => Data::Int(i),
                None => match n.as_f64() {
                    Some(f) if n.is_f64() => Data::Float(f),
                    // A JSON integer past 64 bits (serde_json reads it as a float otherwise).
                    _ => Data::BigInt(n.to_string()),
                },
            },
            Json::String(s) => Data::Str(s.clone()),
            Json::Array(xs) => {
                Data::List(xs.iter().map(Data::from_json).collect::<Result<_, _>>()?)
            }
            Json::Object(m) => {
                if m.len() == 1 {
                    let (k, v) = m.iter().next().expect("one entry");
                    if TAGS.contains(&k.as_str()) {
                        return tagged(k, v);
                    }
                }
                Data::Dict(
                    m.iter()
                        .map(|(k, v)| Ok((Data::Str(k.clone()), Data::from_json(v)?)))
                        .collect::<Result<_, String>>()?,
                )
            }
        })
    }

    /// Plain JSON, for a receiver that speaks only JSON (an MCP server): a tuple or a set is
    /// an array, bytes are base64 text; `Err` for what JSON cannot hold.
    pub fn to_plain_json(&self) -> Result<Json, String> {
        Ok(match self {
            Data::None => Json::Null,
            Data::Bool(b) => Json::Bool(*b),
            Data::Int(i) => Json::from(*i),
            Data::BigInt(s) => s
                .parse::<serde_json::Number>()
                .map(Json::Number)
                .map_err(|_| format!("the integer {s} does not fit JSON"))?,
            Data::Float(f) => serde_json::Number::from_f64(*f)
                .map(Json::Number)
                .ok_or_else(|| format!("{} is not a JSON number", float_word(*f)))?,
            Data::Str(s) => Json::String(s.clone()),
            Data::Bytes(b) => Json::String(b64().encode(b)),
            Data::List(xs) | Data::Tuple(xs) | Data::Set(xs) => Json::Array(
                xs.iter()
                    .map(Data::to_plain_json)
                    .collect::<Result<_, _>>()?,
            ),
            Data::Dict(kvs) => {
                let mut m = Map::new();
                for (k, v) in kvs {
                    let Data::Str(k) = k else {
                        return Err("a JSON object's keys are strings".into());
                    };
                    m.insert(k.clone(), v.to_plain_json()?);
                }
                Json::Object(m)
            }
        })
    }

    /// Plain JSON read as it is (an MCP result): objects are dicts, no tags.
    pub fn from_plain_json(j: &Json) -> Data {
        match j {
            Json::Object(m) => Data::Dict(
                m.iter()
                    .map(|(k, v)| (Data::Str(k.clone()), Data::from_plain_json(v)))
                    .collect(),
            ),
            Json::Array(xs) => Data::List(xs.iter().map(Data::from_plain_json).collect()),
            other => Data::from_json(other).unwrap_or(Data::None),
        }
    }
}

fn one(tag: &str, v: Json) -> Json {
    let mut m = Map::new();
    m.insert(tag.to_string(), v);
    Json::Object(m)
}

fn float_word(f: f64) -> &'static str {
    if f.is_nan() {
        "nan"
    } else if f > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

fn tagged(tag: &str, v: &Json) -> Result<Data, String> {
    let items = |v: &Json| -> Result<Vec<Data>, String> {
        v.as_array()
            .ok_or_else(|| format!("`{tag}` holds an array"))?
            .iter()
            .map(Data::from_json)
            .collect()
    };
    Ok(match tag {
        "$tuple" => Data::Tuple(items(v)?),
        "$set" => Data::Set(items(v)?),
        "$bytes" => Data::Bytes(
            b64()
                .decode(v.as_str().ok_or("`$bytes` holds base64 text")?)
                .map_err(|e| format!("`$bytes`: {e}"))?,
        ),
        "$float" => Data::Float(match v.as_str() {
            Some("nan") => f64::NAN,
            Some("inf") => f64::INFINITY,
            Some("-inf") => f64::NEG_INFINITY,
            _ => return Err("`$float` is \"nan\", \"inf\" or \"-inf\"".into()),
        }),
        "$int" => {
            let s = v.as_str().ok_or("`$int` holds decimal text")?;
            let digits = s.strip_prefix('-').unwrap_or(s);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!("`$int`: {s:?} is not an integer"));
            }
            match s.parse::<i64>() {
                Ok(i) => Data::Int(i),
                Err(_) => Data::BigInt(s.to_string()),
            }
        }
        _ => {
            let pairs = v.as_array().ok_or("`$dict` holds [key, value] pairs")?;
            let mut out = Vec::with_capacity(pairs.len());
            for p in pairs {
                match p.as_array().map(Vec::as_slice) {
                    Some([k, v]) => out.push((Data::from_json(k)?, Data::from_json(v)?)),
                    _ => return Err("`$dict` holds [key, value] pairs".into()),
                }
            }
            Data::Dict(out)
        }
    })
}

impl crate::durable::effect::Recordable for Data {
    fn to_record(&self) -> Json {
        self.to_json()
    }
    fn from_record(j: &Json) -> Option<Data> {
        Data::from_json(j).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn data() -> impl Strategy<Value = Data> {
        let leaf = prop_oneof![
            Just(Data::None),
            any::<bool>().prop_map(Data::Bool),
            any::<i64>().prop_map(Data::Int),
            "-?[1-9][0-9]{19,30}".prop_map(Data::BigInt),
            any::<f64>().prop_map(Data::Float),
            ".{0,8}".prop_map(Data::Str),
            "\\$(tuple|set|dict|int)".prop_map(Data::Str),
            proptest::collection::vec(any::<u8>(), 0..8).prop_map(Data::Bytes),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Data::List),
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Data::Tuple),
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Data::Set),
                proptest::collection::vec((inner.clone(), inner), 0..4).prop_map(Data::Dict),
            ]
        })
    }

    fn same(a: &Data, b: &Data) -> bool {
        match (a, b) {
            (Data::Float(x), Data::Float(y)) => x == y || x.is_nan() && y.is_nan(),
            (Data::List(x), Data::List(y))
            | (Data::Tuple(x), Data::Tuple(y))
            | (Data::Set(x), Data::Set(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
            }
            (Data::Dict(x), Data::Dict(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|(a, b)| same(&a.0, &b.0) && same(&a.1, &b.1))
            }
            _ => a == b,
        }
    }

    proptest! {
        #[test]
        fn the_json_form_reads_back_as_written(d in data()) {
            let text = d.to_json().to_string();
            let back = Data::from_json(&serde_json::from_str(&text).expect("valid JSON"))
                .expect("reads back");
            prop_assert!(same(&d, &back), "{d:?} came back as {back:?} via {text}");
        }

        #[test]
        fn any_json_reads_without_a_panic(text in "[\\[\\]{}\",:0-9a-z$ -]{0,40}") {
            if let Ok(j) = serde_json::from_str::<Json>(&text) {
                let _ = Data::from_json(&j);
            }
        }
    }

    #[test]
    fn a_dict_that_looks_like_a_tag_is_not_read_as_one() {
        let d = Data::Dict(vec![(Data::Str("$set".into()), Data::List(vec![]))]);
        assert_eq!(Data::from_json(&d.to_json()), Ok(d));
        assert!(Data::from_json(&serde_json::json!({"$bytes": 3})).is_err());
    }
}
