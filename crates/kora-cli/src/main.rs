//! The `kora` binary: parses the command line and hands each command to its module; exit codes live here.
//!
//! Exit codes: 0 success, 1 the program (or a test) failed at run time (for `kora audit`: a
//! file could not be read or parsed; for `kora fmt --check`: a file would change),
//! 2 usage or compile error, 3 a durable run suspended on `ask_human`.

mod allocator;
mod audit_cmd;
mod check;
mod diagnostics;
mod durable_cmd;
mod externals;
mod fmt_cmd;
mod mcp_cmd;
mod notes;
mod observe;
mod repl;
mod run;
mod test_cmd;
mod trace_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

// An interpreter allocates a string, list or tuple for nearly every operation; mimalloc
// serves those from thread-local free lists. Its arena reserve is cut to 64 MiB in
// `.cargo/config.toml` so runs under an address-space limit still fit (DECISIONS.md).
#[global_allocator]
static ALLOC: allocator::Mimalloc = allocator::Mimalloc;

#[derive(Parser)]
#[command(
    name = "kora",
    version,
    about = "Kora: a language for agent programs",
    long_about = "Kora reads like Python and makes model calls, budgets, parallelism and durability part of the language."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a program and run it
    #[command(
        override_usage = "kora run [OPTIONS] <FILE> [ARGS]...\n       kora run --resume <RUN_ID> [OPTIONS]"
    )]
    Run {
        /// Call the model for every `analyze` and write the answers to the program's cassette
        #[arg(long, conflicts_with = "replay")]
        record: bool,
        /// Answer every `analyze` from the cassette; a call it lacks is an error (no network)
        #[arg(long)]
        replay: bool,
        /// Use this run id (for `notes` and `kora notes`) instead of a fresh one
        #[arg(long, value_name = "ID")]
        run_id: Option<String>,
        /// Journal every effect under .kora/runs/ so a killed run can be resumed
        #[arg(long, conflicts_with = "resume")]
        durable: bool,
        /// Continue a durable run from its journal: finished effects are not performed again
        #[arg(long, value_name = "RUN_ID", conflicts_with_all = ["file", "run_id"])]
        resume: Option<String>,
        /// With --resume: continue even though kora.toml changed since the run started
        #[arg(long, requires = "resume")]
        accept_config: bool,
        /// With --resume: an effect the resume stopped on happened (checked by hand); the run
        /// goes on as if it had succeeded. EFFECT is its slot, as the stop message names it
        #[arg(long, value_name = "EFFECT", requires = "resume")]
        mark_done: Vec<String>,
        /// With --resume: an effect the resume stopped on did not happen; it is performed again
        #[arg(long, value_name = "EFFECT", requires = "resume")]
        retry: Vec<String>,
        /// After the run, print a report on stderr: `cost` is tokens (and money) per model and agent
        #[arg(long, value_enum)]
        report: Option<Report>,
        /// Do not write the run's trace to .kora/traces/
        #[arg(long)]
        no_trace: bool,
        /// Also send the run's spans to this OpenTelemetry collector over OTLP/HTTP (e.g. http://localhost:4318)
        #[arg(long, value_name = "URL", value_parser = otlp_url)]
        otlp: Option<String>,
        /// Model calls use this `[models]` entry unless a call, block or agent names another
        #[arg(long, value_name = "NAME")]
        model: Option<String>,
        /// The `.ko` file to run: required, except with `--resume` (which runs the run's own file)
        #[arg(required_unless_present = "resume", value_name = "FILE")]
        file: Option<PathBuf>,
        /// Arguments passed to the program
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Run the `test "name":` blocks of .ko files (model calls replay from cassettes)
    Test {
        /// Files or folders to search for tests (default: the current folder)
        paths: Vec<PathBuf>,
        /// Call the model for every `analyze` and record the answers in each file's cassette
        #[arg(long)]
        live: bool,
        /// Run only tests whose name (or file path) contains this text
        #[arg(long)]
        filter: Option<String>,
        /// With --filter: run only the test whose name is exactly that text
        #[arg(long, requires = "filter")]
        exact: bool,
        /// `json`: one JSON object per line for each test (file, name, line, outcome, details), then a summary
        #[arg(long, value_enum, default_value = "text")]
        format: TestFormat,
        /// After the tests, print a report on stderr: `cost` is tokens (and money) per model and agent
        #[arg(long, value_enum)]
        report: Option<Report>,
        /// Do not write the trace to .kora/traces/
        #[arg(long)]
        no_trace: bool,
        /// Also send the spans to this OpenTelemetry collector over OTLP/HTTP (e.g. http://localhost:4318)
        #[arg(long, value_name = "URL", value_parser = otlp_url)]
        otlp: Option<String>,
        /// Model calls use this `[models]` entry unless a call, block or agent names another
        #[arg(long, value_name = "NAME")]
        model: Option<String>,
    },
    /// Print a recorded run's spans as a tree, with durations and tokens (default: the newest)
    Trace {
        /// A run id (or its start) from .kora/traces/, or a trace file's path
        run: Option<String>,
    },
    /// Format .ko files in place, in one canonical layout (`kora.toml [fmt]` sets it)
    Fmt {
        /// Files or folders to format (default: the current folder); `-` reads stdin and writes stdout
        paths: Vec<PathBuf>,
        /// Change nothing; list the files that would change and exit 1 if there are any
        #[arg(long)]
        check: bool,
        /// Change nothing; print a unified diff of what would change and exit 1 if anything would
        #[arg(long)]
        diff: bool,
    },
    /// Read, check and run Kora entries one at a time; what each defines stays for the next
    Repl {
        /// Answer every model call from this cassette; a call it lacks is an error (no network)
        #[arg(long, value_name = "FILE", conflicts_with = "record")]
        replay: Option<PathBuf>,
        /// Call the model for every model call and write the answers to this cassette at the end
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
        /// Model calls use this `[models]` entry unless a call, block or agent names another
        #[arg(long, value_name = "NAME")]
        model: Option<String>,
    },
    /// Report every syntax and type error without running anything
    Check {
        /// The `.ko` files to check
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Start each MCP server the program uses, list its tools into `.kora/mcp/NAME.json`,
        /// then check its calls against them
        #[arg(long)]
        mcp: bool,
    },
    /// MCP servers of this project (`[mcp.NAME]` in kora.toml)
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// List every `declassify ... for SINK:` site of a program and the files it uses
    Audit {
        /// A `.ko` file or a folder of them (default: the current folder)
        path: Option<PathBuf>,
        /// Print a JSON array of {file, line, col, sink, expr} instead of lines
        #[arg(long)]
        json: bool,
    },
    /// Show a run's notes (`notes.write`); with no run id, list the runs that have notes
    Notes {
        /// The run whose notes to show
        run_id: Option<String>,
        /// Show only this key's value (as JSON)
        key: Option<String>,
        /// The project folder (the one holding `kora.toml`); found from the current folder by default
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Answer the question a suspended durable run is waiting on (then `kora run --resume`)
    Answer {
        /// The suspended run
        run_id: String,
        /// The answer, as the person would have typed it
        text: String,
        /// The project folder (the one holding `kora.toml`); found from the current folder by default
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// List the durable runs of this project and their state
    Runs {
        /// The project folder (the one holding `kora.toml`); found from the current folder by default
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Serve the language server protocol on stdin/stdout (for editors)
    Lsp,
    /// Serve the debug adapter protocol on stdin/stdout (for editors)
    Dap,
}

#[derive(Subcommand)]
enum McpCommand {
    /// Start a server, print its tools and their input schemas, and cache them for the checker
    List {
        /// The server: a `[mcp.NAME]` of kora.toml
        name: String,
        /// The project folder (the one holding `kora.toml`); found from the current folder by default
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// How `kora test` writes its results.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TestFormat {
    /// `PASS file: name` / `FAIL file: name` lines, then `N passed, N failed`
    Text,
    /// One JSON object per line (for editors and CI)
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum Report {
    /// Tokens per model and per agent, and money when `[budget.pricing]` is set
    Cost,
}

fn observe(report: Option<Report>, no_trace: bool, otlp: Option<String>) -> observe::Observe {
    observe::Observe {
        trace: !no_trace,
        cost: matches!(report, Some(Report::Cost)),
        otlp,
    }
}

/// `--otlp URL`: a collector's http:// or https:// URL.
fn otlp_url(s: &str) -> Result<String, String> {
    let lower = s.to_ascii_lowercase();
    if (lower.starts_with("http://") || lower.starts_with("https://")) && s.len() > 8 {
        Ok(s.to_string())
    } else {
        Err("expected a collector's http:// or https:// URL, e.g. http://localhost:4318".into())
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Run { .. } | Command::Test { .. } | Command::Repl { .. }
    ) {
        if let Err(why) = kora_runtime::check_width_setting() {
            eprintln!("kora: {why}");
            return ExitCode::from(2);
        }
        // The label-transparency mode (docs/labels.md): every literal labelled, so a corpus
        // can be run again and its output compared.
        if let Some(name) = std::env::var_os("KORA_LABEL_LITERALS") {
            match kora_check::literal_labels::parse(&name.to_string_lossy()) {
                Some(label) => kora_check::literal_labels::set(Some(label)),
                None => {
                    eprintln!(
                        "kora: KORA_LABEL_LITERALS must be `unverified` or `classified`, got `{}`",
                        name.to_string_lossy()
                    );
                    return ExitCode::from(2);
                }
            }
        }
    }
    let code = match cli.command {
        Command::Run {
            file,
            args,
            record,
            replay,
            run_id,
            durable,
            resume,
            accept_config,
            mark_done,
            retry,
            report,
            no_trace,
            otlp,
            model,
        } => {
            let mode = if record {
                kora_runtime::agents::cassette::Mode::Record
            } else if replay {
                kora_runtime::agents::cassette::Mode::Replay
            } else {
                kora_runtime::agents::cassette::Mode::Auto
            };
            let durability = match resume {
                Some(id) => durable_cmd::Durability::Resume(id),
                None if durable => durable_cmd::Durability::Start,
                None => durable_cmd::Durability::Plain,
            };
            run::run(run::RunOpts {
                file,
                args,
                mode,
                run_id,
                observe: observe(report, no_trace, otlp),
                durability,
                model,
                accept_config,
                decisions: kora_runtime::durable::journal::Decisions { mark_done, retry },
            })
        }
        Command::Test {
            paths,
            live,
            filter,
            exact,
            format,
            report,
            no_trace,
            otlp,
            model,
        } => test_cmd::test(test_cmd::TestOpts {
            paths,
            live,
            filter,
            exact,
            json: format == TestFormat::Json,
            observe: observe(report, no_trace, otlp),
            model,
        }),
        Command::Trace { run } => trace_cmd::trace(run.as_deref()),
        Command::Check { files, mcp } => check::check(&files, mcp),
        Command::Mcp {
            command: McpCommand::List { name, dir },
        } => mcp_cmd::list(&name, dir),
        Command::Repl {
            replay,
            record,
            model,
        } => repl::repl(repl::ReplOpts {
            replay,
            record,
            model,
        }),
        Command::Fmt { paths, check, diff } => {
            fmt_cmd::fmt(fmt_cmd::FmtOpts { paths, check, diff })
        }
        Command::Audit { path, json } => audit_cmd::audit(path, json),
        Command::Notes { run_id, key, dir } => notes::notes(run_id, key, dir),
        Command::Runs { dir } => durable_cmd::runs(dir),
        Command::Answer { run_id, text, dir } => durable_cmd::answer(&run_id, &text, dir),
        Command::Lsp => serve("lsp", kora_lsp::serve_stdio()),
        Command::Dap => serve("dap", kora_dap::serve_stdio()),
    };
    ExitCode::from(code)
}

/// Exit code of a protocol server: 0 when the client ended the session, 2 when stdio failed.
fn serve(what: &str, r: std::io::Result<()>) -> u8 {
    match r {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("kora {what}: {e}");
            2
        }
    }
}
