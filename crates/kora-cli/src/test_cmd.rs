//! `kora test [PATH...]`: finds the `test "name":` blocks of `.ko` files and runs each one.
//!
//! Each test runs in a fresh interpreter: its file's top level first (so the
//! test sees the file's functions, types and globals), then the test body,
//! with output captured and shown only when the test fails. Model calls
//! replay from the file's cassette unless `--live` records them; the closing
//! line is `N passed, N failed` (`, N skipped` when a filter left some out).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use kora_check::{check_program_with, hir};
use kora_runtime::agents::analyze::Models;
use kora_runtime::agents::cassette::{Cassette, Mode};
use kora_runtime::config::Config;
use kora_runtime::error::codes;
use kora_runtime::observe::trace::SpanKind;
use kora_runtime::value::{Function, Value};

use crate::observe::{Observe, Session};

pub struct TestOpts {
    pub paths: Vec<PathBuf>,
    pub live: bool,
    pub filter: Option<String>,
    /// `--exact`: the filter must equal a test's name, so one test runs (the editor's choice).
    pub exact: bool,
    /// `--format json`: one JSON object per line per test, file failure and summary.
    pub json: bool,
    pub observe: Observe,
    /// `--model NAME`: every test's run model, as `kora run --model` sets it.
    pub model: Option<String>,
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    skipped: usize,
    compile_errors: usize,
}

pub fn test(opts: TestOpts) -> u8 {
    crate::run::on_big_stack(move || run_tests(opts))
}

