//! The `kora` binary: parses the command line and hands each command to its module; exit codes live here.
//!
//! Exit codes: 0 success, 1 the program (or a test) failed at run time,
//! 2 usage or compile error.

mod check;
mod diagnostics;
mod run;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    Run {
        /// Call the model for every `analyze` and write the answers to the program's cassette
        #[arg(long, conflicts_with = "replay")]
        record: bool,
        /// Answer every `analyze` from the cassette; a call it lacks is an error (no network)
        #[arg(long)]
        replay: bool,
        /// The `.ko` file to run
        file: PathBuf,
        /// Arguments passed to the program
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Report every syntax and type error without running anything
    Check {
        /// The `.ko` files to check
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Serve the language server protocol on stdin/stdout (for editors)
    Lsp,
    /// Serve the debug adapter protocol on stdin/stdout (for editors)
    Dap,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Run {
            file,
            args,
            record,
            replay,
        } => {
            let mode = if record {
                kora_runtime::cassette::Mode::Record
            } else if replay {
                kora_runtime::cassette::Mode::Replay
            } else {
                kora_runtime::cassette::Mode::Auto
            };
            run::run(file, args, mode)
        }
        Command::Check { files } => check::check(&files),
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
