//! Conformance suite: runs every program in `tests/conformance/{shared,kora,errors}` through `kora run` and compares what it prints with the expected files beside it.
//!
//! - `shared/NAME.ko`: valid Python 3.11 and valid Kora. `kora run` must exit 0 and print
//!   exactly `NAME.out`; when a `python3` (3.10 or later) is on `PATH`, `python3` must print
//!   exactly `NAME.out` too, so the expectation itself stays honest.
//! - `kora/NAME.ko`: Kora-only programs; exit 0 and stdout equal to `NAME.out`.
//! - `errors/NAME.ko`: programs that must be rejected or must fail. The first line is
//!   `# expect: E#### what` or `# expect: runtime what`, the second `# exit: N`. `NAME.err`
//!   holds `exit: N` on its first line and then the exact stderr.
//!
//! Programs run with the conformance directory as the working directory and a relative path
//! (`kora run errors/NAME.ko`), with `NO_COLOR=1`, so diagnostics are stable across machines;
//! any absolute path of the conformance directory left in the output is stripped anyway.
//!
//! `KORA_BLESS=1` writes `errors/*.err` and `kora/*.out` from the actual run instead of
//! comparing them (`shared/*.out` come from `python3` and are never blessed). Every failure is
//! collected and reported together, with the first differing line of each.

use std::fmt::Write as _;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

/// A program that runs longer than this is killed and reported as a failure.
const TIMEOUT: Duration = Duration::from_secs(60);

/// How many lines of stderr a failure report shows.
const SHOWN_LINES: usize = 25;

/// Lines of actual output shown on each side of the first difference.
const CONTEXT_LINES: usize = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Suite {
    Shared,
    Kora,
    Errors,
}

impl Suite {
    const ALL: [Suite; 3] = [Suite::Shared, Suite::Kora, Suite::Errors];

    fn dir(self) -> &'static str {
        match self {
            Suite::Shared => "shared",
            Suite::Kora => "kora",
            Suite::Errors => "errors",
        }
    }

    /// The extension of the expected-output file of this suite.
    fn expected_ext(self) -> &'static str {
        match self {
            Suite::Shared | Suite::Kora => "out",
            Suite::Errors => "err",
        }
    }
}

struct Case {
    suite: Suite,
    /// Path relative to the conformance root, with `/` separators: `shared/NAME.ko`.
    rel: String,
}

impl Case {
    fn expected_path(&self, root: &Path) -> PathBuf {
        root.join(&self.rel)
            .with_extension(self.suite.expected_ext())
    }
}

/// What one process did.
struct Run {
    /// `None` when the process was killed by a signal or by the timeout.
    code: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
}

impl Run {
    fn describe_exit(&self) -> String {
        match (self.timed_out, self.code) {
            (true, _) => format!("timed out after {}s", TIMEOUT.as_secs()),
            (false, Some(c)) => format!("exit code {c}"),
            (false, None) => "killed by a signal".to_string(),
        }
    }
}

struct Config {
    root: PathBuf,
    kora: PathBuf,
    bless: bool,
    /// `Some(program)` when a usable `python3` was found.
    python: Option<String>,
}

