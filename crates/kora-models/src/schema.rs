//! `Shape`, a Kora type as the wire sees it: its JSON Schema, the ok/uncertain envelope, and validation naming the path.

use serde_json::{json, Map, Value};

/// A Kora type described independently of the interpreter.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Str,
    Int,
    Float,
    Bool,
    Null,
    List(Box<Shape>),
    /// A dict with string keys.
    Dict(Box<Shape>),
    Tuple(Vec<Shape>),
    /// A record type. A field that is not required may be absent or `null`.
    Record {
        name: String,
        fields: Vec<Field>,
    },
    /// A union of string literals: `type Risk = "low" | "medium" | "high"`.
    Literal(Vec<String>),
    Optional(Box<Shape>),
    Union(Vec<Shape>),
    Any,
    /// A JSON Schema given as it is (an MCP tool's `inputSchema`): sent unchanged, and
    /// validated by whoever owns it, not here.
    Schema(Value),
}

/// One field of a record.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub shape: Shape,
    pub required: bool,
}

impl Field {
    pub fn new(name: impl Into<String>, shape: Shape, required: bool) -> Field {
        Field {
            name: name.into(),
            shape,
            required,
        }
    }
}

impl Shape {
    pub fn list(item: Shape) -> Shape {
        Shape::List(Box::new(item))
    }
    pub fn dict(value: Shape) -> Shape {
        Shape::Dict(Box::new(value))
    }
    pub fn optional(inner: Shape) -> Shape {
        Shape::Optional(Box::new(inner))
    }
    /// A record from `(name, shape, required)` triples.
    pub fn record(name: impl Into<String>, fields: Vec<(&str, Shape, bool)>) -> Shape {
        Shape::Record {
            name: name.into(),
            fields: fields
                .into_iter()
                .map(|(n, s, r)| Field::new(n, s, r))
                .collect(),
        }
    }

    /// Whether `null` is one of this shape's values.
    pub fn accepts_null(&self) -> bool {
        match self {
            Shape::Null | Shape::Optional(_) | Shape::Any | Shape::Schema(_) => true,
            Shape::Union(v) => v.iter().any(Shape::accepts_null),
            _ => false,
        }
    }

    /// Whether OpenAI's strict structured-output mode can express this shape exactly.
    /// Dicts (open keys), tuples (`prefixItems`) and `Any` cannot; such a schema is sent non-strict.
    pub fn strict_compatible(&self) -> bool {
        match self {
            Shape::Str | Shape::Int | Shape::Float | Shape::Bool | Shape::Null => true,
            Shape::Literal(v) => !v.is_empty(),
            Shape::List(s) | Shape::Optional(s) => s.strict_compatible(),
            Shape::Record { fields, .. } => fields.iter().all(|f| f.shape.strict_compatible()),
            Shape::Union(v) => !v.is_empty() && v.iter().all(Shape::strict_compatible),
            Shape::Dict(_) | Shape::Tuple(_) | Shape::Any | Shape::Schema(_) => false,
        }
    }

    /// A short human name for messages: `string`, `list of integer`, `Expense`, ...
    pub fn describe(&self) -> String {
        match self {
            Shape::Str => "string".into(),
            Shape::Int => "integer".into(),
            Shape::Float => "number".into(),
            Shape::Bool => "boolean".into(),
            Shape::Null => "null".into(),
            Shape::List(s) => format!("list of {}", s.describe()),
            Shape::Dict(s) => format!("dict of {}", s.describe()),
            Shape::Tuple(v) => format!("tuple of {}", v.len()),
            Shape::Record { name, .. } => format!("object ({name})"),
            Shape::Literal(v) => {
                let opts: Vec<String> = v.iter().map(|s| format!("{s:?}")).collect();
                format!("one of {}", opts.join(", "))
            }
            Shape::Optional(s) => format!("{} or null", s.describe()),
            Shape::Union(v) => {
                let names: Vec<String> = v.iter().map(Shape::describe).collect();
                names.join(" or ")
            }
            Shape::Any => "any value".into(),
            Shape::Schema(_) => "a value its schema accepts".into(),
        }
    }
}

