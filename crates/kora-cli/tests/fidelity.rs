//! The fidelity corpus: every program in `tests/fidelity/` is valid Python 3.11 and valid Kora,
//! and `kora run` prints byte for byte what CPython prints, with the same exit status.
//!
//! Each program's `NAME.out` was made by CPython and is always compared; when a `python3` of
//! 3.11 or later is on `PATH`, CPython runs too and the two outputs are compared directly,
//! so the expectation cannot drift from the reference.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// At least this many programs: the corpus is a claim about breadth.
const MIN_PROGRAMS: usize = 40;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fidelity")
        .canonicalize()
        .expect("tests/fidelity exists")
}

struct Ran {
    status: Option<i32>,
    stdout: Vec<u8>,
    stderr: String,
}

fn run(mut cmd: Command, cwd: &Path) -> Ran {
    let out = cmd
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("PYTHONIOENCODING", "utf-8")
        .env("PYTHONUTF8", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .output()
        .expect("the program starts");
    Ran {
        status: out.status.code(),
        stdout: out.stdout,
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `python3` when it is CPython 3.11 or later.
fn python() -> Option<&'static str> {
    let out = Command::new("python3")
        .args(["-c", "import sys; print(sys.version_info >= (3, 11))"])
        .output()
        .ok()?;
    (out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "True")
        .then_some("python3")
}

fn first_difference(a: &[u8], b: &[u8]) -> String {
    let a = String::from_utf8_lossy(a);
    let b = String::from_utf8_lossy(b);
    let (al, bl): (Vec<&str>, Vec<&str>) = (a.split('\n').collect(), b.split('\n').collect());
    let at = (0..al.len().max(bl.len()))
        .find(|&i| al.get(i) != bl.get(i))
        .unwrap_or(0);
    format!(
        "line {}: expected {:?}, got {:?}",
        at + 1,
        al.get(at).copied().unwrap_or("<end>"),
        bl.get(at).copied().unwrap_or("<end>")
    )
}

#[test]
fn kora_prints_what_cpython_prints() {
    let dir = corpus();
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ko"))
        .collect();
    programs.sort();
    assert!(
        programs.len() >= MIN_PROGRAMS,
        "the corpus has {} programs, fewer than {MIN_PROGRAMS}",
        programs.len()
    );
    let python = python();
    let mut failures = Vec::new();
    for p in &programs {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let expected = std::fs::read(p.with_extension("out"))
            .unwrap_or_else(|e| panic!("{name}: no .out beside it ({e}); make it with python3"));
        let mut k = Command::new(env!("CARGO_BIN_EXE_kora"));
        k.args(["run", &name]);
        let kora = run(k, &dir);
        if kora.stdout != expected {
            failures.push(format!(
                "{name}: kora's output differs from {name}.out: {}\n{}",
                first_difference(&expected, &kora.stdout),
                kora.stderr
            ));
        }
        if let Some(py) = python {
            let mut c = Command::new(py);
            c.arg(&name);
            let cpython = run(c, &dir);
            if cpython.stdout != kora.stdout {
                failures.push(format!(
                    "{name}: kora and CPython print different text: {}",
                    first_difference(&cpython.stdout, &kora.stdout)
                ));
            }
            if cpython.status != kora.status {
                failures.push(format!(
                    "{name}: CPython ended with {:?}, kora with {:?}\n{}",
                    cpython.status, kora.status, kora.stderr
                ));
            }
        } else if kora.status != Some(0) {
            failures.push(format!(
                "{name}: kora ended with {:?}\n{}",
                kora.status, kora.stderr
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} programs differ{}:\n{}",
        failures.len(),
        programs.len(),
        if python.is_none() {
            " (python3 3.11+ not found: compared with .out only)"
        } else {
            ""
        },
        failures.join("\n")
    );
    println!(
        "fidelity: {} programs print what CPython prints{}",
        programs.len(),
        if python.is_none() {
            " (.out only: no python3)"
        } else {
            ""
        }
    );
}
