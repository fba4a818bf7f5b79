//! `kora notes [RUN_ID [KEY]]`: reads the notes a run kept with `notes.write`, from outside the run.

use std::path::{Path, PathBuf};

/// The project folder: the nearest one up from here holding `kora.toml`, else here.
fn project_dir(dir: Option<PathBuf>) -> PathBuf {
    if let Some(d) = dir {
        return d;
    }
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    here.ancestors()
        .find(|d| d.join("kora.toml").is_file())
        .map(Path::to_path_buf)
        .unwrap_or(here)
}

pub fn notes(run_id: Option<String>, key: Option<String>, dir: Option<PathBuf>) -> u8 {
    let project = project_dir(dir);
    let Some(run_id) = run_id else {
        return match kora_runtime::stdlib::list_runs(&project) {
            Ok(runs) if runs.is_empty() => {
                eprintln!(
                    "no run has notes under {}",
                    kora_runtime::stdlib::notes_root(&project).display()
                );
                0
            }
            Ok(runs) => {
                for r in runs {
                    println!("{r}");
                }
                0
            }
            Err(e) => {
                eprintln!("error: {e}");
                1
            }
        };
    };
    let notes = match kora_runtime::stdlib::read_notes(&project, &run_id) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    match key {
        Some(k) => match notes.iter().find(|(name, _)| *name == k) {
            Some((_, v)) => {
                println!("{v}");
                0
            }
            None => {
                eprintln!("error: run {run_id} has no note {k:?}");
                1
            }
        },
        None => {
            for (k, v) in notes {
                println!("{k} = {v}");
            }
            0
        }
    }
}
