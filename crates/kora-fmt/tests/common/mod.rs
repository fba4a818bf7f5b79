//! The repository's `.ko` files, shared by the corpus tests.

use std::path::{Path, PathBuf};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else if p.extension().is_some_and(|x| x == "ko") {
            out.push(p);
        }
    }
}

/// Every `.ko` file under `examples/`, `benches/` and `tests/` (the error snapshots included).
pub fn repository_programs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    for d in ["examples", "benches", "tests"] {
        walk(&root.join(d), &mut out);
    }
    out.sort();
    assert!(out.len() > 250, "the repository's programs were not found");
    out
}
