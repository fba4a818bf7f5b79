//! `kora lsp` after edits (issue 28): the server re-parses only the top-level statements an
//! edit touched, so after every edit its diagnostics must equal those of a fresh check of the
//! same text: a document opened anew (nothing kept) and `kora check` on the file.

mod lsp_client;
mod protocol;

use std::path::Path;
use std::process::Command;

use lsp_client::{position, uri, Client};
use protocol::scratch;
use serde_json::{json, Value};

const PROGRAM: &str = r#"type Item:
    id: int
    name: str

def score(x: int, items: list[Item]) -> int:
    total = x * 2 + 1
    for it in items:
        total = total + it.id
    return total

# A comment between the items.

def label(n: int) -> str:
    return f"label {n}"

items = [Item(1, "a"), Item(2, "b")]
value = score(3, items)
name = label(value)
"#;

/// One open document, edited the way an editor edits: ranged changes, one version each.
struct Doc {
    uri: String,
    text: String,
    version: i64,
}

impl Doc {
    /// Replaces `del` bytes at `at` with `ins` and returns the diagnostics of the new version.
    fn edit(&mut self, c: &mut Client, at: usize, del: usize, ins: &str) -> Vec<Value> {
        let end = (at + del).min(self.text.len());
        self.version += 1;
        c.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": self.uri, "version": self.version},
                   "contentChanges": [{"range": {"start": position(&self.text, at),
                                                  "end": position(&self.text, end)},
                                       "text": ins}]}),
        );
        self.text.replace_range(at..end, ins);
        c.diagnostics(&self.uri, self.version)
    }

    /// `edit` at the `nth` occurrence of `needle`, replacing it.
    fn replace(&mut self, c: &mut Client, needle: &str, with: &str) -> Vec<Value> {
        let at = self
            .text
            .find(needle)
            .unwrap_or_else(|| panic!("`{needle}` not in the document"));
        self.edit(c, at, needle.len(), with)
    }
}

/// What a diagnostic says, without the document it was published for.
fn essence(ds: &[Value]) -> Vec<Value> {
    ds.iter()
        .map(|d| {
            let related: Vec<Value> = d["relatedInformation"]
                .as_array()
                .map(|r| {
                    r.iter()
                        .map(|x| json!([x["location"]["range"], x["message"]]))
                        .collect()
                })
                .unwrap_or_default();
            json!([d["range"], d["code"], d["severity"], d["message"], related])
        })
        .collect()
}

/// The diagnostics of `text` opened as a new document: parsed and checked whole.
fn fresh(c: &mut Client, dir: &Path, n: &mut usize, text: &str) -> Vec<Value> {
    *n += 1;
    let u = uri(&dir.join(format!("fresh{n}.ko")));
    c.open(&u, text);
    let got = c.diagnostics(&u, 1);
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": u}}));
    got
}

/// (code, line, column) of each error `kora check` prints for `text`, 1-based.
fn kora_check(dir: &Path, text: &str) -> Vec<(String, u64, u64)> {
    let path = dir.join("on_disk.ko");
    std::fs::write(&path, text).expect("write the checked file");
    let out = Command::new(env!("CARGO_BIN_EXE_kora"))
        .arg("check")
        .arg(&path)
        .output()
        .expect("run kora check");
    // The rendering: `[E0204] Error: ...`, then `╭─[ path:line:col ]` under it.
    let err =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let mut found = Vec::new();
    let mut code = None;
    for line in err.lines() {
        if let Some(rest) = line.strip_prefix('[').filter(|r| r.contains("] Error:")) {
            code = rest.split(']').next().map(str::to_string);
        } else if let (Some(c), Some((_, loc))) = (&code, line.split_once("─[ ")) {
            let loc = loc.trim_end().trim_end_matches(']').trim_end();
            let mut parts = loc.rsplitn(3, ':');
            let col = parts.next().and_then(|x| x.parse().ok()).unwrap_or(0);
            let row = parts.next().and_then(|x| x.parse().ok()).unwrap_or(0);
            found.push((c.clone(), row, col));
            code = None;
        }
    }
    found.sort();
    found
}