/// The JSON Schema of a shape. Objects close with `additionalProperties: false` and list every
/// property in `required`; a field that is not required is made nullable instead of optional,
/// which is what OpenAI's strict mode demands.
pub fn json_schema(shape: &Shape) -> Value {
    match shape {
        Shape::Str => json!({"type": "string"}),
        Shape::Int => json!({"type": "integer"}),
        Shape::Float => json!({"type": "number"}),
        Shape::Bool => json!({"type": "boolean"}),
        Shape::Null => json!({"type": "null"}),
        Shape::List(item) => json!({"type": "array", "items": json_schema(item)}),
        Shape::Dict(value) => json!({"type": "object", "additionalProperties": json_schema(value)}),
        Shape::Tuple(items) => {
            let prefix: Vec<Value> = items.iter().map(json_schema).collect();
            json!({
                "type": "array",
                "prefixItems": prefix,
                "items": false,
                "minItems": items.len(),
                "maxItems": items.len(),
            })
        }
        Shape::Record { fields, .. } => {
            let mut props = Map::new();
            let mut required = Vec::new();
            for f in fields {
                let mut s = json_schema(&f.shape);
                if !f.required && !f.shape.accepts_null() {
                    s = json!({"anyOf": [s, {"type": "null"}]});
                }
                props.insert(f.name.clone(), s);
                required.push(Value::String(f.name.clone()));
            }
            json!({
                "type": "object",
                "properties": props,
                "required": required,
                "additionalProperties": false,
            })
        }
        Shape::Literal(options) => json!({"type": "string", "enum": options}),
        Shape::Optional(inner) => json!({"anyOf": [json_schema(inner), {"type": "null"}]}),
        Shape::Union(options) => {
            let v: Vec<Value> = options.iter().map(json_schema).collect();
            json!({ "anyOf": v })
        }
        Shape::Any => json!({}),
        Shape::Schema(s) => s.clone(),
    }
}

/// The one-of a typed `analyze` answers with: `{"ok": <T>}` or `{"uncertain": "<reason>"}`.
pub fn envelope_schema(shape: &Shape) -> Value {
    json!({
        "anyOf": [
            {
                "type": "object",
                "properties": {"ok": json_schema(shape)},
                "required": ["ok"],
                "additionalProperties": false,
            },
            {
                "type": "object",
                "properties": {"uncertain": {"type": "string"}},
                "required": ["uncertain"],
                "additionalProperties": false,
            },
        ]
    })
}

