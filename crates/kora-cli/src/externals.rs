//! Wiring `use mcp` and `use python` to their providers: the run's registry, built from
//! kora.toml before anything runs, with each module a program uses checked to be set up.

use std::path::Path;
use std::sync::Arc;

use kora_check::hir::External;
use kora_runtime::config::Config;
use kora_runtime::external::Registry;

/// The registry of a run. A module the program uses that is not set up (no `[mcp.NAME]`) is
/// an error naming the `use` that needs it, before anything runs. Warnings go to stderr.
pub fn registry(
    config: &Config,
    project: &Path,
    program_dir: &Path,
    used: &[External],
) -> Result<Arc<Registry>, String> {
    let mut r = Registry::default();
    if used.iter().any(|e| e.kind == "mcp") {
        let mcp = kora_mcp::McpProvider::from_config(config, project).map_err(|e| e.to_string())?;
        for w in mcp.warnings() {
            eprintln!("warning: {w}");
        }
        r.register(Arc::new(mcp));
    }
    // No `use python`, no Python: the provider (and so any check of `[python]`) is made only
    // for a program that asks for it, and it starts no process until a call needs one.
    if used.iter().any(|e| e.kind == "python") {
        let dir = std::fs::canonicalize(program_dir).unwrap_or_else(|_| program_dir.to_path_buf());
        let width = kora_runtime::branch_width();
        let cfg = kora_python::PythonConfig::from_config(config, project, &dir, width)
            .map_err(|e| e.to_string())?;
        let py = kora_python::PythonProvider::new(cfg);
        for w in py.warnings() {
            eprintln!("warning: {w}");
        }
        r.register(Arc::new(py));
    }
    // `use pdf`: a helper process, started at the first call, confined (kora-helper).
    if used.iter().any(|e| e.kind == "helper") {
        let cfg =
            kora_helper::PdfConfig::from_config(config, project).map_err(|e| e.to_string())?;
        r.register(Arc::new(kora_helper::HelperProvider::new(cfg)));
    }
    for e in used {
        let Some(p) = r.get(&e.kind) else {
            return Err(format!(
                "{}: `use {} {}`: this build of Kora has no `{}` support",
                e.place, e.kind, e.name, e.kind
            ));
        };
        p.check(&e.name)
            .map_err(|why| format!("{}: `use {} {}`: {why}", e.place, e.kind, e.name))?;
    }
    Ok(Arc::new(r))
}
