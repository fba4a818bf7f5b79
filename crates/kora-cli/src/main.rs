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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Run { file, args } => run::run(file, args),
        Command::Check { files } => check::check(&files),
    };
    ExitCode::from(code)
}
