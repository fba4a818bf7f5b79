//! `kora audit` through the binary: the golden listings in `tests/audit/` (a multi-module program and `examples/`), entry files, the default folder, and the failures.
//!
//! `KORA_BLESS=1` rewrites the expected files from what `kora audit` prints, as the
//! conformance suite does; read the diff before committing it.

mod support;

use std::path::{Path, PathBuf};

use support::{kora, temp_dir, text};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

fn data() -> PathBuf {
    workspace().join("tests/audit")
}

/// Runs `kora ARGS` in `cwd`, expects exit 0 and an empty stderr, and compares stdout with
/// `expected` (or writes it under `KORA_BLESS=1`).
fn golden(cwd: &Path, args: &[&str], expected: &Path) {
    let out = kora(cwd, args, None);
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "kora {args:?} failed:\n{stdout}{}",
        text(&out.stderr)
    );
    assert_eq!(text(&out.stderr), "", "kora {args:?} wrote to stderr");
    if std::env::var("KORA_BLESS").is_ok_and(|v| v == "1") {
        std::fs::write(expected, &stdout).expect("write the expected file");
        return;
    }
    let want = std::fs::read_to_string(expected).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (KORA_BLESS=1 cargo test -p kora-cli --test audit writes it)",
            expected.display()
        )
    });
    assert_eq!(
        stdout,
        want,
        "kora {args:?} differs from {}; if the new listing is right, rerun with KORA_BLESS=1",
        expected.display()
    );
}

#[test]
fn a_multi_module_program_lists_every_site_once() {
    golden(&data(), &["audit", "program"], &data().join("program.txt"));
}

#[test]
fn json_lists_the_same_sites() {
    golden(
        &data(),
        &["audit", "program", "--json"],
        &data().join("program.json"),
    );
    // The JSON and the lines agree site for site.
    let json = kora(&data(), &["audit", "program", "--json"], None);
    let sites: serde_json::Value = serde_json::from_slice(&json.stdout).expect("valid JSON");
    let sites = sites.as_array().expect("an array");
    let lines = text(&kora(&data(), &["audit", "program"], None).stdout);
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(
        sites.len() + 1,
        lines.len(),
        "one line per site and a count"
    );
    for (site, line) in sites.iter().zip(&lines) {
        let want = format!(
            "{}:{}:{}: declassify {} for {}",
            site["file"].as_str().expect("file"),
            site["line"],
            site["col"],
            site["expr"].as_str().expect("expr"),
            site["sink"].as_str().expect("sink"),
        );
        assert_eq!(&want, line);
    }
}

/// The sites inside `ask.ko` are reached from `main.ko` through `use`, so auditing the
/// entry file alone gives the folder's listing (every file of the folder is reached).
#[test]
fn an_entry_file_follows_its_uses() {
    let folder = text(&kora(&data(), &["audit", "program"], None).stdout);
    let entry = kora(&data(), &["audit", "program/main.ko"], None);
    assert_eq!(entry.status.code(), Some(0));
    assert_eq!(text(&entry.stdout), folder);
    assert!(folder.contains("program/lib/ask.ko:"), "{folder}");
}

#[test]
fn the_default_path_is_the_current_folder() {
    let folder = text(&kora(&data(), &["audit", "program"], None).stdout);
    let here = kora(&data().join("program"), &["audit"], None);
    assert_eq!(here.status.code(), Some(0));
    assert_eq!(text(&here.stdout), folder.replace("program/", ""));
}

#[test]
fn the_examples_list_exactly_their_sites() {
    golden(
        &workspace(),
        &["audit", "examples/"],
        &data().join("examples.txt"),
    );
}

#[test]
fn a_file_that_does_not_parse_fails_with_its_position() {
    let d = temp_dir("kora-audit", "syntax");
    std::fs::write(d.join("good.ko"), "x = 1\ndeclassify x for m:\n    pass\n").expect("write");
    std::fs::write(d.join("bad.ko"), "x = 1\ndef (:\n").expect("write");
    let out = kora(&d, &["audit"], None);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("bad.ko:2:"), "no position:\n{stderr}");
    assert!(
        text(&out.stdout).is_empty(),
        "an incomplete audit must list nothing"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_missing_used_file_or_path_fails() {
    let d = temp_dir("kora-audit", "missing");
    std::fs::write(d.join("main.ko"), "use \"./gone.ko\" as gone\n").expect("write");
    let out = kora(&d, &["audit", "main.ko"], None);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("E0104"), "{stderr}");
    assert!(stderr.contains("main.ko:1:5"), "{stderr}");
    let out = kora(&d, &["audit", "nowhere.ko"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cannot read `nowhere.ko`"),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_program_without_releases_lists_none_and_succeeds() {
    let d = temp_dir("kora-audit", "none");
    std::fs::write(d.join("a.ko"), "print(1)\n").expect("write");
    let out = kora(&d, &["audit"], None);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "0 declassify sites in 1 file\n");
    let json = kora(&d, &["audit", "--json"], None);
    assert_eq!(text(&json.stdout), "[]\n");
    let _ = std::fs::remove_dir_all(&d);
}
