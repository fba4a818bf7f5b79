//! Replies: a non-streamed body of either wire shape parsed into `Reply`, and a typed answer decoded into ok / uncertain / mismatch.

use std::fmt;

use serde_json::{Map, Value};

use crate::config::{Api, Structured};
use crate::schema::{conform, kind_of, Shape};
use crate::transport::Attempt;

/// Tokens a provider reported.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }
    pub fn add(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
    }
    pub fn is_zero(&self) -> bool {
        self.input_tokens == 0 && self.output_tokens == 0
    }
}

/// One tool call the model asked for. `arguments` is the parsed JSON object; arguments that
/// were not valid JSON stay a JSON string so the caller's validation reports them.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

/// What one model request produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reply {
    /// The visible text (for a typed result, the JSON text to decode).
    pub content: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Usage,
    /// Whether the server said how many tokens it used; when it did not, the transport
    /// charges an estimate instead (`usage_estimate.rs`).
    pub usage_reported: bool,
    /// OpenAI's explicit refusal text, when the model refused instead of answering.
    pub refusal: Option<String>,
    /// Why the model stopped, as the provider says it: `stop`, `length`, `tool_calls`, ...
    /// (OpenAI's `finish_reason`, Ollama's `done_reason`).
    pub finish_reason: Option<String>,
    /// The provider's id for this reply (OpenAI's `id`).
    pub response_id: Option<String>,
    /// The model that answered, as the provider names it (may differ from the one asked for).
    pub response_model: Option<String>,
    /// One record per HTTP attempt the transport made (empty for a reply parsed directly).
    pub attempts: Vec<Attempt>,
}

impl Reply {
    /// Whether the answer was cut off at the output token limit.
    pub fn truncated(&self) -> bool {
        self.finish_reason.as_deref() == Some("length")
    }
}

/// A string field of a reply, when present and not empty.
pub(crate) fn text_at(v: &Value, key: &str) -> Option<String> {
    v.get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// A body that is not a reply of the expected shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MalformedReply(pub String);

impl fmt::Display for MalformedReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MalformedReply {}

fn bad(msg: impl Into<String>) -> MalformedReply {
    MalformedReply(msg.into())
}

/// Parses a non-streamed body of the given wire shape.
pub fn parse_reply(api: Api, body: &[u8]) -> Result<Reply, MalformedReply> {
    match api {
        Api::OpenAi => parse_openai(body),
        Api::Ollama => parse_ollama(body),
    }
}

fn parse_json(body: &[u8]) -> Result<Value, MalformedReply> {
    serde_json::from_slice(body).map_err(|e| bad(format!("reply is not JSON ({e})")))
}

/// The message of an `{"error": ...}` body (OpenAI's object form or Ollama's string form).
pub fn error_message(v: &Value) -> Option<String> {
    match v.get("error")? {
        Value::String(s) => Some(s.clone()),
        Value::Object(o) => Some(
            o.get("message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| Value::Object(o.clone()).to_string()),
        ),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn u64_at(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// Tool-call arguments: a JSON string is parsed, an object is kept, an empty string is `{}`.
pub fn parse_arguments(v: Option<&Value>) -> Value {
    match v {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(Value::String(s)) if s.trim().is_empty() => Value::Object(Map::new()),
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(other) => other.clone(),
    }
}

/// Text of a message's `content`: a string, null, or (some gateways) an array of text parts.
fn content_text(v: Option<&Value>) -> Result<String, MalformedReply> {
    match v {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Array(parts)) => Ok(parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect()),
        Some(other) => Err(bad(format!(
            "message content is {}, not text",
            kind_of(other)
        ))),
    }
}

fn tool_calls(v: Option<&Value>) -> Result<Vec<ToolCall>, MalformedReply> {
    let Some(list) = v else { return Ok(Vec::new()) };
    let list = match list {
        Value::Null => return Ok(Vec::new()),
        Value::Array(a) => a,
        other => return Err(bad(format!("tool_calls is {}, not a list", kind_of(other)))),
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, call) in list.iter().enumerate() {
        let function = call.get("function").unwrap_or(&Value::Null);
        let name = function
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("tool call {i} has no function name")))?;
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| format!("call_{i}"));
        let arguments = parse_arguments(function.get("arguments"));
        out.push(ToolCall {
            id,
            name: name.to_string(),
            arguments,
        });
    }
    Ok(out)
}

/// Parses a chat-completions body.
pub fn parse_openai(body: &[u8]) -> Result<Reply, MalformedReply> {
    let v = parse_json(body)?;
    if let Some(msg) = error_message(&v) {
        return Err(bad(format!("provider error: {msg}")));
    }
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| bad("reply has no choices"))?;
    let message = choice
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| bad("reply's first choice has no message"))?;
    let reported = v.get("usage").filter(|u| u.is_object());
    let usage = reported.map_or(Usage::default(), |u| Usage {
        input_tokens: u64_at(u, "prompt_tokens"),
        output_tokens: u64_at(u, "completion_tokens"),
    });
    Ok(Reply {
        content: content_text(message.get("content"))?,
        tool_calls: tool_calls(message.get("tool_calls"))?,
        usage,
        usage_reported: reported.is_some(),
        refusal: text_at(message, "refusal"),
        finish_reason: text_at(choice, "finish_reason"),
        response_id: text_at(&v, "id"),
        response_model: text_at(&v, "model"),
        attempts: Vec::new(),
    })
}

