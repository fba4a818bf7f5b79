//! `kora lsp` end to end over stdio: diagnostics on open and on change, hover, go to definition
//! across a `use "./x.ko"` module, the outline, completion after `.`, and a file with syntax errors.

mod protocol;

use std::path::Path;

use protocol::{scratch, Peer};
use serde_json::{json, Value};

const LIB: &str = r#"type Point:
    x: float
    y: float

def norm(p: Point) -> float:
    """Manhattan length of a point."""
    return abs(p.x) + abs(p.y)
"#;

const MAIN: &str = r#"use "./lib.ko" as lib

def double(n: int) -> int:
    """Twice n."""
    return n * 2

p = lib.Point(1.0, 2.0)
total = double(3)
print(lib.norm(p), total)
"#;

struct Client {
    peer: Peer,
}

fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The LSP position of the `nth` occurrence of `needle`, `offset` characters into it.
fn pos(text: &str, needle: &str, nth: usize, offset: usize) -> Value {
    let at = text
        .match_indices(needle)
        .nth(nth)
        .map(|(i, _)| i + offset)
        .unwrap_or_else(|| panic!("`{needle}` not found"));
    let line = text[..at].matches('\n').count();
    let col = at - text[..at].rfind('\n').map(|i| i + 1).unwrap_or(0);
    json!({"line": line, "character": col})
}

impl Client {
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.peer.next_seq();
        self.peer
            .write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let r = self
            .peer
            .wait(&format!("the {method} response"), |m| m["id"] == id);
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.peer
            .write(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    fn diagnostics(&mut self, uri: &str, version: i64) -> Vec<Value> {
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

    fn at(&mut self, method: &str, uri: &str, position: Value) -> Value {
        self.request(
            method,
            json!({"textDocument": {"uri": uri}, "position": position}),
        )
    }
}

fn labels(items: &Value) -> Vec<String> {
    let list = items.get("items").unwrap_or(items);
    list.as_array()
        .expect("completion items")
        .iter()
        .map(|i| i["label"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn a_language_server_session() {
    let dir = scratch("lsp");
    std::fs::write(dir.join("lib.ko"), LIB).expect("write lib");
    let main_path = dir.join("main.ko");
    std::fs::write(&main_path, MAIN).expect("write main");
    let main = uri(&main_path);
    let lib = uri(&dir.join("lib.ko"));
    let mut c = Client {
        peer: Peer::spawn("lsp"),
    };

    let init = c.request(
        "initialize",
        json!({"processId": null, "rootUri": uri(&dir), "capabilities": {}}),
    );
    assert_eq!(init["capabilities"]["hoverProvider"], true);
    assert_eq!(
        init["capabilities"]["completionProvider"]["triggerCharacters"],
        json!(["."])
    );
    c.notify("initialized", json!({}));

    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": main, "languageId": "kora", "version": 1, "text": MAIN}}),
    );
    assert_eq!(c.diagnostics(&main, 1), Vec::<Value>::new());

    // Hover: a function's signature and docstring; a variable's inferred type.
    let h = c.at("textDocument/hover", &main, pos(MAIN, "double(3)", 0, 1));
    let text = h["contents"]["value"].as_str().unwrap_or("");
    assert!(text.contains("def double(n: int) -> int"), "{text}");
    assert!(text.contains("Twice n."), "{text}");
    let h = c.at("textDocument/hover", &main, pos(MAIN, "total)", 0, 0));
    assert!(
        h["contents"]["value"]
            .as_str()
            .unwrap_or("")
            .contains("total: int"),
        "{h}"
    );
    let h = c.at("textDocument/hover", &main, pos(MAIN, "norm", 0, 1));
    assert!(
        h["contents"]["value"]
            .as_str()
            .unwrap_or("")
            .contains("Manhattan length"),
        "{h}"
    );

    // Definition: in this file, and across the `use`d module.
    let d = c.at(
        "textDocument/definition",
        &main,
        pos(MAIN, "double(3)", 0, 0),
    );
    assert_eq!(d["uri"], main);
    assert_eq!(d["range"]["start"], pos(MAIN, "double", 0, 0));
    let d = c.at("textDocument/definition", &main, pos(MAIN, "norm", 0, 2));
    assert_eq!(d["uri"], lib);
    assert_eq!(d["range"]["start"], pos(LIB, "norm", 0, 0));
    let d = c.at("textDocument/definition", &main, pos(MAIN, "Point", 0, 0));
    assert_eq!(d["uri"], lib);
    assert_eq!(d["range"]["start"], pos(LIB, "Point", 0, 0));
    let d = c.at(
        "textDocument/definition",
        &main,
        pos(MAIN, "./lib.ko", 0, 2),
    );
    assert_eq!(d["uri"], lib);

    // The outline.
    let symbols = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": main}}),
    );
    let names: Vec<(&str, i64)> = symbols
        .as_array()
        .expect("symbols")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or(""),
                s["kind"].as_i64().unwrap_or(0),
            )
        })
        .collect();
    // LSP symbol kinds: 2 module, 12 function, 13 variable.
    assert_eq!(
        names,
        vec![("lib", 2), ("double", 12), ("p", 13), ("total", 13)]
    );

