//! `kora check`: every diagnostic of every file named, nothing run.

use std::path::PathBuf;

use kora_check::{check_program, Disk};
use kora_pkg::Project;

pub fn check(files: &[PathBuf], mcp: bool) -> u8 {
    let mut errors = 0;
    for path in files {
        if mcp {
            errors += refresh_caches(path);
        }
        let project = Project::for_entry(path);
        if let Some(e) = project.manifest_error() {
            eprintln!("error[E1405]: {e}");
            errors += 1;
            continue;
        }
        match check_program(path, &project) {
            Ok(checked) => {
                let rendering = std::time::Instant::now();
                errors += crate::diagnostics::print_all(&checked);
                if std::env::var_os("KORA_TIMINGS").is_some() {
                    let mut phases = checked.timings.clone();
                    phases.push(("render diagnostics", rendering.elapsed()));
                    print_timings(path, &phases);
                }
                for (manifest, line, name) in project.unused(path) {
                    let at = line.map_or_else(String::new, |l| format!(":{l}"));
                    eprintln!(
                        "warning[E1404]: {}{at}: dependency `{name}` is declared but no `use` reaches it, so it is never fetched; remove it with `kora remove {name}`",
                        manifest.display()
                    );
                }
            }
            Err(e) => {
                eprintln!("error: cannot read `{}`: {}", e.path.display(), e.error);
                errors += 1;
            }
        }
    }
    if errors > 0 {
        eprintln!(
            "kora check: {errors} error{} found",
            if errors == 1 { "" } else { "s" }
        );
        2
    } else {
        0
    }
}

/// `KORA_TIMINGS=1`: the wall time of each phase on stderr, to see where a slow check goes.
fn print_timings(path: &std::path::Path, phases: &[(&str, std::time::Duration)]) {
    let total: std::time::Duration = phases.iter().map(|(_, d)| *d).sum();
    eprintln!(
        "kora check {}: {:.1} ms",
        path.display(),
        total.as_secs_f64() * 1e3
    );
    for (name, d) in phases {
        eprintln!("  {:>8.1} ms  {name}", d.as_secs_f64() * 1e3);
    }
}

/// `--mcp`: lists the tools of every MCP server `path` uses into its cache; returns the failures.
fn refresh_caches(path: &std::path::Path) -> usize {
    let Ok(checked) = check_program(path, &Disk) else {
        return 0;
    };
    let dir = crate::durable_cmd::folder_of(path);
    let mut failed = 0;
    for e in checked.externals.iter().filter(|e| e.kind == "mcp") {
        match crate::mcp_cmd::refresh(dir, &e.name) {
            Ok((tools, cache)) => eprintln!(
                "kora: {} tools of `{}` listed into {}",
                tools.len(),
                e.name,
                cache.display()
            ),
            Err(why) => {
                eprintln!("error: {}: `use mcp {}`: {why}", e.place, e.name);
                failed += 1;
            }
        }
    }
    failed
}