#[test]
fn conformance() {
    let root = conformance_root();
    let config = Config {
        kora: PathBuf::from(env!("CARGO_BIN_EXE_kora")),
        bless: std::env::var("KORA_BLESS").is_ok_and(|v| v == "1"),
        python: find_python(),
        root,
    };

    // `KORA_CONFORMANCE=repr_` runs only the programs whose path contains `repr_`.
    let filter = std::env::var("KORA_CONFORMANCE")
        .ok()
        .filter(|f| !f.is_empty());
    let mut failures: Vec<(String, Vec<String>)> = Vec::new();
    let mut cases = Vec::new();
    for suite in Suite::ALL {
        match collect_cases(&config.root, suite) {
            Ok(found) if found.is_empty() => failures.push((
                suite.dir().to_string(),
                vec![format!(
                    "no .ko programs found in {}",
                    config.root.join(suite.dir()).display()
                )],
            )),
            Ok(found) => cases.extend(
                found
                    .into_iter()
                    .filter(|c| filter.as_deref().is_none_or(|f| c.rel.contains(f))),
            ),
            Err(e) => failures.push((suite.dir().to_string(), vec![e])),
        }
        failures.extend(stale_expectations(&config.root, suite));
    }

    let results = run_all(&config, &cases);
    for (case, problems) in cases.iter().zip(results) {
        if !problems.is_empty() {
            failures.push((case.rel.clone(), problems));
        }
    }

    let count = |s: Suite| cases.iter().filter(|c| c.suite == s).count();
    let summary = format!(
        "{} programs (shared {}, kora {}, errors {}){}{}",
        cases.len(),
        count(Suite::Shared),
        count(Suite::Kora),
        count(Suite::Errors),
        if config.python.is_some() {
            ""
        } else {
            "; python3 not found, CPython cross-check skipped"
        },
        if config.bless { "; blessed" } else { "" },
    );
    let summary = format!(
        "{summary}{}",
        filter
            .as_deref()
            .map_or_else(String::new, |f| format!("; filtered by {f:?}")),
    );
    if failures.is_empty() {
        println!("conformance: all {summary} passed");
        return;
    }
    let mut report = String::new();
    for (name, problems) in &failures {
        let _ = writeln!(report, "\n=== {name}");
        for p in problems {
            let _ = writeln!(report, "{}", p.trim_end());
        }
    }
    let _ = writeln!(
        report,
        "\n{} of {summary} failed. If a new output is right, `KORA_BLESS=1 cargo test -p kora-cli --test conformance` rewrites errors/*.err and kora/*.out: review the diff before committing it.",
        failures.len()
    );
    panic!("{report}");
}

/// `tests/conformance` at the workspace root.
fn conformance_root() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance");
    root.canonicalize()
        .unwrap_or_else(|e| panic!("cannot find {}: {e}", root.display()))
}

/// The `.ko` files directly in one suite's folder (not in `lib/`), sorted by name.
fn collect_cases(root: &Path, suite: Suite) -> Result<Vec<Case>, String> {
    let dir = root.join(suite.dir());
    let entries = fs::read_dir(&dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let path = entry.path();
        if path.is_file() && path.extension().is_some_and(|x| x == "ko") {
            if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                names.push(name.to_string());
            }
        }
    }
    names.sort();
    Ok(names
        .into_iter()
        .map(|name| Case {
            suite,
            rel: format!("{}/{name}", suite.dir()),
        })
        .collect())
}

/// Expected-output files whose program is gone.
fn stale_expectations(root: &Path, suite: Suite) -> Vec<(String, Vec<String>)> {
    let dir = root.join(suite.dir());
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut stale = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|x| x == suite.expected_ext())
            && !path.with_extension("ko").exists()
        {
            let name = path.file_name().map_or_else(String::new, |n| {
                format!("{}/{}", suite.dir(), n.to_string_lossy())
            });
            stale.push((
                name,
                vec!["expected-output file without a matching .ko program".to_string()],
            ));
        }
    }
    stale.sort_by(|a, b| a.0.cmp(&b.0));
    stale
}

/// Checks every case on a small pool of threads; the result for case `i` is at index `i`.
fn run_all(config: &Config, cases: &[Case]) -> Vec<Vec<String>> {
    let workers = thread::available_parallelism()
        .map_or(2, std::num::NonZero::get)
        .clamp(2, 8)
        .min(cases.len().max(1));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Vec<String>>>> =
        Mutex::new((0..cases.len()).map(|_| None).collect());
    thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = cases.get(i) else {
                    break;
                };
                let problems = check_case(config, case);
                results
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)[i] = Some(problems);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .into_iter()
        .map(|r| r.unwrap_or_else(|| vec!["was never run".to_string()]))
        .collect()
}

fn check_case(config: &Config, case: &Case) -> Vec<String> {
    match case.suite {
        Suite::Shared => check_shared(config, case),
        Suite::Kora => check_kora(config, case),
        Suite::Errors => check_errors(config, case),
    }
}

