//! The live check: the example programs that call a model, run against a real server named by `KORA_LIVE_ENDPOINT`.
//!
//! Skipped unless `KORA_LIVE_ENDPOINT` is set, so CI (which has no model server and no
//! network) never reaches it. docs/models.md ("A live check") says how to start a local
//! llama.cpp server and run this against it. Settings, all optional but the first:
//!
//! - `KORA_LIVE_ENDPOINT`: the server's base URL, e.g. `http://127.0.0.1:8000/v1`;
//! - `KORA_LIVE_MODEL`: the model name sent in each request (default `local`);
//! - `KORA_LIVE_API`: `openai` (default) or `ollama`;
//! - `KORA_LIVE_STRUCTURED`: the entry's `structured` mode (default `json_object`, which
//!   llama.cpp's Python server takes; it answers HTTP 500 to `json_schema`);
//! - `KORA_LIVE_MAX_TOKENS`: the entry's `max_output_tokens` (default 256, so a small model
//!   that rambles inside a JSON grammar stops instead of running into the timeout).
//!
//! A small local model answers badly, so the examples' `.out` files are not the bar here.
//! What is: every program ends with exit 0 (each handles `Uncertain` and `Failed`), nothing
//! panics, no answer comes from a cassette, and the server really answered: the cost report
//! shows input tokens spent on the live model for every example that sends no image (a
//! text-only model may refuse an image; that call is `Failed`, which the program prints).

mod support;

use std::path::{Path, PathBuf};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

/// A copy of the examples' folder layout (`data/`, `lib/`) with `kora.toml` pointing at the live server.
fn live_folder(endpoint: &str, model: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kora-live-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    for sub in ["data", "lib"] {
        let from = examples().join(sub);
        let to = d.join(sub);
        std::fs::create_dir_all(&to).expect("temp folder");
        for e in std::fs::read_dir(&from)
            .expect("examples sub-folder")
            .flatten()
        {
            std::fs::copy(e.path(), to.join(e.file_name())).expect("copy example data");
        }
    }
    let api = std::env::var("KORA_LIVE_API").unwrap_or_else(|_| "openai".into());
    let structured = std::env::var("KORA_LIVE_STRUCTURED").unwrap_or_else(|_| "json_object".into());
    let cap = std::env::var("KORA_LIVE_MAX_TOKENS").unwrap_or_else(|_| "256".into());
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[models]\ndefault = {{ name = \"{model}\", endpoint = \"{endpoint}\", api = \"{api}\", structured = \"{structured}\", max_output_tokens = {cap} }}\ntimeout_secs = 300\nmax_retries = 1\n"
        ),
    )
    .expect("kora.toml");
    d
}

/// The examples that call a model: those with a committed cassette.
fn model_examples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(examples())
        .expect("examples folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ko"))
        .filter(|p| p.with_extension("cassette.json").exists())
        .collect();
    v.sort();
    v
}

/// The input tokens the cost report attributes to `model`, if it has a line for it.
fn input_tokens(report: &str, model: &str) -> Option<u64> {
    report.lines().find_map(|l| {
        let cols: Vec<&str> = l.split_whitespace().collect();
        match cols.as_slice() {
            [name, _calls, input, _output] if *name == model => input.parse().ok(),
            _ => None,
        }
    })
}

#[test]
fn the_model_examples_run_against_a_live_server() {
    let Ok(endpoint) = std::env::var("KORA_LIVE_ENDPOINT") else {
        eprintln!("skipped: set KORA_LIVE_ENDPOINT (see docs/models.md, \"A live check\")");
        return;
    };
    let model = std::env::var("KORA_LIVE_MODEL").unwrap_or_else(|_| "local".into());
    let d = live_folder(&endpoint, &model);
    let programs = model_examples();
    assert!(
        programs.len() >= 5,
        "expected the examples that call a model"
    );
    let mut failures = Vec::new();
    for ko in programs {
        let name = ko.file_name().expect("file name").to_owned();
        let src = std::fs::read_to_string(&ko).expect("example");
        std::fs::write(d.join(&name), &src).expect("copy example");
        let args = std::fs::read_to_string(ko.with_extension("args")).unwrap_or_default();
        let input = std::fs::read_to_string(ko.with_extension("in")).unwrap_or_default();
        let program = name.to_string_lossy();
        let mut argv = vec!["run", "--no-trace", "--report", "cost", program.as_ref()];
        argv.extend(args.split_whitespace());
        let out = support::kora_input(&d, &argv, None, &input);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        eprintln!("=== {}\n{stdout}{stderr}", Path::new(&name).display());
        let sends_images = src.contains("fs.image");
        let tokens = input_tokens(&stderr, &model).unwrap_or(0);
        let problem = if out.status.code() != Some(0) {
            Some(format!("exit {:?}", out.status.code()))
        } else if stderr.contains("panicked") {
            Some("a panic".to_string())
        } else if stderr.contains("answered from the cassette") {
            Some("answers came from a cassette, not the server".to_string())
        } else if !sends_images && tokens == 0 {
            Some(format!("no input tokens were spent on `{model}`"))
        } else {
            None
        };
        if let Some(p) = problem {
            failures.push(format!("{}: {p}", Path::new(&name).display()));
        }
    }
    let _ = std::fs::remove_dir_all(&d);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_cost_report_parser_reads_a_models_input_tokens() {
    let report = "cost report\n  model        calls  input tokens  output tokens\n  local            3           540            120\n";
    assert_eq!(input_tokens(report, "local"), Some(540));
    assert_eq!(input_tokens(report, "other"), None);
}
