//! `kora mcp list NAME` and the tool caches `kora check --mcp` refreshes: a server's tools and
//! their input schemas, printed, and kept in `.kora/mcp/NAME.json` so the checker (and so the
//! language server) knows them without starting anything.

use std::path::{Path, PathBuf};
use std::time::Instant;

use kora_runtime::config::Config;
use kora_runtime::external::ToolInfo;

/// Starts server `name` of the project at `dir`, lists its tools and writes its cache.
pub fn refresh(dir: &Path, name: &str) -> Result<(Vec<ToolInfo>, PathBuf), String> {
    let config = Config::discover(dir).map_err(|e| e.to_string())?;
    let project = crate::durable_cmd::project_of(dir);
    let mcp = kora_mcp::McpProvider::from_config(&config, &project).map_err(|e| e.to_string())?;
    for w in mcp.warnings() {
        eprintln!("warning: {w}");
    }
    let Some(server) = mcp.server(name) else {
        use kora_runtime::external::Provider;
        return Err(mcp.check(name).err().unwrap_or_default());
    };
    let tools = server.tools(server.deadline(None))?;
    let path = project
        .join(".kora")
        .join("mcp")
        .join(format!("{name}.json"));
    let body = serde_json::json!({
        "server": name,
        "listed": "kora mcp list / kora check --mcp",
        "tools": tools.iter().map(ToolInfo::to_json).collect::<Vec<_>>(),
    });
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))?;
        let tmp = path.with_extension("json.tmp");
        std::fs::write(
            &tmp,
            serde_json::to_string_pretty(&body).unwrap_or_default() + "\n",
        )?;
        std::fs::rename(&tmp, &path)
    };
    write().map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    server.stop();
    Ok((tools, path))
}

/// `kora mcp list NAME`.
pub fn list(name: &str, dir: Option<PathBuf>) -> u8 {
    let dir = dir.unwrap_or_else(|| PathBuf::from("."));
    let started = Instant::now();
    match refresh(&dir, name) {
        Ok((tools, path)) => {
            println!(
                "{} tool{} of the MCP server `{name}`:",
                tools.len(),
                if tools.len() == 1 { "" } else { "s" }
            );
            for t in &tools {
                println!();
                println!("{}", t.name);
                let desc = t.description.trim();
                if !desc.is_empty() {
                    for line in desc.lines() {
                        println!("    {line}");
                    }
                }
                let schema = serde_json::to_string_pretty(&t.input_schema).unwrap_or_default();
                for line in schema.lines() {
                    println!("    {line}");
                }
            }
            eprintln!(
                "kora: listed in {:.2} s; cached in {} for `kora check` and the editor",
                started.elapsed().as_secs_f64(),
                path.display()
            );
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
