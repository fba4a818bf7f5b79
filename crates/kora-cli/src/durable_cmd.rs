//! `kora run --durable` / `--resume RUN_ID` set-up, and `kora runs`: which run, which journal, which program.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kora_runtime::durable::journal::{self, Resuming, Run, RunError};

/// How `kora run` treats durability.
pub enum Durability {
    Plain,
    /// Start a new durable run (with this id when `--run-id` gave one).
    Start,
    Resume(String),
}

/// The project folder of a path: the nearest folder up holding `kora.toml`, else the path's own folder.
pub fn project_of(dir: &Path) -> PathBuf {
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    dir.ancestors()
        .find(|d| d.join("kora.toml").is_file())
        .unwrap_or(&dir)
        .to_path_buf()
}

/// The folder a program lives in (`.` for a bare file name).
pub fn folder_of(file: &Path) -> &Path {
    match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// The program's identity for the journal.
pub fn digest(program: &kora_check::hir::Program) -> String {
    journal::program_digest(
        program
            .modules
            .iter()
            .map(|m| (m.path.as_path(), &*m.source)),
    )
}

/// Opens a run to resume: where its journal says its program and arguments are. Errors
/// are printed here.
pub fn open_resume(id: &str) -> Result<(Resuming, PathBuf, Vec<String>), ()> {
    if !kora_runtime::stdlib::valid_run_id(id) {
        eprintln!("error: --resume {id:?}: a run id is letters, digits, `-`, `_` and `.`");
        return Err(());
    }
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let run = Run::resume(&project_of(&here), id).map_err(|e| print_error(&e))?;
    let Some((program, _, args)) = run.past().program() else {
        eprintln!("error: run {id}: the journal's header is missing");
        return Err(());
    };
    let (program, args) = (PathBuf::from(program), args.to_vec());
    Ok((run, program, args))
}

/// Prints a run error: `error[CODE]: ...` or `error: ...`.
pub fn print_error(e: &RunError) {
    match e.code() {
        Some(code) => eprintln!("error[{code}]: {e}"),
        None => eprintln!("error: {e}"),
    }
}

/// Settles the resumed run's open attempts (or refuses, naming them) and starts it.
pub fn decide(run: Resuming, person: &journal::Decisions) -> Result<Arc<Run>, ()> {
    run.decide(person).map_err(|e| print_error(&e))
}

/// `kora answer RUN_ID TEXT`: the answer a suspended run's `ask_human` waits for.
pub fn answer(id: &str, text: &str, dir: Option<PathBuf>) -> u8 {
    if !kora_runtime::stdlib::valid_run_id(id) {
        eprintln!("error: {id:?} is not a run id (letters, digits, `-`, `_`, `.`)");
        return 2;
    }
    let here =
        dir.unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    match journal::answer(&project_of(&here), id, text) {
        Ok(question) => {
            eprintln!("run {id}: answered {question:?}; continue it with `kora run --resume {id}`");
            0
        }
        Err(e) => {
            print_error(&e);
            2
        }
    }
}

/// `kora runs`: every durable run of the project with its state.
pub fn runs(dir: Option<PathBuf>) -> u8 {
    let here =
        dir.unwrap_or_else(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
    let project = project_of(&here);
    match journal::list(&project) {
        Ok(list) if list.is_empty() => {
            eprintln!(
                "no durable runs under {}",
                journal::runs_root(&project).display()
            );
            0
        }
        Ok(list) => {
            for r in list {
                // A stopped run lists what stops it and the commands that settle it, indented.
                let (detail, below) = match (r.state.as_str(), r.detail.is_empty()) {
                    (_, true) => (String::new(), String::new()),
                    ("stopped", false) => (String::new(), indent(&r.detail)),
                    (_, false) => (format!("  ({})", r.detail), String::new()),
                };
                println!("{}  {:<11}  {}{detail}", r.id, r.state, r.program);
                print!("{below}");
            }
            0
        }
        Err(e) => {
            eprintln!("error: cannot list runs: {e}");
            1
        }
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}\n")).collect()
}
