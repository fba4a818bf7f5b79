//! `kora audit --deps`: each package a program reaches, who granted it what, and the
//! `declassify` sites in its own files, so a reviewer reads a dependency's authority in one place.

use std::io::Write;
use std::path::Path;

use kora_check::audit::{Audit, Site};
use kora_pkg::resolve::Reached;

/// The sites of `found` that lie in the package rooted at `root`.
fn sites_in<'a>(found: &'a Audit, root: &Path) -> Vec<&'a Site> {
    found
        .sites
        .iter()
        .filter(|s| {
            std::fs::canonicalize(&s.file)
                .map(|p| p.starts_with(root))
                .unwrap_or(false)
        })
        .collect()
}

pub fn write(
    out: &mut impl Write,
    found: &Audit,
    mut reached: Vec<Reached>,
    json: bool,
) -> std::io::Result<()> {
    reached.sort_by(|a, b| a.id.cmp(&b.id));
    if json {
        let rows: Vec<serde_json::Value> = reached
            .iter()
            .map(|r| {
                let sites: Vec<serde_json::Value> = sites_in(found, &r.root)
                    .iter()
                    .map(|s| {
                        serde_json::json!({"file": s.file, "line": s.line, "col": s.col, "sink": s.sink, "expr": s.expr})
                    })
                    .collect();
                serde_json::json!({
                    "package": r.id,
                    "root": r.root.display().to_string(),
                    "granted_by": r.granted_by,
                    "grants": r.grants.describe(),
                    "declassify": sites,
                })
            })
            .collect();
        return writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&rows).unwrap_or_else(|_| "[]".into())
        );
    }
    for r in &reached {
        writeln!(out, "package {} ({})", r.id, r.root.display())?;
        writeln!(
            out,
            "  granted by {}: {}",
            r.granted_by,
            r.grants.describe()
        )?;
        let sites = sites_in(found, &r.root);
        if sites.is_empty() {
            writeln!(out, "  no declassify sites")?;
        }
        for s in sites {
            writeln!(
                out,
                "  {}:{}:{}: declassify {} for {}",
                s.file, s.line, s.col, s.expr, s.sink
            )?;
        }
    }
    let n = reached.len();
    writeln!(out, "{n} package{} reached", if n == 1 { "" } else { "s" })
}
