//! `kora lsp` end to end: references, rename (with prepareRename) and document highlight,
//! within the two-file workspace and across the workspace files that `use` a module.

mod lsp_client;
mod protocol;

use lsp_client::two_files::{place, places, refs, session, LIB, MAIN};
use lsp_client::{apply, pos, uri, Client};
use protocol::scratch;
use serde_json::{json, Value};

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