/// The same envelope in the form OpenAI's strict mode accepts, whose root must be an object:
/// both keys are present and exactly one is non-null —
/// `{"ok": <T>, "uncertain": null}` or `{"ok": null, "uncertain": "<reason>"}`.
/// [`crate::response::decode_outcome`] reads both forms.
pub fn strict_envelope_schema(shape: &Shape) -> Value {
    let ok = if shape.accepts_null() {
        json_schema(shape)
    } else {
        json!({"anyOf": [json_schema(shape), {"type": "null"}]})
    };
    json!({
        "type": "object",
        "properties": {
            "ok": ok,
            "uncertain": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
        "required": ["ok", "uncertain"],
        "additionalProperties": false,
    })
}

/// Checks a value against a shape, naming the first mismatching path:
/// `$.items[2].amount: expected number, found string`.
pub fn validate(shape: &Shape, value: &Value) -> Result<(), String> {
    conform(shape, value.clone()).map(|_| ())
}

/// [`validate`], returning the value normalised to the shape: an integral float where an
/// integer is expected becomes an integer, an integer where a float is expected becomes a float.
pub fn conform(shape: &Shape, value: Value) -> Result<Value, String> {
    let mut path = String::from("$");
    conform_at(shape, value, &mut path).map_err(|msg| format!("{path}: {msg}"))
}

/// On error, `path` is left pointing at the mismatch.
fn conform_at(shape: &Shape, value: Value, path: &mut String) -> Result<Value, String> {
    match (shape, value) {
        (Shape::Any | Shape::Schema(_), v) => Ok(v),
        (Shape::Str, v @ Value::String(_)) => Ok(v),
        (Shape::Bool, v @ Value::Bool(_)) => Ok(v),
        (Shape::Null, Value::Null) => Ok(Value::Null),
        (Shape::Int, Value::Number(n)) => {
            if n.is_i64() || n.is_u64() {
                return Ok(Value::Number(n));
            }
            match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Value::from(f as i64)),
                _ => Err(format!("expected integer, found number {n}")),
            }
        }
        (Shape::Float, Value::Number(n)) => match n.as_f64() {
            Some(f) => Ok(Value::from(f)),
            None => Err(format!("expected number, found {n}")),
        },
        (Shape::Literal(options), Value::String(s)) => {
            if options.contains(&s) {
                Ok(Value::String(s))
            } else {
                Err(format!("expected {}, found {s:?}", shape.describe()))
            }
        }
        (Shape::List(item), Value::Array(items)) => {
            let mut out = Vec::with_capacity(items.len());
            for (i, v) in items.into_iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(conform_at(item, v, path)?);
                path.truncate(len);
            }
            Ok(Value::Array(out))
        }
        (Shape::Tuple(shapes), Value::Array(items)) => {
            if items.len() != shapes.len() {
                return Err(format!(
                    "expected {} items, found {}",
                    shapes.len(),
                    items.len()
                ));
            }
            let mut out = Vec::with_capacity(items.len());
            for (i, (s, v)) in shapes.iter().zip(items).enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                out.push(conform_at(s, v, path)?);
                path.truncate(len);
            }
            Ok(Value::Array(out))
        }
        (Shape::Dict(value_shape), Value::Object(map)) => {
            let mut out = Map::new();
            for (k, v) in map {
                let len = path.len();
                push_key(path, &k);
                let v = conform_at(value_shape, v, path)?;
                path.truncate(len);
                out.insert(k, v);
            }
            Ok(Value::Object(out))
        }
        (Shape::Record { fields, .. }, Value::Object(mut map)) => {
            let mut out = Map::new();
            for f in fields {
                let len = path.len();
                push_key(path, &f.name);
                match map.remove(&f.name) {
                    None if f.required => return Err("missing required field".into()),
                    None => {}
                    Some(Value::Null) if !f.required && !f.shape.accepts_null() => {
                        out.insert(f.name.clone(), Value::Null);
                    }
                    Some(v) => {
                        let v = conform_at(&f.shape, v, path)?;
                        out.insert(f.name.clone(), v);
                    }
                }
                path.truncate(len);
            }
            if let Some(extra) = map.keys().next() {
                push_key(path, extra);
                return Err("unexpected field".into());
            }
            Ok(Value::Object(out))
        }
        (Shape::Optional(_), Value::Null) => Ok(Value::Null),
        (Shape::Optional(inner), v) => conform_at(inner, v, path),
        (Shape::Union(options), v) => {
            // The first option that conforms wins; a failure names the whole union at this path.
            for option in options {
                let mut scratch = path.clone();
                if let Ok(out) = conform_at(option, v.clone(), &mut scratch) {
                    return Ok(out);
                }
            }
            Err(format!(
                "expected {}, found {}",
                shape.describe(),
                kind_of(&v)
            ))
        }
        (shape, v) => Err(format!(
            "expected {}, found {}",
            expected_kind(shape),
            kind_of(&v)
        )),
    }
}

fn push_key(path: &mut String, key: &str) {
    let plain = !key.is_empty()
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !key.starts_with(|c: char| c.is_ascii_digit());
    if plain {
        path.push('.');
        path.push_str(key);
    } else {
        path.push_str(&format!("[{}]", Value::String(key.to_string())));
    }
}

/// The JSON kind a shape expects, for the first half of a mismatch message.
fn expected_kind(shape: &Shape) -> String {
    match shape {
        Shape::List(_) | Shape::Tuple(_) => "array".into(),
        Shape::Dict(_) | Shape::Record { .. } => "object".into(),
        Shape::Literal(_) => "string".into(),
        other => other.describe(),
    }
}

