//! JSON-RPC 2.0 as MCP uses it: what an incoming message is, and the messages Kora sends.

use serde_json::{json, Value as Json};

/// One message from a server, classified.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    /// The answer to request `id`: its `result`, or its `error` (code, message).
    Response {
        id: u64,
        result: Result<Json, (i64, String)>,
    },
    /// A request the server makes of the client (`ping`, `roots/list`, ...).
    Request {
        id: Json,
        method: String,
    },
    Notification {
        method: String,
    },
    /// Valid JSON that is not a JSON-RPC message Kora could have been sent.
    Invalid(String),
}

/// Classifies one parsed message. A response to an id Kora never uses (a string, a negative
/// number) is `Invalid`: Kora's ids are counting numbers.
pub fn classify(j: &Json) -> Incoming {
    let Some(obj) = j.as_object() else {
        return Incoming::Invalid(format!("not an object: {}", clip(&j.to_string())));
    };
    if let Some(method) = obj.get("method").and_then(Json::as_str) {
        return match obj.get("id") {
            Some(id) if !id.is_null() => Incoming::Request {
                id: id.clone(),
                method: method.to_string(),
            },
            _ => Incoming::Notification {
                method: method.to_string(),
            },
        };
    }
    let Some(id) = obj.get("id").and_then(Json::as_u64) else {
        return Incoming::Invalid(format!(
            "a message with no method and no request id: {}",
            clip(&j.to_string())
        ));
    };
    if let Some(e) = obj.get("error") {
        let code = e.get("code").and_then(Json::as_i64).unwrap_or(0);
        let msg = e
            .get("message")
            .and_then(Json::as_str)
            .unwrap_or("(no message)")
            .to_string();
        return Incoming::Response {
            id,
            result: Err((code, msg)),
        };
    }
    match obj.get("result") {
        Some(r) => Incoming::Response {
            id,
            result: Ok(r.clone()),
        },
        None => Incoming::Invalid(format!(
            "a response with neither result nor error: {}",
            clip(&j.to_string())
        )),
    }
}

pub fn request(id: u64, method: &str, params: Json) -> Json {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

pub fn notification(method: &str, params: Option<Json>) -> Json {
    match params {
        Some(p) => json!({"jsonrpc": "2.0", "method": method, "params": p}),
        None => json!({"jsonrpc": "2.0", "method": method}),
    }
}

/// The answer Kora gives a server's request: `ping` is answered, anything else is not offered.
pub fn answer_server_request(id: &Json, method: &str) -> Json {
    if method == "ping" {
        json!({"jsonrpc": "2.0", "id": id, "result": {}})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("Kora does not offer `{method}`")}})
    }
}

/// At most 120 characters of a text, for messages.
pub fn clip(s: &str) -> String {
    let mut out: String = s.chars().take(120).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn each_shape_is_told_apart() {
        assert_eq!(
            classify(&json!({"jsonrpc": "2.0", "id": 3, "result": {"x": 1}})),
            Incoming::Response {
                id: 3,
                result: Ok(json!({"x": 1}))
            }
        );
        assert_eq!(
            classify(
                &json!({"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "bad"}})
            ),
            Incoming::Response {
                id: 4,
                result: Err((-32602, "bad".into()))
            }
        );
        assert_eq!(
            classify(&json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})),
            Incoming::Notification {
                method: "notifications/tools/list_changed".into()
            }
        );
        assert!(matches!(
            classify(&json!({"jsonrpc": "2.0", "id": "a", "method": "ping"})),
            Incoming::Request { .. }
        ));
        assert!(matches!(classify(&json!([1, 2])), Incoming::Invalid(_)));
        assert!(matches!(
            classify(&json!({"id": -1, "result": 1})),
            Incoming::Invalid(_)
        ));
    }

    proptest! {
        #[test]
        fn any_json_is_classified_without_a_panic(text in "[\\[\\]{}\",:0-9a-z -]{0,60}") {
            if let Ok(j) = serde_json::from_str::<Json>(&text) {
                let _ = classify(&j);
            }
        }
    }
}
