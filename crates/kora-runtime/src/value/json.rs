//! Crossing between Kora values and JSON: data sent to models, answers read back into a declared type.
//!
//! Reading is typed: a JSON answer becomes a value of the annotation's type or
//! an error naming the first path that does not fit (`$.items[2].amount`).

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value as Json;

use kora_check::hir::Program;
use kora_check::types::Ty;
use kora_models::Shape;

use crate::value::{Dict, Key, OutcomeTag, Record, Value};

/// The JSON form of a value sent to a model; functions and modules have none.
///
/// Labels are not in JSON: a caller sending it somewhere checks them first (`declassify.rs`).
pub fn to_json(p: &Program, v: &Value) -> Result<Json, String> {
    Ok(match v {
        Value::Labeled(l) => return to_json(p, &l.value),
        Value::LabeledSmall(s) => return to_json(p, &s.plain()),
        Value::None => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::from(*i),
        // JSON numbers have no size limit, but this crate's do: a big int past u64 goes as
        // the nearest float, which is what most JSON readers would make of it anyway.
        Value::BigInt(b) => match num_traits::ToPrimitive::to_u64(&**b) {
            Some(u) => Json::from(u),
            None => serde_json::Number::from_f64(
                num_traits::ToPrimitive::to_f64(&**b).unwrap_or(f64::MAX),
            )
            .map(Json::Number)
            .unwrap_or(Json::Null),
        },
        Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or(Json::Null),
        Value::Str(s) => Json::String(s.as_str().to_string()),
        Value::List(l) => Json::Array(
            l.borrow()
                .iter()
                .map(|x| to_json(p, x))
                .collect::<Result<_, _>>()?,
        ),
        Value::Tuple(t) => Json::Array(t.iter().map(|x| to_json(p, x)).collect::<Result<_, _>>()?),
        Value::Set(s) => Json::Array(
            s.borrow()
                .iter()
                .map(|k| to_json(p, &k.0))
                .collect::<Result<_, _>>()?,
        ),
        Value::Range(r) => Json::Array((0..r.len()).map(|i| Json::from(r.get(i))).collect()),
        Value::Dict(d) => {
            let mut m = serde_json::Map::new();
            for (k, x) in d.borrow().iter() {
                let key = match &*crate::labels::label::plain(&k.0) {
                    Value::Str(s) => s.as_str().to_string(),
                    other => {
                        let mut s = String::new();
                        crate::value::format::to_str(p, other, &mut s);
                        s
                    }
                };
                m.insert(key, to_json(p, x)?);
            }
            Json::Object(m)
        }
        Value::Record(r) => {
            let rec = p.record(r.ty);
            let mut m = serde_json::Map::new();
            for (f, x) in rec.fields.iter().zip(r.fields.borrow().iter()) {
                m.insert(p.name(f.name).to_string(), to_json(p, x)?);
            }
            Json::Object(m)
        }
        Value::Outcome(o) => {
            let mut m = serde_json::Map::new();
            m.insert(o.tag.kind().to_string(), to_json(p, &o.payload)?);
            Json::Object(m)
        }
        // The pixels ride beside the JSON (see stdlib/image.rs), never inside it.
        Value::Native(n) if n.json_marker().is_some() => {
            Json::String(n.json_marker().unwrap_or_default().to_string())
        }
        other => {
            return Err(format!(
                "a `{}` cannot be sent to a model",
                other.type_name()
            ))
        }
    })
}

/// The schema shape of a Kora type, for the model's structured output.
pub fn shape_of(p: &Program, ty: &Ty) -> Shape {
    match ty {
        Ty::Str => Shape::Str,
        Ty::Int => Shape::Int,
        Ty::Float => Shape::Float,
        Ty::Bool => Shape::Bool,
        Ty::None => Shape::Null,
        Ty::List(t) | Ty::Set(t) | Ty::TupleOf(t) => Shape::List(Box::new(shape_of(p, t))),
        Ty::Dict(_, v) => Shape::Dict(Box::new(shape_of(p, v))),
        Ty::Tuple(ts) => Shape::Tuple(ts.iter().map(|t| shape_of(p, t)).collect()),
        Ty::Record(id, name) => {
            let rec = p.record(*id);
            let fields = rec
                .fields
                .iter()
                .map(|f| {
                    let optional = matches!(&f.ty, Ty::Union(ts) if ts.contains(&Ty::None));
                    kora_models::Field {
                        name: p.name(f.name).to_string(),
                        shape: shape_of(p, &f.ty),
                        required: f.default.is_none() && !optional,
                    }
                })
                .collect();
            Shape::Record {
                name: name.clone(),
                fields,
            }
        }
        Ty::Literal(ms) => Shape::Literal(ms.clone()),
        Ty::Union(ts) => {
            let rest: Vec<&Ty> = ts.iter().filter(|t| **t != Ty::None).collect();
            match rest.as_slice() {
                [one] if rest.len() < ts.len() => Shape::Optional(Box::new(shape_of(p, one))),
                _ => Shape::Union(ts.iter().map(|t| shape_of(p, t)).collect()),
            }
        }
        Ty::Outcome(t, _) => shape_of(p, t),
        Ty::Any | Ty::Func | Ty::Module | Ty::Std(_) => Shape::Any,
    }
}

/// Reads JSON into a value of type `ty`; the error names the first path that does not fit.
pub fn from_json(p: &Program, j: &Json, ty: &Ty) -> Result<Value, String> {
    read(p, j, ty, "$")
}

