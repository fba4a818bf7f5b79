//! House rules checked mechanically: every source file says what it owns, every error code is documented.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

#[test]
fn every_rust_file_starts_with_a_module_doc_line() {
    let mut files = Vec::new();
    rust_files(&crates_dir(), &mut files);
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            !text.starts_with("//!")
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(files.len() > 20, "found the sources");
    assert!(
        missing.is_empty(),
        "files without a leading `//!` line:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_error_code_in_the_sources_is_documented() {
    let docs =
        std::fs::read_to_string(crates_dir().join("../docs/errors.md")).expect("docs/errors.md");
    let mut files = Vec::new();
    rust_files(&crates_dir(), &mut files);
    let mut undocumented = std::collections::BTreeSet::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_default();
        let bytes = text.as_bytes();
        for i in 0..bytes.len().saturating_sub(6) {
            // A code is written as a string literal: "E" followed by four digits.
            if bytes[i] == b'"'
                && bytes[i + 1] == b'E'
                && bytes[i + 2..i + 6].iter().all(u8::is_ascii_digit)
                && bytes.get(i + 6) == Some(&b'"')
            {
                let code = &text[i + 1..i + 6];
                if !docs.contains(&format!("### {code}")) {
                    undocumented.insert(format!("{code} ({})", f.display()));
                }
            }
        }
    }
    assert!(
        undocumented.is_empty(),
        "codes without a `### CODE` entry in docs/errors.md:\n{}",
        undocumented.into_iter().collect::<Vec<_>>().join("\n")
    );
}
