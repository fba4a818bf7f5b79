//! Checking a tool's arguments against its `inputSchema` before they are sent, so a call the
//! server would refuse is an `Err` naming the path, and nothing leaves the program.
//!
//! The common core of JSON Schema: `type` (one or several), `enum`, `const`, `properties`,
//! `required`, `additionalProperties`, `items`, `minItems`/`maxItems`,
//! `minLength`/`maxLength`, `minimum`/`maximum` (and their exclusive forms), `anyOf`,
//! `oneOf`, `allOf`. Anything else (`$ref`, `pattern`, formats) is left to the server, which
//! checks its own schema again.

use serde_json::Value as Json;

/// `Ok` when `v` fits `schema`; else the first mismatch, as `$.path: what`.
pub fn check(schema: &Json, v: &Json) -> Result<(), String> {
    let mut path = String::from("$");
    at(schema, v, &mut path, 0).map_err(|m| format!("{path}: {m}"))
}

fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

fn is_type(t: &str, v: &Json) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        "number" => v.is_number(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => true,
    }
}

fn article(t: &str) -> String {
    match t {
        "integer" | "array" | "object" => format!("an {t}"),
        "null" => "null".into(),
        _ => format!("a {t}"),
    }
}

fn at(s: &Json, v: &Json, path: &mut String, depth: usize) -> Result<(), String> {
    // A schema deeper than this is checked by the server alone.
    if depth > 64 {
        return Ok(());
    }
    let Some(s) = s.as_object() else {
        return match s {
            Json::Bool(false) => Err("no value is allowed here".into()),
            _ => Ok(()),
        };
    };
    match s.get("type") {
        Some(Json::String(t)) if !is_type(t, v) => {
            return Err(format!("expected {}, found {}", article(t), kind(v)))
        }
        Some(Json::Array(ts)) => {
            let names: Vec<&str> = ts.iter().filter_map(Json::as_str).collect();
            if !names.is_empty() && !names.iter().any(|t| is_type(t, v)) {
                let want: Vec<String> = names.iter().map(|t| article(t)).collect();
                return Err(format!("expected {}, found {}", want.join(" or "), kind(v)));
            }
        }
        _ => {}
    }
    if let Some(e) = s.get("enum").and_then(Json::as_array) {
        if !e.contains(v) {
            let opts: Vec<String> = e.iter().map(Json::to_string).collect();
            return Err(format!("{v} is not one of {}", opts.join(", ")));
        }
    }
    if let Some(c) = s.get("const") {
        if c != v {
            return Err(format!("expected {c}"));
        }
    }
    match v {
        Json::String(text) => {
            let n = text.chars().count() as u64;
            if let Some(min) = s.get("minLength").and_then(Json::as_u64).filter(|m| n < *m) {
                return Err(format!("shorter than {min} characters"));
            }
            if let Some(max) = s.get("maxLength").and_then(Json::as_u64).filter(|m| n > *m) {
                return Err(format!("longer than {max} characters"));
            }
        }
        Json::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            let bound = |k: &str| s.get(k).and_then(Json::as_f64);
            if let Some(m) = bound("minimum").filter(|m| x < *m) {
                return Err(format!("{x} is below the minimum {m}"));
            }
            if let Some(m) = bound("maximum").filter(|m| x > *m) {
                return Err(format!("{x} is above the maximum {m}"));
            }
            if let Some(m) = bound("exclusiveMinimum").filter(|m| x <= *m) {
                return Err(format!("{x} is not above {m}"));
            }
            if let Some(m) = bound("exclusiveMaximum").filter(|m| x >= *m) {
                return Err(format!("{x} is not below {m}"));
            }
        }
        Json::Array(items) => {
            let n = items.len() as u64;
            if let Some(min) = s.get("minItems").and_then(Json::as_u64).filter(|m| n < *m) {
                return Err(format!("fewer than {min} items"));
            }
            if let Some(max) = s.get("maxItems").and_then(Json::as_u64).filter(|m| n > *m) {
                return Err(format!("more than {max} items"));
            }
            if let Some(item) = s.get("items") {
                for (i, x) in items.iter().enumerate() {
                    let mark = path.len();
                    path.push_str(&format!("[{i}]"));
                    at(item, x, path, depth + 1)?;
                    path.truncate(mark);
                }
            }
        }
        Json::Object(m) => {
            if let Some(req) = s.get("required").and_then(Json::as_array) {
                for r in req.iter().filter_map(Json::as_str) {
                    if !m.contains_key(r) {
                        return Err(format!("missing the required argument `{r}`"));
                    }
                }
            }
            let props = s.get("properties").and_then(Json::as_object);
            for (k, x) in m {
                let mark = path.len();
                path.push('.');
                path.push_str(k);
                match (props.and_then(|p| p.get(k)), s.get("additionalProperties")) {
                    (Some(ps), _) => at(ps, x, path, depth + 1)?,
                    (None, Some(Json::Bool(false))) => {
                        let known: Vec<&String> =
                            props.map(|p| p.keys().collect()).unwrap_or_default();
                        path.truncate(mark);
                        return Err(format!(
                            "no argument `{k}` (it takes: {})",
                            known
                                .iter()
                                .map(|k| k.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                    (None, Some(extra)) => at(extra, x, path, depth + 1)?,
                    (None, None) => {}
                }
                path.truncate(mark);
            }
        }
        _ => {}
    }
    if let Some(all) = s.get("allOf").and_then(Json::as_array) {
        for sub in all {
            at(sub, v, path, depth + 1)?;
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(any) = s.get(key).and_then(Json::as_array) {
            let mut first = None;
            let fits = any.iter().any(|sub| {
                let mut p = path.clone();
                match at(sub, v, &mut p, depth + 1) {
                    Ok(()) => true,
                    Err(e) => {
                        first.get_or_insert(e);
                        false
                    }
                }
            });
            if !fits && !any.is_empty() {
                return Err(first.unwrap_or_else(|| "fits none of its alternatives".into()));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn read_file() -> Json {
        json!({"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "number", "minimum": 0}}, "required": ["path"], "additionalProperties": false})
    }

    #[test]
    fn mismatches_name_their_path() {
        assert_eq!(check(&read_file(), &json!({"path": "a"})), Ok(()));
        assert_eq!(
            check(&read_file(), &json!({})),
            Err("$: missing the required argument `path`".into())
        );
        assert_eq!(
            check(&read_file(), &json!({"path": 3})),
            Err("$.path: expected a string, found an integer".into())
        );
        assert!(check(&read_file(), &json!({"path": "a", "tail": 1}))
            .expect_err("extra")
            .contains("no argument `tail`"));
        assert!(check(&read_file(), &json!({"path": "a", "head": -1}))
            .expect_err("min")
            .contains("minimum"));
        let s = json!({"type": "object", "properties": {"xs": {"type": "array", "items": {"enum": ["a", "b"]}}}});
        assert!(check(&s, &json!({"xs": ["a", "c"]}))
            .expect_err("enum")
            .starts_with("$.xs[1]:"));
    }

    proptest! {
        #[test]
        fn any_schema_and_value_check_without_a_panic(s in "[\\[\\]{}\",:0-9a-z -]{0,50}", v in "[\\[\\]{}\",:0-9a-z -]{0,30}") {
            if let (Ok(s), Ok(v)) = (serde_json::from_str::<Json>(&s), serde_json::from_str::<Json>(&v)) {
                let _ = check(&s, &v);
            }
        }
    }
}