fn run_tests(opts: TestOpts) -> u8 {
    let paths = if opts.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        opts.paths.clone()
    };
    let mut files = Vec::new();
    for p in &paths {
        if p.is_dir() {
            collect(p, &mut files);
        } else if p.is_file() {
            files.push(p.clone());
        } else {
            eprintln!("error: no such file or folder: {}", p.display());
            return 2;
        }
    }
    let first_dir = dir_of(&paths[0]);
    let session_config = match Config::discover(&first_dir) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    if let Some(name) = &opts.model {
        if let Err(e) = session_config.resolve(Some(name)) {
            eprintln!("error: --model {name}: {e}");
            return 2;
        }
    }
    let mut session = Session::start(
        opts.observe.clone(),
        &session_config,
        &first_dir,
        "kora test",
    );
    let root = session
        .as_mut()
        .map(|s| s.open(SpanKind::Run, "kora test", None));
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut tally = Tally::default();
    for file in &files {
        run_file(file, &opts, &mut session, root, &mut tally, &mut out);
    }
    let total_run = tally.passed + tally.failed;
    if total_run == 0 && tally.compile_errors == 0 && !opts.json {
        let _ = writeln!(
            out,
            "{}",
            match (&opts.filter, tally.skipped) {
                (Some(f), n) if n > 0 => format!("no test matches --filter {f:?} ({n} skipped)"),
                _ => format!(
                    "no `test \"name\":` blocks found in {}",
                    paths
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        );
    }
    let mut summary = format!("{} passed, {} failed", tally.passed, tally.failed);
    if tally.skipped > 0 {
        summary.push_str(&format!(", {} skipped", tally.skipped));
    }
    if opts.json {
        let line = serde_json::json!({
            "event": "summary",
            "passed": tally.passed,
            "failed": tally.failed,
            "skipped": tally.skipped,
        });
        let _ = writeln!(out, "{line}");
    } else {
        let _ = writeln!(out, "\n{summary}");
    }
    let _ = out.flush();
    if let (Some(s), Some(r)) = (session.as_mut(), root) {
        s.close(r, (tally.failed > 0).then_some("tests failed"));
    }
    if let Some(s) = session {
        s.finish();
    }
    if tally.compile_errors > 0 {
        2
    } else if tally.failed > 0 || total_run == 0 {
        1
    } else {
        0
    }
}

fn run_file(
    file: &Path,
    opts: &TestOpts,
    session: &mut Option<Session>,
    root: Option<kora_runtime::observe::trace::SpanId>,
    tally: &mut Tally,
    out: &mut dyn Write,
) {
    let display = file.display().to_string();
    // Each file is loaded as a module, as `import` would: its `__name__` is its stem, so the
    // script part under `if __name__ == "__main__":` does not run, only the tests do.
    let options = kora_check::Options {
        entry_as_module: true,
        ..kora_check::Options::default()
    };
    let project = kora_pkg::Project::for_entry(file);
    let checked = match check_program_with(file, &project, options) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: cannot read `{}`: {}", e.path.display(), e.error);
            tally.compile_errors += 1;
            return;
        }
    };
    let errors = crate::diagnostics::print_all(&checked);
    let Some(program) = checked.program.filter(|_| errors == 0) else {
        let why = format!(
            "{errors} error{} found; its tests did not run",
            if errors == 1 { "" } else { "s" }
        );
        file_failed(out, opts, &display, &why);
        tally.compile_errors += 1;
        return;
    };
    let grants = project.grant_check(file);
    let tests = program.module(program.entry).tests.clone();
    let lines = kora_syntax::LineIndex::new(&program.module(program.entry).source);
    if tests.is_empty() {
        return;
    }
    let config = match Config::discover(&dir_of(file)) {
        Ok(c) => c,
        Err(e) => {
            file_failed(out, opts, &display, &e.to_string());
            tally.failed += tests.len();
            return;
        }
    };
    let externals = if program.externals.is_empty() {
        None
    } else {
        let reached = project.resolver.reached();
        let project = crate::durable_cmd::project_of(&dir_of(file));
        match crate::externals::registry(
            &config,
            &project,
            &dir_of(file),
            &program.externals,
            &reached,
        ) {
            Ok(r) => Some(r),
            Err(e) => {
                file_failed(out, opts, &display, &e.to_string());
                tally.failed += tests.len();
                return;
            }
        }
    };
    let mode = if opts.live {
        Mode::Record
    } else {
        Mode::Replay
    };
    if opts.live {
        if let Err(e) = crate::run::key_for_recording(&config, opts.model.as_deref()) {
            let _ = writeln!(
                out,
                "FAIL {display}: --live calls the model, but {e}; its tests did not run"
            );
            tally.failed += tests.len();
            return;
        }
    }
    for (name, body) in tests {
        if let Some(f) = &opts.filter {
            let chosen = if opts.exact {
                name == *f
            } else {
                name.contains(f.as_str()) || display.contains(f.as_str())
            };
            if !chosen {
                tally.skipped += 1;
                continue;
            }
        }
        let span = session
            .as_mut()
            .map(|s| s.open(SpanKind::Test, &format!("test {name:?}"), root));
        let run = TestRun {
            program: &program,
            file,
            config: &config,
            mode,
            model: opts.model.as_deref(),
            externals: externals.clone(),
            grants: grants.clone(),
        };
        let result = run_one(&run, &body, session, span);
        if let (Some(s), Some(id)) = (session.as_mut(), span) {
            s.close(id, result.as_ref().err().map(|_| "failed"));
        }
        if opts.json {
            let line = lines.line(body.span.start);
            let (outcome, details) = match &result {
                Ok(()) => ("passed", None),
                Err(d) => ("failed", Some(d.as_str())),
            };
            let record = serde_json::json!({
                "event": "test", "file": display, "name": name, "line": line,
                "outcome": outcome, "details": details,
            });
            let _ = writeln!(out, "{record}");
            match result {
                Ok(()) => tally.passed += 1,
                Err(_) => tally.failed += 1,
            }
            continue;
        }
        match result {
            Ok(()) => {
                tally.passed += 1;
                let _ = writeln!(out, "PASS {display}: {name}");
            }
            Err(details) => {
                tally.failed += 1;
                let _ = writeln!(out, "FAIL {display}: {name}");
                for line in details.lines() {
                    let _ = writeln!(out, "    {line}");
                }
            }
        }
    }
}

/// What every test of one file shares.
struct TestRun<'a> {
    program: &'a std::sync::Arc<hir::Program>,
    file: &'a Path,
    config: &'a Config,
    mode: Mode,
    model: Option<&'a str>,
    externals: Option<std::sync::Arc<kora_runtime::external::Registry>>,
    /// The packages the file reached, confined as `kora run` confines them.
    grants: Option<kora_runtime::grants::GrantCheck>,
}

