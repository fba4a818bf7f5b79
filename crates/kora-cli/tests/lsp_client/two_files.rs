//! The two-file workspace most request tests open (`main.ko` using `lib.ko`), and locations
//! read back as `(uri, line, character)`.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::{pos, uri, Client};
use crate::protocol::scratch;

pub const LIB: &str = r#"type Money:
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

pub const MAIN: &str = r#"use "./lib.ko" as lib
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

pub struct Session {
    pub c: Client,
    pub dir: PathBuf,
    pub main: String,
    pub lib: String,
}

pub fn session(name: &str) -> Session {
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
pub fn places(locs: &Value) -> Vec<(String, u64, u64)> {
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

pub fn place(uri: &str, text: &str, needle: &str, nth: usize, offset: usize) -> (String, u64, u64) {
    let p = pos(text, needle, nth, offset);
    (
        uri.to_string(),
        p["line"].as_u64().unwrap_or(0),
        p["character"].as_u64().unwrap_or(0),
    )
}

pub fn refs(
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
