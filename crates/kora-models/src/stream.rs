//! Incremental stream decoding: OpenAI's server-sent events and Ollama's NDJSON, fed arbitrary byte chunks, yielding pieces, tool-call deltas, usage and done.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::Value;

use crate::response::{error_message, parse_arguments, Reply, ToolCall, Usage};

/// What a stream said, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StreamEvent {
    /// Visible answer text. Never empty.
    Piece(String),
    /// A fragment of a tool call; fragments with the same `index` concatenate.
    ToolCallDelta {
        index: u64,
        id: Option<String>,
        name: Option<String>,
        arguments: String,
    },
    Usage(Usage),
    /// Text of OpenAI's `refusal`: the model declining. Never shown as the answer.
    Refusal(String),
    /// Why the model stopped (`finish_reason` / `done_reason`).
    Finish(String),
    /// The provider's id for the reply and the model that answered, when first given.
    Response {
        id: Option<String>,
        model: Option<String>,
    },
    /// The provider said the answer is complete.
    Done,
}

/// A `Response` event for a frame naming an id or a model, once per stream.
fn response_event(v: &Value, seen: &mut bool, out: &mut Vec<StreamEvent>) {
    if *seen {
        return;
    }
    let id = crate::response::text_at(v, "id");
    let model = crate::response::text_at(v, "model");
    if id.is_some() || model.is_some() {
        *seen = true;
        out.push(StreamEvent::Response { id, model });
    }
}

/// A frame that cannot be read, or an error the provider sent inside the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamError(pub String);

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StreamError {}

/// The longest line a decoder buffers before calling the stream malformed.
pub const MAX_LINE: usize = 8 * 1024 * 1024;

/// An incremental decoder of one stream format.
pub trait StreamDecoder {
    /// Feeds the next bytes, which may split lines and UTF-8 sequences anywhere.
    fn feed(&mut self, bytes: &[u8]) -> Result<Vec<StreamEvent>, StreamError>;
    /// The body ended: flushes whatever is pending.
    fn finish(&mut self) -> Result<Vec<StreamEvent>, StreamError>;
    /// Whether `Done` has been produced; later bytes are ignored.
    fn is_done(&self) -> bool;
}

/// Splits buffered bytes into complete `\n`-terminated lines (a trailing `\r` dropped).
#[derive(Default)]
struct Lines {
    buf: Vec<u8>,
    /// Bytes before `pos` have been handed out as lines.
    pos: usize,
    /// `buf[pos..scanned]` is known to hold no newline.
    scanned: usize,
}

impl Lines {
    fn push(&mut self, bytes: &[u8]) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.scanned -= self.pos;
            self.pos = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    fn next_line(&mut self) -> Result<Option<String>, StreamError> {
        let from = self.scanned.max(self.pos);
        match self.buf[from..].iter().position(|&b| b == b'\n') {
            Some(i) => {
                let end = from + i;
                let mut line = &self.buf[self.pos..end];
                if line.last() == Some(&b'\r') {
                    line = &line[..line.len() - 1];
                }
                let text = to_text(line.to_vec());
                self.pos = end + 1;
                self.scanned = self.pos;
                text.map(Some)
            }
            None => {
                self.scanned = self.buf.len();
                if self.buf.len() - self.pos > MAX_LINE {
                    return Err(StreamError(format!(
                        "malformed stream: a line longer than {MAX_LINE} bytes"
                    )));
                }
                Ok(None)
            }
        }
    }

    /// The unterminated remainder, if any.
    fn rest(&mut self) -> Result<Option<String>, StreamError> {
        let mut line = self.buf.split_off(self.pos);
        self.buf.clear();
        self.pos = 0;
        self.scanned = 0;
        if line.is_empty() {
            return Ok(None);
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        to_text(line).map(Some)
    }
}

fn to_text(line: Vec<u8>) -> Result<String, StreamError> {
    String::from_utf8(line)
        .map_err(|_| StreamError("malformed stream: a frame is not UTF-8".into()))
}

fn frame_json(text: &str) -> Result<Value, StreamError> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        let mut snippet: String = text.chars().take(60).collect();
        if snippet.len() < text.len() {
            snippet.push_str("...");
        }
        StreamError(format!("malformed stream frame {snippet:?} ({e})"))
    })?;
    if let Some(msg) = error_message(&v) {
        return Err(StreamError(format!("provider error in stream: {msg}")));
    }
    Ok(v)
}

