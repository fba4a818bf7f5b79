//! `kora lsp` end to end, one test per request added for issue 28: signature help, semantic
//! tokens (full and delta), code actions, inlay hints, workspace symbols, folding ranges, and
//! hover/definition on annotation types, record fields, methods and standard-library members
//! (references, rename and highlight are `lsp_references.rs`). The capabilities must advertise
//! exactly what is served.

mod lsp_client;
mod protocol;

use lsp_client::two_files::{session, LIB, MAIN};
use lsp_client::{apply, pos, uri, Client};
use protocol::scratch;
use serde_json::{json, Value};

#[test]
fn capabilities_advertise_exactly_the_requests_served() {
    let dir = scratch("lsp-caps");
    let (c, init) = Client::start(&dir);
    let caps = &init["capabilities"];
    for key in [
        "hoverProvider",
        "definitionProvider",
        "documentSymbolProvider",
        "documentFormattingProvider",
        "documentRangeFormattingProvider",
        "referencesProvider",
        "inlayHintProvider",
        "workspaceSymbolProvider",
        "documentHighlightProvider",
        "foldingRangeProvider",
    ] {
        assert_eq!(caps[key], true, "{key}: {caps}");
    }
    assert_eq!(caps["renameProvider"]["prepareProvider"], true, "{caps}");
    assert_eq!(
        caps["signatureHelpProvider"]["triggerCharacters"],
        json!(["(", ","])
    );
    assert_eq!(
        caps["semanticTokensProvider"]["full"]["delta"], true,
        "{caps}"
    );
    assert_eq!(
        caps["codeActionProvider"]["codeActionKinds"],
        json!(["quickfix"])
    );
    // Nothing is advertised that is not served.
    for key in [
        "declarationProvider",
        "typeDefinitionProvider",
        "implementationProvider",
        "codeLensProvider",
        "documentLinkProvider",
        "colorProvider",
        "documentOnTypeFormattingProvider",
        "executeCommandProvider",
        "selectionRangeProvider",
        "callHierarchyProvider",
        "linkedEditingRangeProvider",
        "monikerProvider",
    ] {
        assert!(caps.get(key).is_none(), "{key} is advertised: {caps}");
    }
    assert!(caps["semanticTokensProvider"].get("range").is_none());
    c.stop();
}
#[test]
fn signature_help_follows_the_argument_being_typed() {
    let mut s = session("lsp-sig");
    let main = s.main.clone();
    let typing = format!("{MAIN}x = classify(\"a\", ");
    s.c.replace(&main, 2, &typing);
    let end = lsp_client::position(&typing, typing.len());
    let h = s.c.at("textDocument/signatureHelp", &main, end);
    let label = h["signatures"][0]["label"].as_str().unwrap_or("");
    assert!(label.starts_with("classify(text: str, limit: int)"), "{h}");
    assert_eq!(h["activeParameter"], 1, "{h}");
    assert!(h["signatures"][0]["documentation"]["value"]
        .as_str()
        .unwrap_or("")
        .contains("Sorts a ticket"));
    // A keyword argument selects its parameter.
    let typing = format!("{MAIN}x = classify(limit=");
    s.c.replace(&main, 3, &typing);
    let h = s.c.at(
        "textDocument/signatureHelp",
        &main,
        lsp_client::position(&typing, typing.len()),
    );
    assert_eq!(h["activeParameter"], 1, "{h}");
    // A method of a built-in type, and a standard-library member, with their docs.
    let h = s.c.at(
        "textDocument/signatureHelp",
        &main,
        pos(MAIN, "split()", 0, 6),
    );
    assert!(
        h["signatures"][0]["label"]
            .as_str()
            .unwrap_or("")
            .starts_with("str.split("),
        "{h}"
    );
    let h = s.c.at(
        "textDocument/signatureHelp",
        &main,
        pos(MAIN, "[1, 2])", 0, 0),
    );
    let label = h["signatures"][0]["label"].as_str().unwrap_or("");
    assert!(label.starts_with("json.encode(value: any"), "{h}");
    assert_eq!(h["activeParameter"], 0);
    // A record's constructor.
    let h = s.c.at(
        "textDocument/signatureHelp",
        &main,
        pos(MAIN, "100, \"EUR\"", 0, 5),
    );
    assert!(
        h["signatures"][0]["label"]
            .as_str()
            .unwrap_or("")
            .starts_with("Money(cents: int, currency: str)"),
        "{h}"
    );
    assert_eq!(h["activeParameter"], 1);
    // Outside any call: nothing.
    let h = s.c.at(
        "textDocument/signatureHelp",
        &main,
        pos(MAIN, "data =", 0, 0),
    );
    assert_eq!(h, Value::Null);
    s.c.stop();
}