/// Parses an Ollama `/api/chat` body (`stream: false`).
pub fn parse_ollama(body: &[u8]) -> Result<Reply, MalformedReply> {
    let v = parse_json(body)?;
    if let Some(msg) = error_message(&v) {
        return Err(bad(format!("provider error: {msg}")));
    }
    let message = v
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| bad("reply has no message"))?;
    Ok(Reply {
        content: content_text(message.get("content"))?,
        tool_calls: tool_calls(message.get("tool_calls"))?,
        usage: Usage {
            input_tokens: u64_at(&v, "prompt_eval_count"),
            output_tokens: u64_at(&v, "eval_count"),
        },
        usage_reported: v.get("prompt_eval_count").is_some() || v.get("eval_count").is_some(),
        refusal: None,
        finish_reason: text_at(&v, "done_reason"),
        response_id: None,
        response_model: text_at(&v, "model"),
        attempts: Vec::new(),
    })
}

/// A typed answer, decoded.
#[derive(Clone, Debug, PartialEq)]
pub enum Decoded {
    /// The `ok` value, conformed to the shape.
    Ok(Value),
    /// The model declined: its reason.
    Uncertain(String),
    /// The answer matched neither arm; names the first mismatching path (`$.items[2].amount: ...`).
    Mismatch(String),
}

/// Decodes the envelope `{"ok": T}` / `{"uncertain": "why"}` (also the strict form with both keys,
/// one null). Paths in a mismatch are relative to the `ok` value. `Prompt` mode is lenient about
/// code fences and prose around the first JSON object; the enforced modes are not.
pub fn decode_outcome(reply_text: &str, shape: &Shape, structured: Structured) -> Decoded {
    let parsed = match structured {
        Structured::Prompt => extract_json(reply_text),
        Structured::JsonSchema | Structured::JsonObject => {
            serde_json::from_str::<Value>(reply_text.trim()).ok()
        }
    };
    let Some(v) = parsed else {
        return Decoded::Mismatch(format!(
            "$: expected a JSON object, found {}",
            describe_text(reply_text)
        ));
    };
    let Value::Object(mut map) = v else {
        return Decoded::Mismatch(format!(
            "$: expected {{\"ok\": ...}} or {{\"uncertain\": \"...\"}}, found {}",
            kind_of(&v)
        ));
    };
    let uncertain = map.remove("uncertain").filter(|u| !u.is_null());
    let ok = map.remove("ok");
    match (ok, uncertain) {
        (Some(ok), Some(_)) if !ok.is_null() => {
            Decoded::Mismatch("$: the answer gave both \"ok\" and \"uncertain\"".into())
        }
        (_, Some(Value::String(reason))) => {
            let reason = reason.trim();
            Decoded::Uncertain(if reason.is_empty() {
                "(no reason given)".into()
            } else {
                reason.to_string()
            })
        }
        (_, Some(other)) => Decoded::Mismatch(format!(
            "$.uncertain: expected string, found {}",
            kind_of(&other)
        )),
        (Some(ok), None) => match conform(shape, ok) {
            Ok(v) => Decoded::Ok(v),
            Err(msg) => Decoded::Mismatch(msg),
        },
        (None, None) => {
            let keys: Vec<&str> = map.keys().map(String::as_str).take(5).collect();
            Decoded::Mismatch(format!(
                "$: expected {{\"ok\": ...}} or {{\"uncertain\": \"...\"}}, found an object with keys [{}]",
                keys.join(", ")
            ))
        }
    }
}