/// The errors among `ds` as `kora_check` lists them.
fn errors_of(ds: &[Value]) -> Vec<(String, u64, u64)> {
    let mut v: Vec<(String, u64, u64)> = ds
        .iter()
        .filter(|d| d["severity"] == 1)
        .map(|d| {
            (
                d["code"].as_str().unwrap_or("").to_string(),
                d["range"]["start"]["line"].as_u64().unwrap_or(0) + 1,
                d["range"]["start"]["character"].as_u64().unwrap_or(0) + 1,
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn edits_inside_a_body_and_to_a_signature_match_a_fresh_check() {
    let dir = scratch("lsp-incremental");
    let path = dir.join("main.ko");
    std::fs::write(&path, PROGRAM).expect("write main.ko");
    let (mut c, _) = Client::start(&dir);
    let mut doc = Doc {
        uri: uri(&path),
        text: PROGRAM.to_string(),
        version: 1,
    };
    c.open(&doc.uri, PROGRAM);
    assert_eq!(c.diagnostics(&doc.uri, 1), Vec::<Value>::new());
    let mut n = 0;

    // An error inside one function's body, then fixed again.
    let broken = doc.replace(&mut c, "x * 2 + 1", "x * 2 + \"a\"");
    assert!(!broken.is_empty(), "the body's type error is reported");
    assert_eq!(
        essence(&broken),
        essence(&fresh(&mut c, &dir, &mut n, &doc.text))
    );
    assert_eq!(errors_of(&broken), kora_check(&dir, &doc.text));
    let fixed = doc.replace(&mut c, "x * 2 + \"a\"", "x * 2 + 7");
    assert_eq!(fixed, Vec::<Value>::new());

    // A signature changed: the callers in other items break, then heal.
    let callers = doc.replace(&mut c, "def label(n: int)", "def label(n: str)");
    let line_of_call = PROGRAM
        .lines()
        .position(|l| l.starts_with("name = "))
        .unwrap_or(0);
    assert!(
        callers
            .iter()
            .any(|d| d["range"]["start"]["line"] == line_of_call),
        "the call `label(value)` in another item is reported: {callers:?}"
    );
    assert_eq!(
        essence(&callers),
        essence(&fresh(&mut c, &dir, &mut n, &doc.text))
    );
    assert_eq!(errors_of(&callers), kora_check(&dir, &doc.text));
    let ret = doc.replace(&mut c, "-> int:", "-> str:");
    assert_eq!(
        essence(&ret),
        essence(&fresh(&mut c, &dir, &mut n, &doc.text))
    );
    assert_eq!(errors_of(&ret), kora_check(&dir, &doc.text));
    doc.replace(&mut c, "-> str:", "-> int:");
    let healed = doc.replace(&mut c, "def label(n: str)", "def label(n: int)");
    assert_eq!(healed, Vec::<Value>::new());

    // Text typed between items and a new item appended.
    let between = doc.replace(&mut c, "# A comment", "extra = score(1, [])\n# A comment");
    assert_eq!(
        essence(&between),
        essence(&fresh(&mut c, &dir, &mut n, &doc.text))
    );
    let end = doc.text.len();
    let appended = doc.edit(
        &mut c,
        end,
        0,
        "def late() -> int:\n    return undefined_name\n",
    );
    assert_eq!(errors_of(&appended), kora_check(&dir, &doc.text));
    assert_eq!(
        essence(&appended),
        essence(&fresh(&mut c, &dir, &mut n, &doc.text))
    );
    c.stop();
    let _ = std::fs::remove_dir_all(&dir);
}

/// Text an edit inserts: the parser tests' pieces, and names the program declares.
fn pieces() -> Vec<&'static str> {
    let mut all = kora_testkit::edits::PIECES.to_vec();
    all.extend(["\"a\"", "items", "total"]);
    all
}

#[test]
fn random_edits_match_a_fresh_check() {
    let dir = scratch("lsp-incremental-random");
    let path = dir.join("main.ko");
    std::fs::write(&path, PROGRAM).expect("write main.ko");
    let (mut c, _) = Client::start(&dir);
    let mut doc = Doc {
        uri: uri(&path),
        text: PROGRAM.to_string(),
        version: 1,
    };
    c.open(&doc.uri, PROGRAM);
    c.diagnostics(&doc.uri, 1);
    let rounds: u64 = std::env::var("KORA_LSP_EDITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(40);
    // A fixed-seed generator, so a failure repeats.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as usize) % n.max(1)
    };
    let pieces = pieces();
    let mut n = 0;
    for round in 0..rounds {
        // Half the edits undo themselves in the next round, so the text stays mostly valid.
        let at = next(doc.text.len() + 1);
        let del = if next(3) == 0 { next(6) } else { 0 };
        let piece = pieces[next(pieces.len())];
        let before = doc.text.clone();
        let got = doc.edit(&mut c, at, del, piece);
        let want = fresh(&mut c, &dir, &mut n, &doc.text);
        assert_eq!(
            essence(&got),
            essence(&want),
            "round {round}: after inserting {piece:?} at {at} (deleting {del}) into\n{before}\n---\n{}",
            doc.text
        );
        if next(2) == 0 {
            let len = doc.text.len();
            doc.version += 1;
            c.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": doc.uri, "version": doc.version},
                       "contentChanges": [{"range": {"start": position(&doc.text, 0),
                                                      "end": position(&doc.text, len)},
                                           "text": before}]}),
            );
            doc.text = before;
            let got = c.diagnostics(&doc.uri, doc.version);
            let want = fresh(&mut c, &dir, &mut n, &doc.text);
            assert_eq!(essence(&got), essence(&want), "round {round}, undone");
        }
    }
    c.stop();
    let _ = std::fs::remove_dir_all(&dir);
}