/// Decoded tokens: `(line, start, length, type name, modifier bits)`.
fn decode(data: &[u64], legend: &[String]) -> Vec<(u64, u64, u64, String, u64)> {
    let mut out = Vec::new();
    let (mut line, mut col) = (0, 0);
    for t in data.chunks(5) {
        if t[0] > 0 {
            line += t[0];
            col = t[1];
        } else {
            col += t[1];
        }
        out.push((line, col, t[2], legend[t[3] as usize].clone(), t[4]));
    }
    out
}

fn ints(v: &Value) -> Vec<u64> {
    v.as_array()
        .expect("data")
        .iter()
        .map(|x| x.as_u64().expect("u32"))
        .collect()
}

#[test]
fn semantic_tokens_full_and_delta() {
    let dir = scratch("lsp-tokens");
    std::fs::write(dir.join("lib.ko"), LIB).expect("write lib");
    let (mut c, init) = Client::start(&dir);
    let legend: Vec<String> = init["capabilities"]["semanticTokensProvider"]["legend"]
        ["tokenTypes"]
        .as_array()
        .expect("legend")
        .iter()
        .map(|t| t.as_str().unwrap_or("").to_string())
        .collect();
    let main = uri(&dir.join("main.ko"));
    c.open(&main, MAIN);
    let full = c.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": main}}),
    );
    let data = ints(&full["data"]);
    let toks = decode(&data, &legend);
    let kind_at = |needle: &str, nth: usize| -> String {
        let p = pos(MAIN, needle, nth, 0);
        let (l, ch) = (
            p["line"].as_u64().unwrap_or(0),
            p["character"].as_u64().unwrap_or(0),
        );
        toks.iter()
            .find(|t| t.0 == l && t.1 == ch)
            .map(|t| t.3.clone())
            .unwrap_or_else(|| format!("no token at {needle}"))
    };
    assert_eq!(kind_at("def classify", 0), "keyword");
    assert_eq!(kind_at("classify(text", 0), "function");
    assert_eq!(kind_at("text: str", 0), "parameter");
    assert_eq!(kind_at("len(text", 0), "function");
    assert_eq!(kind_at("text) >", 0), "parameter");
    assert_eq!(kind_at("Triage:", 0), "type");
    assert_eq!(kind_at("Triage]", 0), "type");
    assert_eq!(kind_at("# Tickets", 0), "comment");
    assert_eq!(kind_at("\"bug\"", 0), "string");
    assert_eq!(kind_at("10)", 0), "number");
    assert_eq!(kind_at("lib.total", 0), "namespace");
    assert_eq!(kind_at("total(wallet", 0), "function");
    assert_eq!(kind_at("category\n", 0), "property");
    assert_eq!(kind_at("split()", 0), "method");
    assert_eq!(kind_at("words =", 0), "variable");
    // Every token stays on one line and inside it.
    let lines: Vec<&str> = MAIN.lines().collect();
    for t in &toks {
        assert!((t.1 + t.2) as usize <= lines[t.0 as usize].len(), "{t:?}");
    }
    // A delta after an edit turns the old tokens into exactly the new full answer.
    let edited = MAIN.replace("label = t.category", "label = t.category\n    extra = 1");
    c.replace(&main, 2, &edited);
    let delta = c.request(
        "textDocument/semanticTokens/full/delta",
        json!({"textDocument": {"uri": main}, "previousResultId": full["resultId"]}),
    );
    let edits = delta["edits"].as_array().expect("a delta");
    assert_eq!(edits.len(), 1, "{delta}");
    let mut patched = data.clone();
    let e = &edits[0];
    let start = e["start"].as_u64().unwrap_or(0) as usize;
    let del = e["deleteCount"].as_u64().unwrap_or(0) as usize;
    patched.splice(start..start + del, ints(&e["data"]));
    assert!(
        del < data.len() / 2,
        "the delta resends most tokens: {delta}"
    );
    let fresh = c.request(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": main}}),
    );
    assert_eq!(patched, ints(&fresh["data"]));
    // An unknown previous id gets all tokens.
    let again = c.request(
        "textDocument/semanticTokens/full/delta",
        json!({"textDocument": {"uri": main}, "previousResultId": "nope"}),
    );
    assert_eq!(ints(&again["data"]), ints(&fresh["data"]));
    c.stop();
}

