//! Every program in `examples/` runs through the `kora` binary and prints exactly its `.out` file.
//!
//! An example's arguments come from `NAME.args` and its standard input from `NAME.in`.
//! Model calls replay from each example's committed cassette (`--replay`), so
//! this passes on a machine with no network and no API key.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

#[test]
fn examples_print_their_expected_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut failures = Vec::new();
    let mut ran = 0;
    let mut entries: Vec<_> = std::fs::read_dir(&root)
        .expect("examples folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ko"))
        .collect();
    entries.sort();
    for ko in entries {
        let expected = std::fs::read_to_string(ko.with_extension("out"))
            .unwrap_or_else(|_| panic!("{} has no .out file", ko.display()));
        // `NAME.args` holds the program's arguments (one line, split on spaces) and
        // `NAME.in` its standard input (the answers to its `ask_human` questions).
        let args = std::fs::read_to_string(ko.with_extension("args")).unwrap_or_default();
        let input = std::fs::read(ko.with_extension("in")).unwrap_or_default();
        let mut child = Command::new(env!("CARGO_BIN_EXE_kora"))
            .args(["run", "--replay"])
            .arg(&ko)
            .args(args.split_whitespace())
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kora runs");
        if let Some(mut stdin) = child.stdin.take() {
            stdin.write_all(&input).expect("stdin");
        }
        let out = child.wait_with_output().expect("kora ends");
        ran += 1;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || stdout != expected {
            failures.push(format!(
                "{}: exit {:?}\n--- expected\n{expected}--- got\n{stdout}--- stderr\n{}",
                ko.display(),
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(
        ran >= 7,
        "expected the examples folder to hold the phase demos"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `kora test examples/` passes from the committed cassettes, and every example has tests.
#[test]
fn every_example_has_tests_that_pass_from_cassettes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO_BIN_EXE_kora"))
        .args(["test", "--no-trace", "examples/"])
        .current_dir(&root)
        .env("NO_COLOR", "1")
        .output()
        .expect("kora runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "kora test examples/ failed:\n{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let summary = stdout.lines().last().unwrap_or("");
    let passed: usize = summary
        .strip_suffix(" passed, 0 failed")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("unexpected summary {summary:?}:\n{stdout}"));
    let mut examples: Vec<String> = std::fs::read_dir(root.join("examples"))
        .expect("examples folder")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".ko"))
        .collect();
    examples.sort();
    for name in &examples {
        assert!(
            stdout.contains(&format!("PASS examples/{name}: ")),
            "{name} has no passing test:\n{stdout}"
        );
    }
    assert!(passed >= 2 * examples.len(), "{stdout}");
}
