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

/// The runtime's folders, bottom first, and the upward imports each may keep, read from the
/// table between the `layers` markers in `docs/architecture.md`.
struct Layers {
    order: Vec<String>,
    /// (a folder or a file under `src/`, the folder it may import although it sits higher)
    upward: Vec<(String, String)>,
}

fn read_layers(doc: &str) -> Layers {
    let begin = doc
        .find("<!-- layers:begin -->")
        .expect("the layers table's begin marker");
    let end = doc
        .find("<!-- layers:end -->")
        .expect("the layers table's end marker");
    let mut layers = Layers {
        order: Vec::new(),
        upward: Vec::new(),
    };
    for row in doc[begin..end].lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let who = cells[1].trim_matches('`').to_string();
        // A reason's first sentence lists the folders it keeps, each in backticks before a colon.
        let kept = cells[2].split(':').next().unwrap_or("");
        for name in kept.split(',').map(|n| n.trim().trim_matches('`')) {
            if !name.is_empty() {
                layers.upward.push((who.clone(), name.to_string()));
            }
        }
        if !who.contains('/') {
            layers.order.push(who);
        }
    }
    layers
}

/// Every `crate::NAME` a source names, including each name of a `crate::{a, b::c}` group.
fn crate_paths(code: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let body = group.split('}').next().unwrap_or("");
                for part in body.split(',') {
                    let head: String = part
                        .trim()
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    if !head.is_empty() {
                        found.push((n + 1, head));
                    }
                }
            } else {
                let head: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                found.push((n + 1, head));
            }
        }
    }
    found
}

/// The imports of `files` (path under `src/`, text) the table does not allow.
fn layer_violations(layers: &Layers, files: &[(String, String)]) -> Vec<String> {
    let rank = |folder: &str| layers.order.iter().position(|f| f == folder);
    let mut bad = Vec::new();
    for (path, text) in files {
        let name = path.rsplit('/').next().unwrap_or(path);
        // Unit tests may drive anything: a value-level test runs built-ins through TestCaller.
        if name == "tests.rs" || name.ends_with("_tests.rs") || name.contains("fuzz") {
            continue;
        }
        let Some((folder, _)) = path.split_once('/') else {
            continue; // lib.rs and error.rs: the crate's entry points
        };
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (line, target) in crate_paths(code) {
            if target == folder || target == "error" || rank(&target).is_none() {
                continue;
            }
            let (Some(from), Some(to)) = (rank(folder), rank(&target)) else {
                bad.push(format!(
                    "{path}:{line}: `{folder}` is not in the layers table"
                ));
                continue;
            };
            let kept = layers
                .upward
                .iter()
                .any(|(who, t)| t == &target && (who == folder || who == path));
            if to > from && !kept {
                bad.push(format!(
                    "{path}:{line}: `{folder}` imports `crate::{target}`, a folder above it"
                ));
            }
        }
    }
    bad
}

fn runtime_files() -> Vec<(String, String)> {
    let src = crates_dir().join("kora-runtime/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(&src).expect("under src").to_string_lossy();
            (
                rel.replace('\\', "/"),
                std::fs::read_to_string(f).unwrap_or_default(),
            )
        })
        .collect()
}

fn architecture_doc() -> String {
    std::fs::read_to_string(crates_dir().join("../docs/architecture.md"))
        .expect("docs/architecture.md")
}

#[test]
fn runtime_folders_import_only_what_the_layers_table_allows() {
    let layers = read_layers(&architecture_doc());
    assert!(
        layers.order.len() >= 8,
        "read the table: {:?}",
        layers.order
    );
    let files = runtime_files();
    let bad = layer_violations(&layers, &files);
    assert!(
        bad.is_empty(),
        "imports the table in docs/architecture.md does not allow (invert them, or list the \
         exception with its reason):\n{}",
        bad.join("\n")
    );
    // Every folder on disk has a row, and opens with what it owns.
    let mut folders: Vec<&str> = files
        .iter()
        .filter_map(|(p, _)| p.split_once('/').map(|(f, _)| f))
        .collect();
    folders.dedup();
    for f in folders {
        assert!(
            layers.order.iter().any(|o| o == f),
            "`{f}/` has no row in the layers table"
        );
        let m = files.iter().find(|(p, _)| p == &format!("{f}/mod.rs"));
        assert!(
            m.is_some_and(|(_, t)| t.starts_with("//!")),
            "`{f}/mod.rs` is missing or does not open with `//!`"
        );
    }
    let top = files.iter().filter(|(p, _)| !p.contains('/')).count();
    assert!(
        top <= 12,
        "{top} files directly in kora-runtime/src (at most 12)"
    );
}

#[test]
fn the_layers_check_catches_an_upward_import() {
    let layers = read_layers(&architecture_doc());
    let file = |path: &str, text: &str| vec![(path.to_string(), text.to_string())];
    let upward = file(
        "value/compare.rs",
        "//! x\nuse crate::agents::analyze::Models;\n",
    );
    assert_eq!(layer_violations(&layers, &upward).len(), 1);
    let grouped = file(
        "labels/ops.rs",
        "//! x\nuse crate::{value::Value, eval::Interp};\n",
    );
    assert_eq!(layer_violations(&layers, &grouped).len(), 1);
    // Downward, a listed exception, and unit tests pass.
    let fine = file(
        "agents/mock.rs",
        "use crate::eval::Interp;\nuse crate::value::Value;\n",
    );
    assert!(layer_violations(&layers, &fine).is_empty());
    let kept = file("eval/interp.rs", "use crate::agents::mock::Mock;\n");
    assert!(layer_violations(&layers, &kept).is_empty());
    let other = file("eval/exec.rs", "use crate::agents::mock::Mock;\n");
    assert_eq!(layer_violations(&layers, &other).len(), 1);
    let test = file(
        "value/x.rs",
        "#[cfg(test)]\nmod tests { use crate::eval::Interp; }\n",
    );
    assert!(layer_violations(&layers, &test).is_empty());
}
