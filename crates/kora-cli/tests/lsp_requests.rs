//! `kora lsp` end to end, one test per request added for issue 28: references, rename (with
//! prepareRename), signature help, semantic tokens (full and delta), code actions, inlay hints,
//! workspace symbols, document highlight, folding ranges, and hover/definition on annotation
//! types, record fields, methods and standard-library members. The capabilities must advertise
//! exactly these.

mod lsp_client;
mod protocol;

use std::path::PathBuf;

use lsp_client::{apply, pos, uri, Client};
use protocol::scratch;
use serde_json::{json, Value};

const LIB: &str = r#"type Money:
    """An amount in cents."""
    cents: int
    currency: str

def total(items: list[Money]) -> int:
    """Sum of the cents."""
    s = 0
    for m in items:
        s = s + m.cents
    return s
"#;

const MAIN: &str = r#"use "./lib.ko" as lib
use json

# Tickets are sorted
# into categories.
type Triage:
    category: str
    score: float

def classify(text: str, limit: int) -> Result[Triage]:
    """Sorts a ticket."""
    if len(text) > limit:
        return Err("too long")
    return Ok(Triage(category="bug", score=0.5))

def main() -> Result[int]:
    t: Triage = classify("hello", 10) else (why, kind):
        return Err(why)
    label = t.category
    words = label.split()
    wallet = [lib.Money(100, "EUR")]
    n = lib.total(wallet)
    return Ok(n + len(words))

data = json.encode([1, 2])
"#;

struct Session {
    c: Client,
    dir: PathBuf,
    main: String,
    lib: String,
}

fn session(name: &str) -> Session {
    let dir = scratch(name);
    std::fs::write(dir.join("lib.ko"), LIB).expect("write lib");
    std::fs::write(dir.join("main.ko"), MAIN).expect("write main");
    let (mut c, _) = Client::start(&dir);
    let main = uri(&dir.join("main.ko"));
    let lib = uri(&dir.join("lib.ko"));
    c.open(&main, MAIN);
    assert_eq!(c.diagnostics(&main, 1), Vec::<Value>::new());
    Session { c, dir, main, lib }
}

