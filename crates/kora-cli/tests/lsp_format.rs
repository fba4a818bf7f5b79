//! `kora lsp` formatting end to end: the capabilities, whole-document and range
//! formatting giving exactly `kora fmt`'s layout, the project's `kora.toml [fmt]`, a
//! document with syntax errors (no edits) and a bad `[fmt]` table (an error naming it).

mod protocol;
mod support;

use protocol::{scratch, Peer};
use serde_json::{json, Value};

const UGLY: &str = "x=[1,2,3]\ndef f(a:int)->int:\n  return a*2\ny = f( x[0] )\n";

fn request(peer: &mut Peer, method: &str, params: Value) -> Value {
    let id = peer.next_seq();
    peer.write(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
    peer.wait(&format!("the {method} response"), |m| m["id"] == id)
}

fn open(peer: &mut Peer, uri: &str, text: &str) {
    peer.write(
        &json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "kora", "version": 1, "text": text}
        }}),
    );
}

/// Applies whole-line edits (what the server sends) to `text`.
fn apply(text: &str, edits: &Value) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut at = 0usize;
    for e in edits.as_array().expect("edits") {
        let start = e["range"]["start"]["line"].as_u64().expect("line") as usize;
        let end = e["range"]["end"]["line"].as_u64().expect("line") as usize;
        assert_eq!(e["range"]["start"]["character"], 0);
        out.extend(lines[at..start].iter().copied());
        out.push_str(e["newText"].as_str().expect("text"));
        at = end;
    }
    out.extend(lines[at.min(lines.len())..].iter().copied());
    out
}

fn kora_fmt(dir: &std::path::Path, text: &str) -> String {
    let r = support::collect(
        support::kora_cmd().args(["fmt", "-"]).current_dir(dir),
        Some(text),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    r.stdout
}

#[test]
fn the_server_formats_documents_and_ranges_like_kora_fmt() {
    let dir = scratch("lsp-format");
    std::fs::write(dir.join("kora.toml"), "[fmt]\nindent_width = 2\n").expect("kora.toml");
    let uri = format!("file://{}", dir.join("main.ko").display());
    let mut peer = Peer::spawn("lsp");
    let init = request(
        &mut peer,
        "initialize",
        json!({"processId": null, "rootUri": format!("file://{}", dir.display()), "capabilities": {}}),
    );
    assert_eq!(
        init["result"]["capabilities"]["documentFormattingProvider"],
        true
    );
    assert_eq!(
        init["result"]["capabilities"]["documentRangeFormattingProvider"],
        true
    );
    peer.write(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    open(&mut peer, &uri, UGLY);

    let options = json!({"tabSize": 8, "insertSpaces": false});
    let r = request(
        &mut peer,
        "textDocument/formatting",
        json!({"textDocument": {"uri": uri}, "options": options}),
    );
    let whole = apply(UGLY, &r["result"]);
    assert_eq!(
        whole,
        kora_fmt(&dir, UGLY),
        "the editor gets kora fmt's layout"
    );
    assert!(
        whole.contains("\n  return a * 2\n"),
        "kora.toml's indent_width, not the editor's tab size: {whole}"
    );

    let r = request(
        &mut peer,
        "textDocument/rangeFormatting",
        json!({"textDocument": {"uri": uri}, "options": options,
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 3}}}),
    );
    let ranged = apply(UGLY, &r["result"]);
    assert!(ranged.starts_with("x = [1, 2, 3]\n"), "{ranged}");
    assert!(
        ranged.contains("y = f( x[0] )"),
        "lines outside the range stay: {ranged}"
    );

    let broken_uri = format!("file://{}", dir.join("broken.ko").display());
    open(&mut peer, &broken_uri, "def f(:\n");
    let r = request(
        &mut peer,
        "textDocument/formatting",
        json!({"textDocument": {"uri": broken_uri}, "options": options}),
    );
    assert_eq!(
        r["result"],
        Value::Null,
        "no edits for a file with syntax errors: {r}"
    );

    std::fs::write(dir.join("kora.toml"), "[fmt]\nline_lenght = 3\n").expect("kora.toml");
    let r = request(
        &mut peer,
        "textDocument/formatting",
        json!({"textDocument": {"uri": uri}, "options": options}),
    );
    let msg = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        msg.contains("kora.toml:2") && msg.contains("line_lenght"),
        "{r}"
    );

    request(&mut peer, "shutdown", Value::Null);
    peer.write(&json!({"jsonrpc": "2.0", "method": "exit"}));
    assert_eq!(peer.exit_code(), Some(0));
}
