//! Shared by the end-to-end tests: a fresh temp folder, a `kora.toml` pointing at the fake, and running `kora`.

#![allow(dead_code)]

pub mod packages;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// An empty folder under the temp dir, unique to this test process.
pub fn temp_dir(prefix: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// A `kora.toml` whose default model is the loopback fake at `endpoint`, without retries.
pub fn write_fake_config(d: &Path, endpoint: &str) {
    write_config(d, endpoint, Some("openai"), "max_retries = 0\n");
}

/// A `kora.toml` whose default model (`fake-model`) is at `endpoint`, speaking `api` (the
/// default wire format when `None`), followed by more `[models]` lines (`settings`).
pub fn write_config(d: &Path, endpoint: &str, api: Option<&str>, settings: &str) {
    let api = api.map(|a| format!(", api = \"{a}\"")).unwrap_or_default();
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[models]\ndefault = {{ name = \"fake-model\", endpoint = \"{endpoint}\"{api} }}\n{settings}"
        ),
    )
    .expect("kora.toml");
}

/// What one `kora` process left: its exit code (-1 when a signal ended it) and its output as text.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: text(&out.stdout),
            stderr: text(&out.stderr),
        }
    }
}

/// The `kora` binary under test, with colour off; add arguments and a folder, then `collect`.
pub fn kora_cmd() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kora"));
    c.env("NO_COLOR", "1");
    c
}

/// Runs a `kora_cmd` to its end: standard input is `input` (closed when `None`), output is captured.
pub fn collect(c: &mut Command, input: Option<&str>) -> Run {
    let mut child = c
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kora starts");
    if let (Some(text), Some(mut pipe)) = (input, child.stdin.take()) {
        pipe.write_all(text.as_bytes()).expect("stdin written");
    }
    child.wait_with_output().expect("kora runs").into()
}

/// Runs `kora ARGS` in `cwd`, with standard input closed.
pub fn run_in(cwd: &Path, args: &[&str]) -> Run {
    collect(kora_cmd().args(args).current_dir(cwd), None)
}

/// Runs `kora ARGS` in `cwd`; `crash` sets KORA_JOURNAL_CRASH (abort at that journal append).
pub fn kora(cwd: &Path, args: &[&str], crash: Option<&str>) -> Output {
    kora_env(cwd, args, crash, &[])
}

/// As `kora`, with extra environment variables (`KORA_PARALLEL_WIDTH` sizes the branch pool).
pub fn kora_env(cwd: &Path, args: &[&str], crash: Option<&str>, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kora"));
    c.args(args).current_dir(cwd).env("NO_COLOR", "1");
    if let Some(at) = crash {
        c.env("KORA_JOURNAL_CRASH", at);
    }
    c.envs(env.iter().copied());
    c.output().expect("kora runs")
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// As `kora`, with `input` as its standard input (the answers to `ask_human`).
pub fn kora_input(cwd: &Path, args: &[&str], crash: Option<&str>, input: &str) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kora"));
    c.args(args).current_dir(cwd).env("NO_COLOR", "1");
    if let Some(at) = crash {
        c.env("KORA_JOURNAL_CRASH", at);
    }
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kora starts");
    if let Some(mut stdin) = child.stdin.take() {
        // A run killed before it reads its input closes the pipe: that is not the test's failure.
        let _ = stdin.write_all(input.as_bytes());
    }
    child.wait_with_output().expect("kora ends")
}

/// Runs `kora ARGS DIR/main.ko` from the test's own working directory.
pub fn kora_main(d: &Path, args: &[&str]) -> Run {
    collect(kora_cmd().args(args).arg(d.join("main.ko")), None)
}

/// The crash points of a run that makes `appends` journal appends, for `KORA_JOURNAL_CRASH`:
/// before each append (`"3"`), then halfway through writing it, leaving a torn tail (`"3.half"`).
pub fn kill_points(appends: usize) -> impl Iterator<Item = String> {
    (1..=appends).flat_map(|at| [at.to_string(), format!("{at}.half")])
}

/// How many attempts a kill left without an outcome the resumes of run `id` settled by
/// looking at the world (journal lines `"t":"resolved"` with `"by":"check"`): each is a kill
/// that landed between a write's attempt and its outcome and did not stop the resume.
pub fn settled_by_check(d: &Path, id: &str) -> usize {
    std::fs::read_to_string(d.join(format!(".kora/runs/{id}/journal.jsonl")))
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("\"t\":\"resolved\"") && l.contains("\"by\":\"check\""))
        .count()
}