fn run_kora(config: &Config, case: &Case) -> Result<Run, String> {
    let mut cmd = Command::new(&config.kora);
    cmd.arg("run").arg(&case.rel);
    for (k, v) in env_lines(&config.root.join(&case.rel)) {
        cmd.env(k, v);
    }
    run_process(cmd, &config.root)
        .map(|r| normalize_run(r, &config.root))
        .map_err(|e| format!("cannot start {}: {e}", config.kora.display()))
}

fn check_shared(config: &Config, case: &Case) -> Vec<String> {
    let mut problems = Vec::new();
    let expected_path = case.expected_path(&config.root);
    let expected = match read_expected(&expected_path) {
        Ok(text) => text,
        Err(e) => return vec![e],
    };
    match run_kora(config, case) {
        Ok(run) => check_success("kora run", &run, &expected, &mut problems),
        Err(e) => problems.push(e),
    }
    if let Some(python) = &config.python {
        let mut cmd = Command::new(python);
        // -S skips site-packages: the programs import nothing, and startup halves.
        cmd.args(["-S", "-X", "utf8"])
            .arg(&case.rel)
            .env("PYTHONIOENCODING", "utf-8")
            .env("PYTHONUTF8", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1");
        match run_process(cmd, &config.root) {
            Ok(run) => check_success("python3", &run, &expected, &mut problems),
            Err(e) => problems.push(format!("cannot start {python}: {e}")),
        }
    }
    problems
}

fn check_kora(config: &Config, case: &Case) -> Vec<String> {
    let expected_path = case.expected_path(&config.root);
    let run = match run_kora(config, case) {
        Ok(run) => run,
        Err(e) => return vec![e],
    };
    let mut problems = Vec::new();
    if config.bless {
        if run.code == Some(0) {
            if let Err(e) = fs::write(&expected_path, &run.stdout) {
                problems.push(format!("cannot write {}: {e}", expected_path.display()));
            }
        } else {
            problems.push(format!(
                "not blessed: kora run ended with {}, expected exit code 0\n{}",
                run.describe_exit(),
                excerpt("stderr", &run.stderr)
            ));
        }
        return problems;
    }
    match read_expected(&expected_path) {
        Ok(expected) => check_success("kora run", &run, &expected, &mut problems),
        Err(e) => problems.push(e),
    }
    problems
}

fn check_errors(config: &Config, case: &Case) -> Vec<String> {
    let mut problems = Vec::new();
    let source_path = config.root.join(&case.rel);
    let header = match fs::read_to_string(&source_path) {
        Ok(src) => parse_header(&src),
        Err(e) => return vec![format!("cannot read {}: {e}", source_path.display())],
    };
    let header = match header {
        Ok(h) => h,
        Err(e) => {
            problems.push(e);
            ErrorHeader::default()
        }
    };
    let run = match run_kora(config, case) {
        Ok(run) => run,
        Err(e) => {
            problems.push(e);
            return problems;
        }
    };
    if let Some(want) = header.exit {
        if run.code != Some(want) || run.timed_out {
            problems.push(format!(
                "kora run ended with {}, but the `# exit:` line says {want}\n{}",
                run.describe_exit(),
                excerpt("stderr", &run.stderr)
            ));
        }
    }
    if let Some(code) = &header.code {
        if !run.stderr.contains(code.as_str()) {
            problems.push(format!(
                "stderr does not mention {code}, named by the `# expect:` line\n{}",
                excerpt("stderr", &run.stderr)
            ));
        }
    }
    let code_text = run
        .code
        .map_or_else(|| "signal".to_string(), |c| c.to_string());
    let actual = format!("exit: {code_text}\n{}", run.stderr);
    let expected_path = case.expected_path(&config.root);
    if config.bless {
        if let Err(e) = fs::write(&expected_path, &actual) {
            problems.push(format!("cannot write {}: {e}", expected_path.display()));
        }
        return problems;
    }
    match read_expected(&expected_path) {
        Ok(expected) => {
            if let Some(diff) = first_difference(&expected, &actual) {
                problems.push(format!(
                    "stderr (with its exit line) differs from {}\n{diff}",
                    rel_name(&expected_path)
                ));
            }
        }
        Err(e) => problems.push(e),
    }
    problems
}

/// `# env: NAME=VALUE` lines among a program's leading comments: its environment (the
/// memory-limit programs shrink `KORA_MAX_VALUE_BYTES` so they fail without using gigabytes).
fn env_lines(path: &Path) -> Vec<(String, String)> {
    let Ok(src) = fs::read_to_string(path) else {
        return Vec::new();
    };
    src.lines()
        .take_while(|l| l.starts_with('#'))
        .filter_map(|l| l.strip_prefix("# env:"))
        .filter_map(|kv| kv.trim().split_once('='))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// The first two lines of an `errors/` program.
#[derive(Default)]
struct ErrorHeader {
    /// `E0123` when the `# expect:` line names a concrete code (not the `E####` placeholder),
    /// either first or right after `runtime`.
    code: Option<String>,
    exit: Option<i32>,
}

fn parse_header(src: &str) -> Result<ErrorHeader, String> {
    let mut lines = src.lines();
    let expect = lines
        .next()
        .and_then(|l| l.strip_prefix("# expect:"))
        .map(str::trim)
        .ok_or("first line must be `# expect: E0123 what`, `# expect: runtime [E1234] what` or `# expect: E#### what`")?;
    let exit = lines
        .next()
        .and_then(|l| l.strip_prefix("# exit:"))
        .and_then(|l| l.trim().parse::<i32>().ok())
        .ok_or("second line must be `# exit: N`")?;
    let mut words = expect.split_whitespace();
    let first = words.next().unwrap_or("");
    let runtime = first == "runtime";
    // `runtime` may be followed by the run-time error's code.
    let code_word = if runtime {
        words.next().unwrap_or("")
    } else {
        first
    };
    let code = is_error_code(code_word).then(|| code_word.to_string());
    if !runtime && first != "E####" && code.is_none() {
        return Err(format!(
            "`# expect:` must start with an error code (E0123, or the E#### placeholder) or `runtime`, not {first:?}"
        ));
    }
    let expected_exit = if runtime { 1 } else { 2 };
    if exit != expected_exit {
        return Err(format!(
            "`# exit: {exit}` disagrees with `# expect: {first}`, which implies exit {expected_exit}"
        ));
    }
    Ok(ErrorHeader {
        code,
        exit: Some(exit),
    })
}

/// `E` and four digits.
fn is_error_code(word: &str) -> bool {
    word.len() == 5 && word.starts_with('E') && word[1..].bytes().all(|b| b.is_ascii_digit())
}

/// Exit 0 and stdout exactly `expected`.
fn check_success(who: &str, run: &Run, expected: &str, problems: &mut Vec<String>) {
    if run.code != Some(0) || run.timed_out {
        problems.push(format!(
            "{who} ended with {}, expected exit code 0\n{}",
            run.describe_exit(),
            excerpt("stderr", &run.stderr)
        ));
    }
    if let Some(diff) = first_difference(expected, &run.stdout) {
        problems.push(format!(
            "{who}: stdout differs from the expected output\n{diff}"
        ));
    }
}

fn read_expected(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read {}: {e} (run with KORA_BLESS=1 to create errors/*.err and kora/*.out)",
            rel_name(path)
        )
    })
}

/// `kora/NAME.out` from a full path, for messages.
fn rel_name(path: &Path) -> String {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    match path
        .parent()
        .and_then(|p| p.file_name())
        .map(|d| d.to_string_lossy().into_owned())
    {
        Some(dir) => format!("{dir}/{name}"),
        None => name,
    }
}

/// `None` when equal; otherwise where the texts first part, quoted so whitespace shows,
/// followed by the actual lines around that point.
fn first_difference(expected: &str, actual: &str) -> Option<String> {
    if expected == actual {
        return None;
    }
    let exp: Vec<&str> = expected.split('\n').collect();
    let act: Vec<&str> = actual.split('\n').collect();
    let show = |line: Option<&&str>| match line {
        Some(l) => format!("{l:?}"),
        None => "<end of output>".to_string(),
    };
    let at = (0..exp.len().max(act.len()))
        .find(|&i| exp.get(i) != act.get(i))
        .unwrap_or(0);
    let mut out = format!("first difference at line {}:\n", at + 1);
    let _ = writeln!(out, "  expected: {}", show(exp.get(at)));
    let _ = writeln!(out, "  actual:   {}", show(act.get(at)));
    let from = at.saturating_sub(CONTEXT_LINES);
    let to = (at + CONTEXT_LINES + 1).min(act.len());
    if from < to {
        let _ = writeln!(out, "  actual output around it:");
        for (i, line) in act.iter().enumerate().take(to).skip(from) {
            let mark = if i == at { '>' } else { ' ' };
            let _ = writeln!(out, "  {mark}{:4} | {line}", i + 1);
        }
    }
    Some(out)
}

/// The first lines of some output, indented, for a failure report.
fn excerpt(label: &str, text: &str) -> String {
    if text.is_empty() {
        return format!("  ({label} is empty)");
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut out = format!("  --- {label}:\n");
    for line in lines.iter().take(SHOWN_LINES) {
        let _ = writeln!(out, "  | {line}");
    }
    if lines.len() > SHOWN_LINES {
        let _ = writeln!(out, "  | ... ({} more lines)", lines.len() - SHOWN_LINES);
    }
    out
}

/// Runs a command in `cwd` with colour off and no stdin, killing it after `TIMEOUT`.
fn run_process(mut cmd: Command, cwd: &Path) -> std::io::Result<Run> {
    cmd.current_dir(cwd)
        .env("NO_COLOR", "1")
        .env("RUST_BACKTRACE", "0")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("FORCE_COLOR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let stdout = child.stdout.take().map(read_in_background);
    let stderr = child.stderr.take().map(read_in_background);
    let start = Instant::now();
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            timed_out = true;
            let _ = child.kill();
            break child.wait()?;
        }
        thread::sleep(Duration::from_millis(5));
    };
    let collect = |h: Option<thread::JoinHandle<Vec<u8>>>| {
        h.and_then(|h| h.join().ok())
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .unwrap_or_default()
    };
    Ok(Run {
        code: status.code(),
        stdout: collect(stdout),
        stderr: collect(stderr),
        timed_out,
    })
}

fn read_in_background<R: Read + Send + 'static>(mut pipe: R) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = pipe.read_to_end(&mut buf);
        buf
    })
}

/// Strips the machine-specific conformance root from output and unifies line endings.
fn normalize_run(mut run: Run, root: &Path) -> Run {
    let prefixes = root_prefixes(root);
    let clean = |text: &str| -> String {
        let mut text = text.replace("\r\n", "\n");
        for prefix in &prefixes {
            text = text.replace(prefix.as_str(), "");
        }
        text
    };
    run.stdout = clean(&run.stdout);
    run.stderr = clean(&run.stderr);
    run
}

/// `/abs/tests/conformance/` as canonical and as spelled via the manifest dir, longest first.
fn root_prefixes(root: &Path) -> Vec<String> {
    let manifest_spelling = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance");
    let mut prefixes: Vec<String> = [root.to_path_buf(), manifest_spelling]
        .iter()
        .map(|p| format!("{}{}", p.display(), std::path::MAIN_SEPARATOR))
        .collect();
    prefixes.sort_by_key(|p| std::cmp::Reverse(p.len()));
    prefixes.dedup();
    prefixes
}

/// `python3` when it is on `PATH` and is 3.10 or later (the shared programs use `match`).
fn find_python() -> Option<String> {
    let output = Command::new("python3")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    let version = text.split_whitespace().nth(1)?;
    let mut parts = version.split('.');
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    (major == 3 && minor >= 10).then(|| "python3".to_string())
}