/// Runs one test; `Err` holds what to show: the error with its trace, then the captured output.
fn run_one(
    run: &TestRun<'_>,
    body: &std::sync::Arc<hir::Function>,
    session: &mut Option<Session>,
    span: Option<kora_runtime::observe::trace::SpanId>,
) -> Result<(), String> {
    let TestRun {
        program,
        file,
        config,
        mode,
        model,
        ref externals,
        ref grants,
    } = *run;
    let cassette = Cassette::open(&Cassette::path_for(file))?;
    let mut captured: Vec<u8> = Vec::new();
    let mut interp = kora_runtime::Interp::new(program.clone(), &mut captured);
    interp.set_models(Models {
        config: config.clone(),
        cassette: Some(cassette),
        mode,
        main_model: model.map(str::to_string),
    });
    if let Some(r) = externals {
        interp.set_externals(r.clone());
    }
    if let Some(g) = grants {
        interp.set_run(kora_runtime::stdlib::RunSettings {
            observers: vec![Box::new(g.clone())],
            branches: vec![std::sync::Arc::new(g.clone())],
            ..kora_runtime::stdlib::RunSettings::default()
        });
    }
    if let Some(s) = session.as_mut() {
        interp.attach_tracer(Box::new(&mut s.rec), span);
    }
    let result = interp.run_main();
    let top_level_failed = result.is_err();
    let result = result.and_then(|()| {
        let f = Value::Func(Rc::new(Function {
            def: body.clone(),
            captures: Vec::new(),
            defaults: Vec::new(),
        }));
        interp.call_value_kw(&f, Vec::new(), Vec::new()).map(|_| ())
    });
    let saved = interp.finish();
    drop(interp);
    let mut details = String::new();
    if let Err(e) = &result {
        if top_level_failed {
            details.push_str("the file's top level failed before the test ran:\n");
        }
        if let Some(status) = e.exit_status {
            details.push_str(&format!(
                "`exit({status})` was called{}: a test cannot end the run\n",
                if e.message.is_empty() {
                    String::new()
                } else {
                    format!(" with {:?}", e.message)
                }
            ));
            if top_level_failed {
                details.push_str("help: put the script part of the file under `if __name__ == \"__main__\":`; `kora test` loads the file as a module, so that block does not run\n");
            }
        }
        let mut shown = (**e).clone();
        if e.code == codes::REPLAY_MISS {
            // `kora run --record` records the top level, not the tests: say what records these.
            shown.message = shown
                .message
                .replace("; record it with `kora run --record`", "");
        }
        if e.exit_status.is_none() {
            details.push_str(&kora_runtime::observe::report::render_error(
                program, &shown,
            ));
        }
        if e.code == codes::REPLAY_MISS && top_level_failed {
            details.push_str("help: the file's top level asked a model something its cassette has no answer for; put the script part under `if __name__ == \"__main__\":` (`kora test` loads each file as a module, so that block does not run), or mock the call\n");
        } else if e.code == codes::REPLAY_MISS {
            details.push_str(&format!(
                "help: answer it in the test with `with mock analyze -> Ok(...):`, or record a real answer (a paid call) with `kora test --live {}`\n",
                file.display()
            ));
        }
    }
    if let Err(e) = saved {
        details.push_str(&format!("error: {e}\n"));
    }
    if details.is_empty() {
        return Ok(());
    }
    if !captured.is_empty() {
        details.push_str("--- output ---\n");
        details.push_str(&String::from_utf8_lossy(&captured));
    }
    Err(details)
}

/// Every `.ko` file under `dir`, in path order; hidden folders and build output are skipped.
fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.is_dir() {
            // `vendor/` beside a kora.toml holds locked packages, not the project's programs.
            let vendored = name == "vendor" && dir.join("kora.toml").is_file();
            if !name.starts_with('.') && name != "target" && name != "node_modules" && !vendored {
                collect(&p, files);
            }
        } else if p.extension().is_some_and(|x| x == "ko") {
            files.push(p);
        }
    }
}

fn dir_of(p: &Path) -> PathBuf {
    if p.is_dir() {
        return p.to_path_buf();
    }
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A file whose tests could not run: a `FAIL` line, or a JSON record naming no test.
fn file_failed(out: &mut dyn Write, opts: &TestOpts, display: &str, why: &str) {
    if opts.json {
        let record = serde_json::json!({
            "event": "file", "file": display, "outcome": "failed", "details": why,
        });
        let _ = writeln!(out, "{record}");
    } else {
        let _ = writeln!(out, "FAIL {display}: {why}");
    }
}