fn actions(c: &mut Client, uri: &str, text: &str, needle: &str) -> Vec<Value> {
    let p = pos(text, needle, 0, 0);
    let r = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": {"start": p, "end": p},
               "context": {"diagnostics": []}}),
    );
    r.as_array().cloned().unwrap_or_default()
}

#[test]
fn quick_fixes_apply_the_checkers_help() {
    let mut s = session("lsp-actions");
    let main = s.main.clone();
    let text = "def total(xs: list[int]) -> int:\n    s = 0\n    for x in xs:\n        s = s + x\n    return s\n\nprint(totl([1]))\n";
    s.c.replace(&main, 2, text);
    assert_eq!(s.c.diagnostics(&main, 2).len(), 1);
    let got = actions(&mut s.c, &main, text, "totl");
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["title"], "Change to `total`");
    assert_eq!(got[0]["kind"], "quickfix");
    let fixed = apply(
        text,
        got[0]["edit"]["changes"][&main].as_array().expect("edits"),
    );
    assert!(fixed.contains("print(total([1]))"));
    s.c.replace(&main, 3, &fixed);
    assert_eq!(s.c.diagnostics(&main, 3), Vec::<Value>::new());
    assert!(actions(&mut s.c, &main, &fixed, "total([1").is_empty());

    // The arms a `match` lacks.
    let text = "def f(r: Result[int]) -> int:\n    match r:\n        case Ok(n):\n            return n\n\nprint(f(Ok(1)))\n";
    s.c.replace(&main, 4, text);
    let ds = s.c.diagnostics(&main, 4);
    assert_eq!(ds.len(), 1, "{ds:?}");
    let got = actions(&mut s.c, &main, text, "match r");
    assert_eq!(got.len(), 1, "{got:?}");
    let fixed = apply(
        text,
        got[0]["edit"]["changes"][&main].as_array().expect("edits"),
    );
    assert!(fixed.contains("        case Err("), "{fixed}");
    s.c.replace(&main, 5, &fixed);
    let left = s.c.diagnostics(&main, 5);
    assert!(left.iter().all(|d| d["code"] != "E0310"), "{left:?}");

    // A missing `else:` where an outcome is bound to a plain type.
    let text = "def parse(s: str) -> Result[int]:\n    return Ok(len(s))\n\ndef g() -> Result[int]:\n    n: int = parse(\"x\")\n    return Ok(n)\n";
    s.c.replace(&main, 6, text);
    assert!(!s.c.diagnostics(&main, 6).is_empty());
    let got = actions(&mut s.c, &main, text, "parse(\"x\")");
    let add_else = got
        .iter()
        .find(|a| a["title"].as_str().unwrap_or("").contains("else"))
        .unwrap_or_else(|| panic!("no else fix in {got:?}"));
    let fixed = apply(
        text,
        add_else["edit"]["changes"][&main]
            .as_array()
            .expect("edits"),
    );
    assert!(
        fixed.contains("parse(\"x\") else (why, kind):\n        return Err(why)\n"),
        "{fixed}"
    );
    s.c.replace(&main, 7, &fixed);
    assert_eq!(s.c.diagnostics(&main, 7), Vec::<Value>::new());
    s.c.stop();
}
#[test]
fn inlay_hints_show_inferred_types_and_parameter_names() {
    let mut s = session("lsp-inlay");
    let main = s.main.clone();
    let lines = MAIN.lines().count();
    let hints = s.c.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": main},
               "range": {"start": {"line": 0, "character": 0}, "end": {"line": lines, "character": 0}}}),
    );
    let got: Vec<(Value, String)> = hints
        .as_array()
        .expect("hints")
        .iter()
        .map(|h| {
            (
                h["position"].clone(),
                h["label"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let has = |p: Value, l: &str| got.iter().any(|(q, m)| *q == p && m == l);
    assert!(has(pos(MAIN, "label =", 0, 5), ": str"), "{got:?}");
    assert!(has(pos(MAIN, "words =", 0, 5), ": list[str]"), "{got:?}");
    assert!(has(pos(MAIN, "\"hello\"", 0, 0), "text:"), "{got:?}");
    assert!(has(pos(MAIN, "10)", 0, 0), "limit:"), "{got:?}");
    assert!(has(pos(MAIN, "100,", 0, 0), "cents:"), "{got:?}");
    // No type hint on an annotated name.
    assert!(
        !got.iter().any(|(p, _)| *p == pos(MAIN, "t: Triage", 0, 1)),
        "{got:?}"
    );
    assert!(has(pos(MAIN, "wallet)", 0, 0), "items:"), "{got:?}");
    // A range limits the hints to it.
    let only = s.c.request(
        "textDocument/inlayHint",
        json!({"textDocument": {"uri": main},
               "range": {"start": pos(MAIN, "label =", 0, 0), "end": pos(MAIN, "words =", 0, 0)}}),
    );
    assert_eq!(only.as_array().map(Vec::len), Some(1), "{only}");
    s.c.stop();
}
#[test]
fn workspace_symbols_search_every_kora_file() {
    let mut s = session("lsp-wsym");
    std::fs::create_dir_all(s.dir.join("sub")).expect("sub");
    std::fs::write(
        s.dir.join("sub/other.ko"),
        "def total_of_all() -> int:\n    return 0\n",
    )
    .expect("other");
    std::fs::create_dir_all(s.dir.join("target")).expect("target");
    std::fs::write(
        s.dir.join("target/built.ko"),
        "def total_built() -> int:\n    return 0\n",
    )
    .expect("built");
    let r = s.c.request("workspace/symbol", json!({"query": "tot"}));
    let mut got: Vec<(String, String)> = r
        .as_array()
        .expect("symbols")
        .iter()
        .map(|x| {
            let u = x["location"]["uri"].as_str().unwrap_or("");
            (
                x["name"].as_str().unwrap_or("").to_string(),
                u.rsplit('/').next().unwrap_or("").to_string(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(
        got,
        vec![
            ("total".to_string(), "lib.ko".to_string()),
            ("total_of_all".to_string(), "other.ko".to_string())
        ]
    );
    // Fields carry their record as container; the query matches a subsequence.
    let r = s.c.request("workspace/symbol", json!({"query": "ctgry"}));
    let first = &r[0];
    assert_eq!(first["name"], "category");
    assert_eq!(first["containerName"], "Triage");
    assert_eq!(first["kind"], 8);
    s.c.stop();
}
#[test]
fn folding_ranges_cover_blocks_comments_and_uses() {
    let mut s = session("lsp-folding");
    let main = s.main.clone();
    let r = s.c.request(
        "textDocument/foldingRange",
        json!({"textDocument": {"uri": main}}),
    );
    let got: Vec<(u64, u64, String)> = r
        .as_array()
        .expect("ranges")
        .iter()
        .map(|f| {
            (
                f["startLine"].as_u64().unwrap_or(0),
                f["endLine"].as_u64().unwrap_or(0),
                f["kind"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let line = |needle: &str| pos(MAIN, needle, 0, 0)["line"].as_u64().unwrap_or(0);
    for want in [
        (line("use \"./lib"), line("use json"), "imports"),
        (line("# Tickets"), line("# into"), "comment"),
        (line("type Triage"), line("score: float"), ""),
        (line("def classify"), line("return Ok(Triage"), ""),
        (line("if len(text)"), line("return Err(\"too"), ""),
        (line("def main"), line("return Ok(n +"), ""),
        (line("t: Triage"), line("return Err(why)"), ""),
    ] {
        let want = (want.0, want.1, want.2.to_string());
        assert!(got.contains(&want), "{want:?} missing from {got:?}");
    }
    assert!(got.iter().all(|(a, b, _)| a < b));
    s.c.stop();
}

fn hover_text(c: &mut Client, uri: &str, text: &str, needle: &str, offset: usize) -> String {
    let h = c.at("textDocument/hover", uri, pos(text, needle, 0, offset));
    h["contents"]["value"].as_str().unwrap_or("").to_string()
}

#[test]
fn hover_and_definition_reach_types_fields_methods_and_std_members() {
    let mut s = session("lsp-hover-more");
    let (main, lib) = (s.main.clone(), s.lib.clone());
    // A record named in an annotation, inside `Result[...]`.
    let h = hover_text(&mut s.c, &main, MAIN, "Triage]", 2);
    assert!(
        h.contains("type Triage:") && h.contains("category: str"),
        "{h}"
    );
    let d =
        s.c.at("textDocument/definition", &main, pos(MAIN, "Triage]", 0, 2));
    assert_eq!(d["range"]["start"], pos(MAIN, "Triage:", 0, 0));
    // A record of another module named in that module's annotation (`list[Money]`).
    s.c.open(&lib, LIB);
    let h = hover_text(&mut s.c, &lib, LIB, "Money]", 1);
    assert!(
        h.contains("type Money:") && h.contains("An amount in cents."),
        "{h}"
    );
    let d =
        s.c.at("textDocument/definition", &lib, pos(LIB, "Money]", 0, 1));
    assert_eq!(d["range"]["start"], pos(LIB, "Money:", 0, 0));
    // A built-in type in an annotation.
    let h = hover_text(&mut s.c, &main, MAIN, "Result[int]", 1);
    assert!(h.contains("Ok(T)"), "{h}");
    // A field read and a constructor keyword.
    let h = hover_text(&mut s.c, &main, MAIN, "category\n", 1);
    assert!(
        h.contains("category: str") && h.contains("field of `Triage`"),
        "{h}"
    );
    let d = s.c.at(
        "textDocument/definition",
        &main,
        pos(MAIN, "category=", 0, 1),
    );
    assert_eq!(d["range"]["start"], pos(MAIN, "category: str", 0, 0));
    let h = hover_text(&mut s.c, &main, MAIN, "score=", 1);
    assert!(h.contains("score: float"), "{h}");
    // A method of a built-in type, and a standard-library member, with their docs.
    let h = hover_text(&mut s.c, &main, MAIN, "split()", 1);
    assert!(
        h.contains("str.split(sep: str | None = None") && h.contains("white space"),
        "{h}"
    );
    let h = hover_text(&mut s.c, &main, MAIN, "encode(", 1);
    assert!(
        h.contains("json.encode(value: any") && h.contains("JSON text"),
        "{h}"
    );
    s.c.stop();
}