fn describe_text(text: &str) -> String {
    let t = text.trim();
    if t.is_empty() {
        return "an empty answer".into();
    }
    let mut snippet: String = t.chars().take(40).collect();
    if snippet.len() < t.len() {
        snippet.push_str("...");
    }
    format!("text {snippet:?}")
}

/// Finds the JSON object in a chatty answer: the whole text, then a fenced block, then the
/// first `{` from which a JSON object parses.
pub fn extract_json(text: &str) -> Option<Value> {
    let t = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        if v.is_object() {
            return Some(v);
        }
    }
    if let Some(inner) = fenced_block(t) {
        if let Ok(v) = serde_json::from_str::<Value>(inner.trim()) {
            if v.is_object() {
                return Some(v);
            }
        }
    }
    // Bounded number of starting points keeps a huge chatty answer linear-ish.
    for (start, _) in t.match_indices('{').take(64) {
        let mut stream = serde_json::Deserializer::from_str(&t[start..]).into_iter::<Value>();
        if let Some(Ok(v)) = stream.next() {
            if v.is_object() {
                return Some(v);
            }
        }
    }
    None
}

/// The body of the first ``` fence (its language tag line dropped).
fn fenced_block(t: &str) -> Option<&str> {
    let open = t.find("```")?;
    let after = &t[open + 3..];
    let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
    let body = &after[body_start..];
    let close = body.find("```")?;
    Some(&body[..close])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn openai_reply_with_usage() {
        let body = br#"{"id":"x","model":"m-2024","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}"#;
        let r = parse_openai(body).unwrap();
        assert_eq!(r.content, "hi");
        assert_eq!(r.finish_reason.as_deref(), Some("stop"));
        assert_eq!(r.response_id.as_deref(), Some("x"));
        assert_eq!(r.response_model.as_deref(), Some("m-2024"));
        assert!(!r.truncated());
        assert_eq!(
            r.usage,
            Usage {
                input_tokens: 12,
                output_tokens: 3
            }
        );
        assert!(r.tool_calls.is_empty());
    }

    #[test]
    fn openai_tool_calls_and_refusal() {
        let body = br#"{"choices":[{"message":{"role":"assistant","content":null,"refusal":"no","tool_calls":[
            {"id":"call_a","type":"function","function":{"name":"lookup","arguments":"{\"q\":\"x\"}"}},
            {"type":"function","function":{"name":"now","arguments":""}},
            {"id":"c","type":"function","function":{"name":"bad","arguments":"{oops"}}]}}]}"#;
        let r = parse_openai(body).unwrap();
        assert_eq!(r.content, "");
        assert_eq!(r.refusal.as_deref(), Some("no"));
        assert_eq!(r.tool_calls[0].id, "call_a");
        assert_eq!(r.tool_calls[0].arguments, json!({"q": "x"}));
        assert_eq!(r.tool_calls[1].id, "call_1");
        assert_eq!(r.tool_calls[1].arguments, json!({}));
        assert_eq!(r.tool_calls[2].arguments, json!("{oops"));
    }

    #[test]
    fn openai_malformed() {
        assert!(parse_openai(b"not json").is_err());
        assert!(parse_openai(b"{}").unwrap_err().0.contains("no choices"));
        assert!(parse_openai(b"{\"choices\":[]}").is_err());
        assert!(parse_openai(b"{\"choices\":[{\"message\":{\"content\":5}}]}").is_err());
        let e = parse_openai(br#"{"error":{"message":"quota"}}"#).unwrap_err();
        assert!(e.0.contains("quota"));
        let parts = br#"{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}"#;
        assert_eq!(parse_openai(parts).unwrap().content, "ab");
    }

    #[test]
    fn ollama_reply() {
        let body = br#"{"model":"llama3","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"lookup","arguments":{"q":"x"}}}]},"done":true,"done_reason":"length","prompt_eval_count":7,"eval_count":2}"#;
        let r = parse_ollama(body).unwrap();
        assert!(r.truncated());
        assert_eq!(r.response_model.as_deref(), Some("llama3"));
        assert_eq!(r.tool_calls[0].name, "lookup");
        assert_eq!(r.tool_calls[0].id, "call_0");
        assert_eq!(r.tool_calls[0].arguments, json!({"q": "x"}));
        assert_eq!(r.usage.input_tokens, 7);
        assert_eq!(r.usage.output_tokens, 2);
        assert!(parse_ollama(br#"{"error":"model not found"}"#)
            .unwrap_err()
            .0
            .contains("model not found"));
        assert!(parse_ollama(b"[]").is_err());
    }

    fn shape() -> Shape {
        Shape::record(
            "T",
            vec![(
                "items",
                Shape::list(Shape::record("I", vec![("amount", Shape::Float, true)])),
                true,
            )],
        )
    }

    #[test]
    fn decode_ok_uncertain_and_strict_form() {
        let ok = decode_outcome(
            r#"{"ok": {"items": [{"amount": 2}]}}"#,
            &shape(),
            Structured::JsonSchema,
        );
        assert_eq!(ok, Decoded::Ok(json!({"items": [{"amount": 2.0}]})));
        let strict = decode_outcome(
            r#"{"ok": {"items": []}, "uncertain": null}"#,
            &shape(),
            Structured::JsonSchema,
        );
        assert!(matches!(strict, Decoded::Ok(_)));
        let unc = decode_outcome(
            r#"{"ok": null, "uncertain": "the receipt is unreadable"}"#,
            &shape(),
            Structured::JsonSchema,
        );
        assert_eq!(unc, Decoded::Uncertain("the receipt is unreadable".into()));
        let unc = decode_outcome(r#"{"uncertain": ""}"#, &shape(), Structured::JsonSchema);
        assert_eq!(unc, Decoded::Uncertain("(no reason given)".into()));
    }

    #[test]
    fn decode_mismatches_name_the_path() {
        let m = decode_outcome(
            r#"{"ok": {"items": [{"amount": 1}, {"amount": 2}, {"amount": "3"}]}}"#,
            &shape(),
            Structured::JsonSchema,
        );
        assert_eq!(
            m,
            Decoded::Mismatch("$.items[2].amount: expected number, found string".into())
        );
        let both = decode_outcome(
            r#"{"ok": {"items": []}, "uncertain": "x"}"#,
            &shape(),
            Structured::JsonSchema,
        );
        assert!(matches!(both, Decoded::Mismatch(m) if m.contains("both")));
        let neither = decode_outcome(r#"{"items": []}"#, &shape(), Structured::JsonSchema);
        assert!(matches!(neither, Decoded::Mismatch(m) if m.contains("[items]")));
        let text = decode_outcome("Sure! Here you go", &shape(), Structured::JsonSchema);
        assert!(matches!(text, Decoded::Mismatch(m) if m.starts_with("$: expected a JSON object")));
        let arr = decode_outcome("[1]", &shape(), Structured::JsonObject);
        assert!(matches!(arr, Decoded::Mismatch(m) if m.contains("found array")));
        let bad_reason = decode_outcome(r#"{"uncertain": 3}"#, &shape(), Structured::JsonSchema);
        assert!(matches!(bad_reason, Decoded::Mismatch(m) if m.starts_with("$.uncertain")));
    }

    #[test]
    fn prompt_mode_is_lenient() {
        let fenced = "Here is the answer:\n```json\n{\"ok\": 5}\n```\nHope that helps.";
        assert_eq!(
            decode_outcome(fenced, &Shape::Int, Structured::Prompt),
            Decoded::Ok(json!(5))
        );
        let prose = "I think {\"uncertain\": \"no data\"} is right. {\"ok\": 1}";
        assert_eq!(
            decode_outcome(prose, &Shape::Int, Structured::Prompt),
            Decoded::Uncertain("no data".into())
        );
        let stray = "a { brace then {\"ok\": 2} trailing }";
        assert_eq!(
            decode_outcome(stray, &Shape::Int, Structured::Prompt),
            Decoded::Ok(json!(2))
        );
        // The enforced modes are not lenient.
        assert!(matches!(
            decode_outcome(fenced, &Shape::Int, Structured::JsonSchema),
            Decoded::Mismatch(_)
        ));
        assert!(extract_json("nothing here").is_none());
    }
}
