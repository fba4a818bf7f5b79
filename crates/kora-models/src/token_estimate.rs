//! The token estimate: one rule for what a request and an answer cost when no tokenizer is asked.
//!
//! Two places need a count the provider has not given: the `with context` fence, before a
//! request is sent, and the usage charged for a reply whose server reported none. They
//! use this one rule, so a fence and a budget agree about the same request. It is a rule,
//! not a tokenizer: every message costs `ceil(bytes / 4) + 4` tokens, where the bytes are
//! its text as the request carries it (the system message; the user message with the
//! prompt and the data; the tool definitions as one JSON text; an assistant turn's text
//! plus each tool call's name and arguments JSON; a tool result's envelope JSON), plus
//! each image by the tile rule of `image_tokens`. The same program always counts the
//! same way, on every provider and in every replay, which a real tokenizer would not give.

use crate::config::ModelEntry;
use crate::request::{system_text, tool_result_envelope, user_text, Request, Turn};
use crate::schema::json_schema;

/// Overhead of one message (role, separators), whatever it holds.
const PER_MESSAGE: u64 = 4;

/// The estimate for one message of `bytes` bytes.
pub fn message_tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4) + PER_MESSAGE
}

/// What every request of a call carries: system, user, images, tool definitions.
pub fn base_tokens(entry: &ModelEntry, req: &Request) -> u64 {
    let system = system_text(req, entry.api, entry.structured);
    let mut n = message_tokens(user_text(req).len());
    if !system.is_empty() {
        n += message_tokens(system.len());
    }
    // Images travel beside the text (content parts or Ollama's `images`), so their bytes
    // are not the measure: each is charged by its pixel size.
    n += req
        .images
        .iter()
        .map(crate::image_tokens::image_tokens)
        .sum::<u64>();
    if !req.tools.is_empty() {
        let defs: Vec<serde_json::Value> = req
            .tools
            .iter()
            .map(|t| {
                serde_json::json!({
                    "name": t.name,
                    "description": t.description,
                    "parameters": json_schema(&t.parameters),
                })
            })
            .collect();
        n += message_tokens(serde_json::Value::Array(defs).to_string().len());
    }
    n
}

/// One earlier turn a request carries.
pub fn turn_tokens(t: &Turn) -> u64 {
    match t {
        Turn::Assistant {
            content,
            tool_calls,
        } => message_tokens(content.len() + calls_bytes(tool_calls)),
        Turn::ToolResult { name, result, .. } => {
            message_tokens(tool_result_envelope(name, result).to_string().len())
        }
    }
}

/// A whole request: its base and every turn of its history.
pub fn request_tokens(entry: &ModelEntry, req: &Request) -> u64 {
    base_tokens(entry, req) + req.history.iter().map(turn_tokens).sum::<u64>()
}

/// What an answer costs: its text and its tool calls, without a message's framing
/// (providers count generated tokens only).
pub fn answer_tokens(content: &str, tool_calls: &[crate::response::ToolCall]) -> u64 {
    ((content.len() + calls_bytes(tool_calls)) as u64).div_ceil(4)
}

fn calls_bytes(calls: &[crate::response::ToolCall]) -> usize {
    calls
        .iter()
        .map(|c| c.name.len() + c.arguments.to_string().len())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_is_bytes_over_four_rounded_up_plus_overhead() {
        assert_eq!(message_tokens(0), 4);
        assert_eq!(message_tokens(1), 5);
        assert_eq!(message_tokens(8), 6);
        assert_eq!(message_tokens(9), 7);
    }

    #[test]
    fn a_request_is_its_base_and_its_history() {
        let entry = ModelEntry::parse_shorthand("openai:m").expect("entry");
        let mut req = Request {
            prompt: "p".repeat(40),
            ..Request::default()
        };
        let base = base_tokens(&entry, &req);
        assert_eq!(request_tokens(&entry, &req), base);
        req.history.push(Turn::Assistant {
            content: "x".repeat(8),
            tool_calls: vec![],
        });
        assert_eq!(request_tokens(&entry, &req), base + 6);
    }
}