fn kind(j: &Json) -> &'static str {
    match j {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn read(p: &Program, j: &Json, ty: &Ty, path: &str) -> Result<Value, String> {
    let mismatch = |want: &str| Err(format!("{path}: expected {want}, found {}", kind(j)));
    match ty {
        Ty::Any | Ty::Func | Ty::Module => Ok(untyped(j)),
        Ty::Std(t) => Err(format!("{path}: a `{}` cannot be read from JSON", t.name())),
        Ty::Str => match j {
            Json::String(s) => Ok(Value::str(s.as_str())),
            _ => mismatch("a string"),
        },
        Ty::Int => match j.as_i64() {
            Some(i) => Ok(Value::Int(i)),
            None => match j.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Value::Int(f as i64)),
                _ => mismatch("an integer"),
            },
        },
        Ty::Float => match j.as_f64() {
            Some(f) => Ok(Value::Float(f)),
            None => mismatch("a number"),
        },
        Ty::Bool => match j {
            Json::Bool(b) => Ok(Value::Bool(*b)),
            _ => mismatch("true or false"),
        },
        Ty::None => match j {
            Json::Null => Ok(Value::None),
            _ => mismatch("null"),
        },
        Ty::List(t) | Ty::TupleOf(t) | Ty::Set(t) => {
            let Json::Array(items) = j else {
                return mismatch("an array");
            };
            let vals = items
                .iter()
                .enumerate()
                .map(|(i, x)| read(p, x, t, &format!("{path}[{i}]")))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(match ty {
                Ty::List(_) => Value::list(vals),
                Ty::TupleOf(_) => Value::tuple(vals),
                _ => {
                    let mut s = crate::value::Set::default();
                    for v in vals {
                        if v.is_hashable() {
                            s.insert(Key(v));
                        }
                    }
                    Value::set(s)
                }
            })
        }
        Ty::Tuple(ts) => {
            let Json::Array(items) = j else {
                return mismatch("an array");
            };
            if items.len() != ts.len() {
                return Err(format!(
                    "{path}: expected {} items, found {}",
                    ts.len(),
                    items.len()
                ));
            }
            let vals = items
                .iter()
                .zip(ts)
                .enumerate()
                .map(|(i, (x, t))| read(p, x, t, &format!("{path}[{i}]")))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Value::tuple(vals))
        }
        Ty::Dict(_, v) => {
            let Json::Object(m) = j else {
                return mismatch("an object");
            };
            let mut d = Dict::default();
            for (k, x) in m {
                d.insert(
                    Key(Value::str(k.as_str())),
                    read(p, x, v, &format!("{path}.{k}"))?,
                );
            }
            Ok(Value::dict(d))
        }
        Ty::Record(id, name) => {
            let Json::Object(m) = j else {
                return mismatch(&format!("an object for `{name}`"));
            };
            let rec = p.record(*id);
            let mut fields = Vec::with_capacity(rec.fields.len());
            for f in &rec.fields {
                let fname = p.name(f.name);
                let fpath = format!("{path}.{fname}");
                match m.get(fname) {
                    Some(x) if !(x.is_null() && f.default.is_some()) => {
                        fields.push(read(p, x, &f.ty, &fpath)?)
                    }
                    _ => {
                        let optional = matches!(&f.ty, Ty::Union(ts) if ts.contains(&Ty::None));
                        if f.default.is_some() || optional {
                            // Defaults are expressions; the model omitted the field, so the
                            // runtime fills it when it builds the record (see analyze.rs).
                            fields.push(Value::None);
                        } else {
                            return Err(format!("{fpath}: missing required field"));
                        }
                    }
                }
            }
            Ok(Value::Record(Rc::new(Record {
                ty: *id,
                fields: RefCell::new(fields),
            })))
        }
        Ty::Literal(ms) => match j {
            Json::String(s) if ms.contains(s) => Ok(Value::str(s.as_str())),
            Json::String(s) => Err(format!(
                "{path}: {s:?} is not one of {}",
                ms.iter()
                    .map(|m| format!("{m:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            _ => mismatch("a string"),
        },
        Ty::Union(ts) => {
            let mut first_err = None;
            for t in ts {
                match read(p, j, t, path) {
                    Ok(v) => return Ok(v),
                    Err(e) => {
                        first_err.get_or_insert(e);
                    }
                }
            }
            Err(first_err.unwrap_or_else(|| format!("{path}: no alternative fits")))
        }
        Ty::Outcome(t, _) => {
            let Json::Object(m) = j else {
                return mismatch("an outcome object");
            };
            match m.iter().next() {
                Some((k, x)) if k == "ok" => {
                    Ok(Value::outcome(OutcomeTag::Ok, read(p, x, t, path)?))
                }
                Some((k, x)) => {
                    let tag = match k.as_str() {
                        "err" => OutcomeTag::Err,
                        "uncertain" => OutcomeTag::Uncertain,
                        "exhausted" => OutcomeTag::Exhausted,
                        _ => OutcomeTag::Failed,
                    };
                    Ok(Value::outcome(tag, untyped(x)))
                }
                None => mismatch("an outcome object"),
            }
        }
    }
}

/// JSON read with no declared type: objects become dicts, arrays lists.
pub fn untyped(j: &Json) -> Value {
    match j {
        Json::Null => Value::None,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::Int(i),
            None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::str(s.as_str()),
        Json::Array(a) => Value::list(a.iter().map(untyped).collect()),
        Json::Object(m) => {
            let mut d = Dict::default();
            for (k, v) in m {
                d.insert(Key(Value::str(k.as_str())), untyped(v));
            }
            Value::dict(d)
        }
    }
}