/// `(uri, line, character)` of each location, sorted.
fn places(locs: &Value) -> Vec<(String, u64, u64)> {
    let mut out: Vec<_> = locs
        .as_array()
        .expect("locations")
        .iter()
        .map(|l| {
            (
                l["uri"].as_str().unwrap_or("").to_string(),
                l["range"]["start"]["line"].as_u64().unwrap_or(0),
                l["range"]["start"]["character"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    out.sort();
    out
}

fn place(uri: &str, text: &str, needle: &str, nth: usize, offset: usize) -> (String, u64, u64) {
    let p = pos(text, needle, nth, offset);
    (
        uri.to_string(),
        p["line"].as_u64().unwrap_or(0),
        p["character"].as_u64().unwrap_or(0),
    )
}

fn refs(
    s: &mut Session,
    text: &str,
    needle: &str,
    nth: usize,
    decl: bool,
) -> Vec<(String, u64, u64)> {
    let main = s.main.clone();
    let r = s.c.request(
        "textDocument/references",
        json!({"textDocument": {"uri": main}, "position": pos(text, needle, nth, 1),
               "context": {"includeDeclaration": decl}}),
    );
    places(&r)
}

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
fn references_cover_names_fields_types_and_modules() {
    let mut s = session("lsp-refs");
    let (main, lib) = (s.main.clone(), s.lib.clone());
    // A field: its declaration, a constructor keyword and an attribute read.
    let got = refs(&mut s, MAIN, "category\n", 0, true);
    let want = vec![
        place(&main, MAIN, "category: str", 0, 0),
        place(&main, MAIN, "category=", 0, 0),
        place(&main, MAIN, "category\n", 0, 0),
    ];
    assert_eq!(got, want);
    // Without the declaration.
    assert_eq!(refs(&mut s, MAIN, "category\n", 0, false).len(), 2);
    // A record type: declaration, annotations (also inside `Result[...]`) and the constructor.
    let got = refs(&mut s, MAIN, "Triage]", 0, true);
    assert_eq!(got.len(), 4, "{got:?}");
    assert!(got.contains(&place(&main, MAIN, "Triage:", 0, 0)));
    assert!(got.contains(&place(&main, MAIN, "Triage(", 0, 0)));
    // A function of another module: its `def` there, and the call here.
    let got = refs(&mut s, MAIN, "total(wallet)", 0, true);
    assert_eq!(
        got,
        vec![
            place(&lib, LIB, "total(", 0, 0),
            place(&main, MAIN, "total(wallet)", 0, 0)
        ]
    );
    // A type of another module, named in that module's annotation and constructed here.
    let got = refs(&mut s, MAIN, "Money(", 0, true);
    assert!(got.contains(&place(&lib, LIB, "Money:", 0, 0)), "{got:?}");
    assert!(got.contains(&place(&lib, LIB, "Money]", 0, 0)), "{got:?}");
    assert!(got.contains(&place(&main, MAIN, "Money(", 0, 0)), "{got:?}");
    // `s = s + x` reads `s` too (the checker appends in place there, without lowering the read).
    s.c.open(&lib, LIB);
    let r = s.c.request(
        "textDocument/references",
        json!({"textDocument": {"uri": lib}, "position": pos(LIB, "s = 0", 0, 0),
               "context": {"includeDeclaration": true}}),
    );
    assert_eq!(
        places(&r),
        vec![
            place(&lib, LIB, "s = 0", 0, 0),
            place(&lib, LIB, "s = s", 0, 0),
            place(&lib, LIB, "s + m", 0, 0),
            place(&lib, LIB, "return s", 0, 7),
        ]
    );
    // A local stays in its function; a built-in has no references.
    let got = refs(&mut s, MAIN, "words)", 0, true);
    assert_eq!(got.len(), 2, "{got:?}");
    let r = s.c.request(
        "textDocument/references",
        json!({"textDocument": {"uri": main}, "position": pos(MAIN, "len(text", 0, 1),
               "context": {"includeDeclaration": true}}),
    );
    assert_eq!(r, Value::Null);
    s.c.stop();
}

#[test]
fn rename_renames_every_occurrence_and_refuses_bad_names() {
    let mut s = session("lsp-rename");
    let (main, lib) = (s.main.clone(), s.lib.clone());
    // prepareRename: the name's range, or an error for what cannot be renamed.
    let r = s.c.at(
        "textDocument/prepareRename",
        &main,
        pos(MAIN, "label.split", 0, 2),
    );
    assert_eq!(r["start"], pos(MAIN, "label.split", 0, 0));
    assert_eq!(r["end"], pos(MAIN, "label.split", 0, 5));
    let e = s.c.call(
        "textDocument/prepareRename",
        json!({"textDocument": {"uri": main}, "position": pos(MAIN, "len(text", 0, 1)}),
    );
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("to rename"),
        "{e}"
    );
    for bad in ["def", "2x", "a-b", "print", ""] {
        let e = s.c.call(
            "textDocument/rename",
            json!({"textDocument": {"uri": main}, "position": pos(MAIN, "label.split", 0, 2),
                   "newName": bad}),
        );
        assert!(e["error"]["message"].is_string(), "{bad}: {e}");
    }
    // A record type renamed in both files; the result checks clean.
    let edit = s.c.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": main}, "position": pos(MAIN, "Money(", 0, 1),
               "newName": "Cash"}),
    );
    let changes = &edit["changes"];
    let new_lib = apply(LIB, changes[&lib].as_array().expect("lib edits"));
    let new_main = apply(MAIN, changes[&main].as_array().expect("main edits"));
    assert!(
        new_lib.contains("type Cash:") && new_lib.contains("list[Cash]"),
        "{new_lib}"
    );
    assert!(
        !new_lib.contains("Money") && !new_main.contains("Money"),
        "{new_main}"
    );
    std::fs::write(s.dir.join("lib.ko"), &new_lib).expect("write lib");
    s.c.replace(&main, 2, &new_main);
    assert_eq!(s.c.diagnostics(&main, 2), Vec::<Value>::new());
    // A field: declaration, keyword argument and attribute.
    let edit = s.c.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": main}, "position": pos(&new_main, "category=", 0, 1),
               "newName": "kind_of"}),
    );
    let renamed = apply(&new_main, edit["changes"][&main].as_array().expect("edits"));
    assert_eq!(renamed.matches("kind_of").count(), 3, "{renamed}");
    assert!(!renamed.contains("category"));
    s.c.replace(&main, 3, &renamed);
    assert_eq!(s.c.diagnostics(&main, 3), Vec::<Value>::new());
    // A parameter: only inside its function.
    let edit = s.c.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": main}, "position": pos(&renamed, "text)", 0, 1),
               "newName": "body"}),
    );
    let renamed2 = apply(&renamed, edit["changes"][&main].as_array().expect("edits"));
    assert!(renamed2.contains("def classify(body: str") && renamed2.contains("len(body)"));
    assert!(renamed2.contains("\"hello\""), "{renamed2}");
    s.c.stop();
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
fn document_highlight_marks_reads_and_writes() {
    let mut s = session("lsp-highlight");
    let main = s.main.clone();
    let r = s.c.at(
        "textDocument/documentHighlight",
        &main,
        pos(MAIN, "words)", 0, 1),
    );
    let got: Vec<(Value, i64)> = r
        .as_array()
        .expect("highlights")
        .iter()
        .map(|h| (h["range"]["start"].clone(), h["kind"].as_i64().unwrap_or(0)))
        .collect();
    // 3 = write, 2 = read.
    assert_eq!(
        got,
        vec![
            (pos(MAIN, "words =", 0, 0), 3),
            (pos(MAIN, "words)", 0, 0), 2)
        ]
    );
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

/// Asked from the declaring file, references and rename reach the files that `use` it, found in
/// the workspace without being open; a file that does not use it, and a local, stay out.
#[test]
fn references_and_rename_reach_the_files_that_use_a_module() {
    let dir = scratch("lsp-upward");
    std::fs::write(dir.join("lib.ko"), LIB).expect("write lib");
    std::fs::write(dir.join("main.ko"), MAIN).expect("write main");
    let other = "def total(xs: list[int]) -> int:\n    return len(xs)\n\nprint(total([1]))\n";
    std::fs::create_dir_all(dir.join("tools")).expect("mkdir");
    std::fs::write(dir.join("tools/other.ko"), other).expect("write other");
    let user = "use \"../lib.ko\" as money\n\nprint(money.total([money.Money(cents=5, currency=\"EUR\")]))\n";
    std::fs::write(dir.join("tools/user.ko"), user).expect("write user");
    let (mut c, _) = Client::start(&dir);
    let (lib, main) = (uri(&dir.join("lib.ko")), uri(&dir.join("main.ko")));
    let user_uri = uri(&dir.join("tools/user.ko"));
    c.open(&lib, LIB);
    assert_eq!(c.diagnostics(&lib, 1), Vec::<Value>::new());
    let ask = |c: &mut Client, needle: &str, nth: usize| {
        let r = c.request(
            "textDocument/references",
            json!({"textDocument": {"uri": lib}, "position": pos(LIB, needle, nth, 1),
                   "context": {"includeDeclaration": true}}),
        );
        places(&r)
    };
    // A function: its `def`, and the calls in both files that use lib.ko (not other.ko's own `total`).
    let got = ask(&mut c, "total(", 0);
    assert_eq!(
        got,
        vec![
            place(&lib, LIB, "total(", 0, 0),
            place(&main, MAIN, "total(wallet)", 0, 0),
            place(&user_uri, user, "total(", 0, 0),
        ]
    );
    // A record: its declaration, its annotation here, and the constructors in both users.
    let got = ask(&mut c, "Money:", 0);
    assert!(got.contains(&place(&main, MAIN, "Money(", 0, 0)), "{got:?}");
    assert!(
        got.contains(&place(&user_uri, user, "Money(", 0, 0)),
        "{got:?}"
    );
    assert_eq!(got.len(), 4, "{got:?}");
    // A field: the declaration, the read here, and the keyword in user.ko.
    let got = ask(&mut c, "cents: int", 0);
    assert!(
        got.contains(&place(&user_uri, user, "cents=", 0, 0)),
        "{got:?}"
    );
    assert_eq!(got.len(), 3, "{got:?}");
    // A local stays in its function.
    assert_eq!(ask(&mut c, "s = 0", 0).len(), 4);

    // Renaming `total` from lib.ko edits all three files; each result checks clean.
    let edit = c.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": lib}, "position": pos(LIB, "total(", 0, 1),
               "newName": "sum_cents"}),
    );
    let changes = &edit["changes"];
    assert!(
        changes.get(uri(&dir.join("tools/other.ko"))).is_none(),
        "{edit}"
    );
    let edits = |u: &str| changes[u].as_array().cloned().unwrap_or_default();
    for (u, text, path) in [
        (&lib, LIB, "lib.ko"),
        (&main, MAIN, "main.ko"),
        (&user_uri, user, "tools/user.ko"),
    ] {
        let renamed = apply(text, &edits(u));
        assert!(renamed.contains("sum_cents"), "{path}: {renamed}");
        assert!(!renamed.contains("total"), "{path}: {renamed}");
        std::fs::write(dir.join(path), renamed).expect("write renamed");
    }
    c.stop();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kora"))
        .args(["check", "main.ko", "tools/user.ko", "lib.ko"])
        .current_dir(&dir)
        .output()
        .expect("kora check");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