    // Completion after `.`: record fields, then a module's members; both typed mid-edit.
    let edited = format!("{MAIN}p.\n");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": main, "version": 2},
               "contentChanges": [{"range": {"start": pos(MAIN, "\n", 8, 1), "end": pos(MAIN, "\n", 8, 1)},
                                   "text": "p.\n"}]}),
    );
    let items = c.at("textDocument/completion", &main, pos(&edited, "p.\n", 0, 2));
    let got = labels(&items);
    assert!(
        got.contains(&"x".to_string()) && got.contains(&"y".to_string()),
        "{got:?}"
    );
    let edited2 = format!("{MAIN}lib.\n");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": main, "version": 3},
               "contentChanges": [{"text": edited2}]}),
    );
    let items = c.at(
        "textDocument/completion",
        &main,
        pos(&edited2, "lib.\n", 0, 4),
    );
    let got = labels(&items);
    assert!(
        got.contains(&"norm".to_string()) && got.contains(&"Point".to_string()),
        "{got:?}"
    );
    // Plain names: keywords, builtins and this file's names.
    let items = c.at(
        "textDocument/completion",
        &main,
        pos(MAIN, "total = ", 0, 0),
    );
    let got = labels(&items);
    for want in ["double", "total", "while", "print", "analyze"] {
        assert!(
            got.contains(&want.to_string()),
            "{want} missing from {got:?}"
        );
    }

    // A type error appears as the user types, and goes away when fixed.
    let broken = MAIN.replace("double(3)", "double(\"three\")");
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": main, "version": 4}, "contentChanges": [{"text": broken}]}),
    );
    let ds = c.diagnostics(&main, 4);
    assert_eq!(ds.len(), 1, "{ds:?}");
    assert_eq!(ds[0]["severity"], 1);
    assert_eq!(ds[0]["range"]["start"]["line"], 7);
    assert!(ds[0]["code"].as_str().unwrap_or("").starts_with('E'));
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": main, "version": 5}, "contentChanges": [{"text": MAIN}]}),
    );
    assert_eq!(c.diagnostics(&main, 5), Vec::<Value>::new());

    // A file with syntax errors still gets diagnostics, an outline and hovers.
    let bad_src = "def f(:\n    return 1\n\ncount = 3\nprint(count)\n";
    let bad = uri(&dir.join("bad.ko"));
    c.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": bad, "languageId": "kora", "version": 1, "text": bad_src}}),
    );
    let ds = c.diagnostics(&bad, 1);
    assert!(!ds.is_empty());
    assert!(
        ds[0]["code"].as_str().unwrap_or("").starts_with("E00"),
        "{ds:?}"
    );
    let symbols = c.request(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": bad}}),
    );
    assert!(symbols
        .as_array()
        .expect("symbols")
        .iter()
        .any(|s| s["name"] == "count"));
    c.at("textDocument/hover", &bad, pos(bad_src, "count)", 0, 1));

    c.request("shutdown", Value::Null);
    c.notify("exit", Value::Null);
    assert_eq!(c.peer.exit_code(), Some(0));
}