/// The JSON kind of a value, for the second half of a mismatch message.
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expense() -> Shape {
        Shape::record(
            "Expense",
            vec![
                ("amount", Shape::Float, true),
                ("note", Shape::Str, false),
                (
                    "risk",
                    Shape::Literal(vec!["low".into(), "high".into()]),
                    true,
                ),
            ],
        )
    }

    fn report() -> Shape {
        Shape::record("Report", vec![("items", Shape::list(expense()), true)])
    }

    #[test]
    fn record_schema_is_strict_friendly() {
        let s = json_schema(&expense());
        assert_eq!(s["type"], "object");
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["required"], json!(["amount", "note", "risk"]));
        assert_eq!(
            s["properties"]["note"],
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
        );
        assert_eq!(s["properties"]["risk"]["enum"], json!(["low", "high"]));
        assert!(expense().strict_compatible());
        assert!(!Shape::dict(Shape::Int).strict_compatible());
        assert!(!Shape::Tuple(vec![Shape::Int]).strict_compatible());
    }

    #[test]
    fn scalar_and_container_schemas() {
        assert_eq!(json_schema(&Shape::Int), json!({"type": "integer"}));
        assert_eq!(
            json_schema(&Shape::list(Shape::Bool)),
            json!({"type": "array", "items": {"type": "boolean"}})
        );
        assert_eq!(
            json_schema(&Shape::optional(Shape::Str)),
            json!({"anyOf": [{"type": "string"}, {"type": "null"}]})
        );
        let t = json_schema(&Shape::Tuple(vec![Shape::Int, Shape::Str]));
        assert_eq!(t["minItems"], 2);
        assert_eq!(t["prefixItems"][1], json!({"type": "string"}));
        assert_eq!(json_schema(&Shape::Any), json!({}));
    }

    #[test]
    fn envelopes() {
        let e = envelope_schema(&Shape::Int);
        assert_eq!(
            e["anyOf"][0]["properties"]["ok"],
            json!({"type": "integer"})
        );
        assert_eq!(e["anyOf"][1]["required"], json!(["uncertain"]));
        let s = strict_envelope_schema(&Shape::Int);
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], json!(["ok", "uncertain"]));
        assert_eq!(s["properties"]["ok"]["anyOf"][1], json!({"type": "null"}));
    }

    #[test]
    fn validate_names_the_path() {
        let v = json!({"items": [
            {"amount": 1.0, "risk": "low"},
            {"amount": 2, "risk": "high", "note": null},
            {"amount": "3", "risk": "low"},
        ]});
        assert_eq!(
            validate(&report(), &v).unwrap_err(),
            "$.items[2].amount: expected number, found string"
        );
    }

    #[test]
    fn validate_record_rules() {
        let missing = json!({"note": "x", "risk": "low"});
        assert_eq!(
            validate(&expense(), &missing).unwrap_err(),
            "$.amount: missing required field"
        );
        let extra = json!({"amount": 1, "risk": "low", "colour": "red"});
        assert_eq!(
            validate(&expense(), &extra).unwrap_err(),
            "$.colour: unexpected field"
        );
        let lit = json!({"amount": 1, "risk": "medium"});
        assert_eq!(
            validate(&expense(), &lit).unwrap_err(),
            "$.risk: expected one of \"low\", \"high\", found \"medium\""
        );
        assert_eq!(
            validate(&expense(), &json!([1])).unwrap_err(),
            "$: expected object, found array"
        );
    }

    #[test]
    fn numbers_normalise() {
        assert_eq!(conform(&Shape::Int, json!(3.0)).unwrap(), json!(3));
        assert!(conform(&Shape::Int, json!(3.5)).is_err());
        assert_eq!(conform(&Shape::Float, json!(3)).unwrap(), json!(3.0));
        assert_eq!(
            validate(&Shape::Int, &json!("3")).unwrap_err(),
            "$: expected integer, found string"
        );
    }

    #[test]
    fn dicts_tuples_unions() {
        let d = Shape::dict(Shape::Int);
        assert_eq!(
            validate(&d, &json!({"a": 1, "b c": "x"})).unwrap_err(),
            "$[\"b c\"]: expected integer, found string"
        );
        let t = Shape::Tuple(vec![Shape::Int, Shape::Str]);
        assert!(validate(&t, &json!([1, "a"])).is_ok());
        assert_eq!(
            validate(&t, &json!([1])).unwrap_err(),
            "$: expected 2 items, found 1"
        );
        let u = Shape::Union(vec![Shape::Str, Shape::Int]);
        assert!(validate(&u, &json!(4)).is_ok());
        assert_eq!(
            validate(&u, &json!(true)).unwrap_err(),
            "$: expected string or integer, found boolean"
        );
        assert!(validate(&Shape::optional(Shape::Int), &Value::Null).is_ok());
        assert!(validate(&Shape::Any, &json!({"x": [1]})).is_ok());
    }
}
