//! An LSP client over `protocol::Peer` for the language-server tests: requests, notifications,
//! positions written as "the nth occurrence of this text", and edits applied to a text.

#![allow(dead_code)]

pub mod two_files;

use std::path::Path;

use serde_json::{json, Value};

use crate::protocol::Peer;

pub struct Client {
    pub peer: Peer,
}

pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The byte offset of the `nth` occurrence of `needle`, `offset` bytes into it.
pub fn at(text: &str, needle: &str, nth: usize, offset: usize) -> usize {
    text.match_indices(needle)
        .nth(nth)
        .map(|(i, _)| i + offset)
        .unwrap_or_else(|| panic!("`{needle}` not found"))
}

/// The LSP position of a byte offset (the tests' texts are ASCII).
pub fn position(text: &str, at: usize) -> Value {
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').map(|i| i + 1).unwrap_or(0);
    json!({"line": line, "character": col})
}

/// The LSP position of the `nth` occurrence of `needle`, `offset` bytes into it.
pub fn pos(text: &str, needle: &str, nth: usize, offset: usize) -> Value {
    position(text, at(text, needle, nth, offset))
}

fn offset_of(text: &str, p: &Value) -> usize {
    let line = p["line"].as_u64().expect("line") as usize;
    let col = p["character"].as_u64().expect("character") as usize;
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    start + col
}

/// `text` with LSP `TextEdit`s applied (any order; they must not overlap).
pub fn apply(text: &str, edits: &[Value]) -> String {
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            (
                offset_of(text, &e["range"]["start"]),
                offset_of(text, &e["range"]["end"]),
                e["newText"].as_str().expect("newText").to_string(),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (a, b, t) in spans {
        out.replace_range(a..b, &t);
    }
    out
}

impl Client {
    pub fn start(root: &Path) -> (Client, Value) {
        let mut c = Client {
            peer: Peer::spawn("lsp"),
        };
        let init = c.request(
            "initialize",
            json!({"processId": null, "rootUri": uri(root), "capabilities": {}}),
        );
        c.notify("initialized", json!({}));
        (c, init)
    }

    /// A request's whole response (`result` or `error`).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.peer.next_seq();
        self.peer
            .write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.peer
            .wait(&format!("the {method} response"), |m| m["id"] == id)
    }

    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params);
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.peer
            .write(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    pub fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "kora", "version": 1, "text": text}}),
        );
    }

    pub fn replace(&mut self, uri: &str, version: i64, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"text": text}]}),
        );
    }

    pub fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
        let m = self.peer.wait("diagnostics", |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == version
        });
        m["params"]["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// A request about one position of a document.
    pub fn at(&mut self, method: &str, uri: &str, position: Value) -> Value {
        self.request(
            method,
            json!({"textDocument": {"uri": uri}, "position": position}),
        )
    }

    pub fn stop(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        assert_eq!(self.peer.exit_code(), Some(0));
    }
}
