//! Every program in `examples/` runs through the `kora` binary and prints exactly its `.out` file.
//!
//! Model calls replay from each example's committed cassette (`--replay`), so
//! this passes on a machine with no network and no API key.

use std::path::Path;
use std::process::Command;

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
        let out = Command::new(env!("CARGO_BIN_EXE_kora"))
            .args(["run", "--replay"])
            .arg(&ko)
            .env("NO_COLOR", "1")
            .output()
            .expect("kora runs");
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