/// OpenAI-style server-sent events: `data: {...}` frames, `data: [DONE]`, `:` comments.
#[derive(Default)]
pub struct SseDecoder {
    lines: Lines,
    data: Vec<String>,
    done: bool,
    saw_finish_reason: bool,
    saw_response: bool,
}

impl SseDecoder {
    pub fn new() -> SseDecoder {
        SseDecoder::default()
    }

    fn line(&mut self, line: &str, out: &mut Vec<StreamEvent>) -> Result<(), StreamError> {
        if line.is_empty() {
            return self.dispatch(out);
        }
        if line.starts_with(':') {
            return Ok(()); // comment / keep-alive
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        if field == "data" {
            self.data.push(value.to_string());
        }
        Ok(())
    }

    fn dispatch(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), StreamError> {
        if self.data.is_empty() {
            return Ok(());
        }
        let lines = std::mem::take(&mut self.data);
        let joined = lines.join("\n");
        if joined.trim() == "[DONE]" {
            self.done = true;
            out.push(StreamEvent::Done);
            return Ok(());
        }
        match frame_json(joined.trim()) {
            Ok(v) => {
                self.chunk(&v, out);
                Ok(())
            }
            // Some servers omit the blank line between frames: read each data line on its own.
            Err(e) if lines.len() > 1 => {
                for l in lines {
                    if self.done {
                        break;
                    }
                    if l.trim() == "[DONE]" {
                        self.done = true;
                        out.push(StreamEvent::Done);
                    } else if !l.trim().is_empty() {
                        let v = frame_json(l.trim()).map_err(|_| e.clone())?;
                        self.chunk(&v, out);
                    }
                }
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn chunk(&mut self, v: &Value, out: &mut Vec<StreamEvent>) {
        response_event(v, &mut self.saw_response, out);
        if let Some(choice) = v
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                if !text.is_empty() {
                    out.push(StreamEvent::Piece(text.to_string()));
                }
            }
            if let Some(text) = delta.get("refusal").and_then(Value::as_str) {
                if !text.is_empty() {
                    out.push(StreamEvent::Refusal(text.to_string()));
                }
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (pos, call) in calls.iter().enumerate() {
                    let function = call.get("function").unwrap_or(&Value::Null);
                    out.push(StreamEvent::ToolCallDelta {
                        index: call
                            .get("index")
                            .and_then(Value::as_u64)
                            .unwrap_or(pos as u64),
                        id: call.get("id").and_then(Value::as_str).map(str::to_string),
                        name: function
                            .get("name")
                            .and_then(Value::as_str)
                            .map(str::to_string),
                        arguments: function
                            .get("arguments")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    });
                }
            }
            if choice.get("finish_reason").is_some_and(|f| !f.is_null()) {
                self.saw_finish_reason = true;
                if let Some(r) = crate::response::text_at(choice, "finish_reason") {
                    out.push(StreamEvent::Finish(r));
                }
            }
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            out.push(StreamEvent::Usage(Usage {
                input_tokens: u.get("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
                output_tokens: u
                    .get("completion_tokens")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
            }));
        }
    }
}

impl StreamDecoder for SseDecoder {
    fn feed(&mut self, bytes: &[u8]) -> Result<Vec<StreamEvent>, StreamError> {
        let mut out = Vec::new();
        if self.done {
            return Ok(out);
        }
        self.lines.push(bytes);
        while let Some(line) = self.lines.next_line()? {
            self.line(&line, &mut out)?;
            if self.done {
                break;
            }
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, StreamError> {
        let mut out = Vec::new();
        if self.done {
            return Ok(out);
        }
        if let Some(rest) = self.lines.rest()? {
            self.line(&rest, &mut out)?;
        }
        self.dispatch(&mut out)?;
        // A server that ends the body after a finish_reason without `[DONE]` still finished.
        if !self.done && self.saw_finish_reason {
            self.done = true;
            out.push(StreamEvent::Done);
        }
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

/// Ollama's newline-delimited JSON: one object per line, the last with `"done": true`.
#[derive(Default)]
pub struct NdjsonDecoder {
    lines: Lines,
    done: bool,
    next_call: u64,
    saw_response: bool,
}

impl NdjsonDecoder {
    pub fn new() -> NdjsonDecoder {
        NdjsonDecoder::default()
    }

    fn line(&mut self, line: &str, out: &mut Vec<StreamEvent>) -> Result<(), StreamError> {
        let line = line.trim();
        if line.is_empty() {
            return Ok(());
        }
        let v = frame_json(line)?;
        if !v.is_object() {
            return Err(StreamError(format!(
                "malformed stream frame: expected an object, found {}",
                crate::schema::kind_of(&v)
            )));
        }
        response_event(&v, &mut self.saw_response, out);
        let message = v.get("message").unwrap_or(&Value::Null);
        if let Some(text) = message.get("content").and_then(Value::as_str) {
            if !text.is_empty() {
                out.push(StreamEvent::Piece(text.to_string()));
            }
        }
        if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                let function = call.get("function").unwrap_or(&Value::Null);
                let arguments = match function.get("arguments") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                };
                out.push(StreamEvent::ToolCallDelta {
                    index: self.next_call,
                    id: call.get("id").and_then(Value::as_str).map(str::to_string),
                    name: function
                        .get("name")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    arguments,
                });
                self.next_call += 1;
            }
        }
        if v.get("done").and_then(Value::as_bool) == Some(true) {
            out.push(StreamEvent::Usage(Usage {
                input_tokens: v
                    .get("prompt_eval_count")
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                output_tokens: v.get("eval_count").and_then(Value::as_u64).unwrap_or(0),
            }));
            if let Some(r) = crate::response::text_at(&v, "done_reason") {
                out.push(StreamEvent::Finish(r));
            }
            out.push(StreamEvent::Done);
            self.done = true;
        }
        Ok(())
    }
}

impl StreamDecoder for NdjsonDecoder {
    fn feed(&mut self, bytes: &[u8]) -> Result<Vec<StreamEvent>, StreamError> {
        let mut out = Vec::new();
        if self.done {
            return Ok(out);
        }
        self.lines.push(bytes);
        while let Some(line) = self.lines.next_line()? {
            self.line(&line, &mut out)?;
            if self.done {
                break;
            }
        }
        Ok(out)
    }

    fn finish(&mut self) -> Result<Vec<StreamEvent>, StreamError> {
        let mut out = Vec::new();
        if self.done {
            return Ok(out);
        }
        if let Some(rest) = self.lines.rest()? {
            self.line(&rest, &mut out)?;
        }
        Ok(out)
    }

    fn is_done(&self) -> bool {
        self.done
    }
}

#[derive(Default)]
struct PartialCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// Folds stream events into the `Reply` a non-streamed call would have produced.
#[derive(Default)]
pub struct Assembler {
    content: String,
    refusal: String,
    calls: BTreeMap<u64, PartialCall>,
    usage: Option<Usage>,
    finish: Option<String>,
    id: Option<String>,
    model: Option<String>,
    done: bool,
}

impl Assembler {
    pub fn new() -> Assembler {
        Assembler::default()
    }

    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::Piece(text) => self.content.push_str(text),
            StreamEvent::ToolCallDelta {
                index,
                id,
                name,
                arguments,
            } => {
                let call = self.calls.entry(*index).or_default();
                if let Some(id) = id {
                    call.id = Some(id.clone());
                }
                if let Some(name) = name {
                    call.name.push_str(name);
                }
                call.arguments.push_str(arguments);
            }
            // Providers report cumulative totals; the last report stands.
            StreamEvent::Usage(u) => self.usage = Some(*u),
            StreamEvent::Refusal(text) => self.refusal.push_str(text),
            StreamEvent::Finish(r) => self.finish = Some(r.clone()),
            StreamEvent::Response { id, model } => {
                self.id.clone_from(id);
                self.model.clone_from(model);
            }
            StreamEvent::Done => self.done = true,
        }
    }

    /// Whether the provider reported usage.
    pub fn usage_reported(&self) -> bool {
        self.usage.is_some()
    }

    /// Whether any part of an answer (text, a refusal, a tool call) has arrived.
    pub fn has_answer(&self) -> bool {
        !self.content.is_empty() || !self.refusal.is_empty() || !self.calls.is_empty()
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    pub fn usage(&self) -> Usage {
        self.usage.unwrap_or_default()
    }

    /// What has arrived so far, as a reply (for a stream cut short: what it cost).
    pub fn partial(&self) -> Reply {
        Reply {
            content: self.content.clone(),
            tool_calls: self.tool_calls(),
            ..Reply::default()
        }
    }

    fn tool_calls(&self) -> Vec<ToolCall> {
        self.calls
            .iter()
            .enumerate()
            .map(|(pos, (_, c))| ToolCall {
                id: c.id.clone().unwrap_or_else(|| format!("call_{pos}")),
                name: c.name.clone(),
                arguments: parse_arguments(Some(&Value::String(c.arguments.clone()))),
            })
            .collect()
    }

    pub fn finish(self) -> Reply {
        let usage = self.usage();
        let reported = self.usage.is_some();
        let tool_calls = self.tool_calls();
        Reply {
            content: self.content,
            tool_calls,
            usage,
            usage_reported: reported,
            refusal: Some(self.refusal).filter(|r| !r.is_empty()),
            finish_reason: self.finish,
            response_id: self.id,
            response_model: self.model,
            attempts: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn feed_all(
        d: &mut dyn StreamDecoder,
        chunks: &[&[u8]],
    ) -> Result<Vec<StreamEvent>, StreamError> {
        let mut out = Vec::new();
        for c in chunks {
            out.extend(d.feed(c)?);
        }
        out.extend(d.finish()?);
        Ok(out)
    }

    const SSE: &str = ": keep-alive\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hé\"}}]}\n\n\
:\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"llo 🌍\"},\"finish_reason\":null}]}\r\n\r\n\
data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n\
data: {\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4}}\n\n\
data: [DONE]\n\n";

    fn pieces(events: &[StreamEvent]) -> String {
        events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Piece(p) => Some(p.as_str()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn sse_whole() {
        let ev = feed_all(&mut SseDecoder::new(), &[SSE.as_bytes()]).unwrap();
        assert_eq!(pieces(&ev), "Héllo 🌍");
        assert!(ev.contains(&StreamEvent::Usage(Usage {
            input_tokens: 9,
            output_tokens: 4
        })));
        assert_eq!(ev.last(), Some(&StreamEvent::Done));
        // Role-only deltas and keep-alives produce nothing.
        assert_eq!(ev.len(), 5);
        assert!(ev.contains(&StreamEvent::Finish("stop".into())));
    }

    #[test]
    fn sse_split_at_every_byte() {
        let bytes = SSE.as_bytes();
        let chunks: Vec<&[u8]> = bytes.chunks(1).collect();
        let ev = feed_all(&mut SseDecoder::new(), &chunks).unwrap();
        let whole = feed_all(&mut SseDecoder::new(), &[bytes]).unwrap();
        assert_eq!(pieces(&ev), pieces(&whole));
        assert_eq!(ev.last(), Some(&StreamEvent::Done));
    }

    #[test]
    fn sse_ignores_after_done_and_handles_missing_done() {
        let mut d = SseDecoder::new();
        let ev = feed_all(&mut d, &[b"data: [DONE]\n\ndata: garbage\n\n"]).unwrap();
        assert_eq!(ev, vec![StreamEvent::Done]);

        let no_done =
            "data: {\"choices\":[{\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}";
        let ev = feed_all(&mut SseDecoder::new(), &[no_done.as_bytes()]).unwrap();
        assert_eq!(
            ev,
            vec![
                StreamEvent::Piece("a".into()),
                StreamEvent::Finish("stop".into()),
                StreamEvent::Done
            ]
        );

        let cut = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n";
        let ev = feed_all(&mut SseDecoder::new(), &[cut.as_bytes()]).unwrap();
        assert_eq!(ev, vec![StreamEvent::Piece("a".into())]);
    }

    #[test]
    fn sse_frames_without_blank_lines() {
        let s = "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\ndata: [DONE]\n";
        let ev = feed_all(&mut SseDecoder::new(), &[s.as_bytes()]).unwrap();
        assert_eq!(pieces(&ev), "ab");
        assert_eq!(ev.last(), Some(&StreamEvent::Done));
    }

    #[test]
    fn sse_errors_are_values() {
        assert!(feed_all(&mut SseDecoder::new(), &[b"data: {nope\n\n"]).is_err());
        let e = feed_all(
            &mut SseDecoder::new(),
            &[b"data: {\"error\":{\"message\":\"overloaded\"}}\n\n"],
        )
        .unwrap_err();
        assert!(e.0.contains("overloaded"));
        assert!(feed_all(&mut SseDecoder::new(), &[b"data: \xff\xfe\n\n"]).is_err());
    }

    #[test]
    fn sse_tool_call_deltas_assemble() {
        let s = concat!(
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_9\",\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"arguments\":\"\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"q\\\":\"}}]}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"x\\\"}\"}}]}}]}\n\n",
            "data: [DONE]\n\n"
        );
        let ev = feed_all(&mut SseDecoder::new(), &[s.as_bytes()]).unwrap();
        let mut a = Assembler::new();
        for e in &ev {
            a.push(e);
        }
        assert!(a.is_done());
        let r = a.finish();
        assert_eq!(r.tool_calls.len(), 1);
        assert_eq!(r.tool_calls[0].id, "call_9");
        assert_eq!(r.tool_calls[0].name, "lookup");
        assert_eq!(r.tool_calls[0].arguments, json!({"q": "x"}));
    }

    #[test]
    fn ndjson_stream() {
        let s = concat!(
            "{\"message\":{\"role\":\"assistant\",\"content\":\"Hi \"},\"done\":false}\n",
            "{\"message\":{\"role\":\"assistant\",\"content\":\"thére\"},\"done\":false}\n",
            "{\"message\":{\"role\":\"assistant\",\"content\":\"\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":{\"a\":1}}}]},\"done\":false}\n",
            "{\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true,\"prompt_eval_count\":5,\"eval_count\":2}\n"
        );
        let chunks: Vec<&[u8]> = s.as_bytes().chunks(3).collect();
        let ev = feed_all(&mut NdjsonDecoder::new(), &chunks).unwrap();
        assert_eq!(pieces(&ev), "Hi thére");
        let mut a = Assembler::new();
        ev.iter().for_each(|e| a.push(e));
        let r = a.finish();
        assert_eq!(r.tool_calls[0].arguments, json!({"a": 1}));
        assert_eq!(r.usage.input_tokens, 5);
        assert_eq!(r.content, "Hi thére");
    }

    #[test]
    fn refusals_finish_reasons_and_ids_assemble() {
        let s = concat!(
            "data: {\"id\":\"c-1\",\"model\":\"m-9\",\"choices\":[{\"delta\":{\"refusal\":\"I can't \"}}]}\n\n",
            "data: {\"id\":\"c-1\",\"model\":\"m-9\",\"choices\":[{\"delta\":{\"refusal\":\"help.\"},\"finish_reason\":\"stop\"}]}\n\n",
            "data: [DONE]\n\n"
        );
        let ev = feed_all(&mut SseDecoder::new(), &[s.as_bytes()]).unwrap();
        assert_eq!(pieces(&ev), "", "a refusal is not the answer");
        let mut a = Assembler::new();
        ev.iter().for_each(|e| a.push(e));
        assert!(a.has_answer());
        let r = a.finish();
        assert_eq!(r.refusal.as_deref(), Some("I can't help."));
        assert_eq!(r.response_id.as_deref(), Some("c-1"));
        assert_eq!(r.response_model.as_deref(), Some("m-9"));
        assert_eq!(r.finish_reason.as_deref(), Some("stop"));

        let cut = "{\"model\":\"llama\",\"message\":{\"content\":\"a\"},\"done\":false}\n{\"model\":\"llama\",\"message\":{\"content\":\"\"},\"done\":true,\"done_reason\":\"length\"}\n";
        let ev = feed_all(&mut NdjsonDecoder::new(), &[cut.as_bytes()]).unwrap();
        let mut a = Assembler::new();
        ev.iter().for_each(|e| a.push(e));
        let r = a.finish();
        assert!(r.truncated());
        assert_eq!(r.response_model.as_deref(), Some("llama"));
    }

    #[test]
    fn ndjson_errors() {
        let e = feed_all(&mut NdjsonDecoder::new(), &[b"{\"error\":\"boom\"}\n"]).unwrap_err();
        assert!(e.0.contains("boom"));
        assert!(feed_all(&mut NdjsonDecoder::new(), &[b"[1,2]\n"]).is_err());
        assert!(feed_all(&mut NdjsonDecoder::new(), &[b"{\"message\":"]).is_err());
    }
}
