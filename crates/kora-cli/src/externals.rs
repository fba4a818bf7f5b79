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
    packages: &[kora_pkg::resolve::Reached],
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
        let mut hp = kora_helper::HelperProvider::new(cfg);
        for e in used
            .iter()
            .filter(|e| e.kind == "helper" && e.name != "pdf")
        {
            hp.add_package(package_helper(e, packages)?);
        }
        r.register(Arc::new(hp));
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

/// The helper of the package `use helper` named in `e`: its program (fetched and verified when
/// pinned by URL) and its confinement, refused before anything runs when the package asks for a
/// right its importer did not give it.
fn package_helper(
    e: &External,
    packages: &[kora_pkg::resolve::Reached],
) -> Result<kora_helper::HelperSpec, String> {
    let id = &e.name;
    let Some(pkg) = packages.iter().find(|p| &p.id == id) else {
        return Err(format!(
            "{}: `use helper`: package `{id}` was not reached",
            e.place
        ));
    };
    let Some(decl) = &pkg.helper else {
        return Err(format!(
            "{}: `use helper`: package `{id}` declares no `[package.helper]`",
            e.place
        ));
    };
    let at = match decl.line {
        Some(l) => format!("{}:{l}", pkg.root.join("kora.toml").display()),
        None => pkg.root.join("kora.toml").display().to_string(),
    };
    // `net` is the importer's to give: the package must hold it itself. `write` needs some
    // `fs` grant, since a grant of folders is the only writing a package is ever given.
    let refuse = |need: &str, grant: &str| {
        format!(
            "package `{id}` declares a helper that needs `{need}` ({at}), but its importer ({}) does not grant it `{grant}`; grant it (`{id} = {{ ..., grants = {{ {grant} = [...] }} }}`) or use a package that needs less",
            pkg.granted_by
        )
    };
    if decl.needs_net && !pkg.grants.keys.contains_key("net") {
        return Err(refuse("net", "net"));
    }
    if decl.needs_write && !pkg.grants.keys.contains_key("fs") {
        return Err(refuse("write", "fs"));
    }
    let home = kora_pkg::git::Store::from_env().home;
    let (program, args) = kora_pkg::helper_decl::program(id, &pkg.root, decl, &home)?;
    Ok(kora_helper::HelperSpec {
        name: id.clone(),
        program,
        args,
        needs: kora_helper::Needs {
            net: decl.needs_net,
            write: decl.needs_write,
        },
        timeout: std::time::Duration::from_secs_f64(
            decl.timeout_secs
                .unwrap_or(kora_helper::config::DEFAULT_TIMEOUT_SECS),
        ),
    })
}
