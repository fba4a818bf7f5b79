//! `kora audit`: every `declassify ... for SINK:` site of a program, as lines or as JSON.
//!
//! Exit 0 whenever the listing is complete (no sites is a complete listing);
//! exit 1 when some file cannot be read or parsed, and then nothing is listed,
//! since a partial audit read as a whole one is worse than none.

use std::io::Write;
use std::path::{Path, PathBuf};

use kora_check::audit::{self, Audit, Problem};
use kora_syntax::diagnostic::{render, SourceFile};

pub fn audit(path: Option<PathBuf>, json: bool) -> u8 {
    let root = path.unwrap_or_else(|| PathBuf::from("."));
    let mut entries = Vec::new();
    if root.is_dir() {
        collect(&root, &mut entries);
    } else {
        entries.push(root.clone());
    }
    let project =
        kora_pkg::Project::for_entry(entries.first().map_or(Path::new("."), |p| p.as_path()));
    let found = audit::audit(&entries, &project);
    if !found.problems.is_empty() {
        report_problems(&found);
        return 1;
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let written = if json {
        writeln!(out, "{}", as_json(&found))
    } else {
        write_lines(&mut out, &found)
    };
    match written.and_then(|()| out.flush()) {
        Ok(()) => 0,
        // A closed pipe (`kora audit | head`) is the reader's choice, not a failure to report.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => 0,
        Err(e) => {
            eprintln!("kora audit: cannot write the listing: {e}");
            1
        }
    }
}

fn write_lines(out: &mut impl Write, found: &Audit) -> std::io::Result<()> {
    for s in &found.sites {
        writeln!(
            out,
            "{}:{}:{}: declassify {} for {}",
            s.file, s.line, s.col, s.expr, s.sink
        )?;
    }
    for c in &found.conditions {
        writeln!(
            out,
            "{}:{}:{}: {} {} reads classified `{}` (the branch taken is not labelled)",
            c.file, c.line, c.col, c.kind, c.expr, c.reads
        )?;
    }
    let n = found.sites.len();
    writeln!(
        out,
        "{n} declassify site{} in {} file{}",
        if n == 1 { "" } else { "s" },
        found.files,
        if found.files == 1 { "" } else { "s" },
    )?;
    let c = found.conditions.len();
    if c > 0 {
        writeln!(
            out,
            "{c} condition{} read{} classified values",
            if c == 1 { "" } else { "s" },
            if c == 1 { "s" } else { "" },
        )?;
    }
    Ok(())
}

/// One site per line, keys in the order a reader scans them (file, line, col, sink, expr);
/// `serde_json` quotes the strings, so a path or expression with quotes stays valid JSON.
fn as_json(found: &Audit) -> String {
    if found.sites.is_empty() && found.conditions.is_empty() {
        return "[]".to_string();
    }
    let q = |s: &str| serde_json::Value::from(s).to_string();
    let mut rows: Vec<String> = found
        .sites
        .iter()
        .map(|s| {
            format!(
                "  {{\"file\": {}, \"line\": {}, \"col\": {}, \"sink\": {}, \"expr\": {}}}",
                q(&s.file),
                s.line,
                s.col,
                q(&s.sink),
                q(&s.expr)
            )
        })
        .collect();
    // A condition is told apart from a site by its `condition` key (a site has `sink`).
    rows.extend(found.conditions.iter().map(|c| {
        format!(
            "  {{\"file\": {}, \"line\": {}, \"col\": {}, \"condition\": {}, \"reads\": {}, \"expr\": {}}}",
            q(&c.file),
            c.line,
            c.col,
            q(&c.kind),
            q(&c.reads),
            q(&c.expr)
        )
    }));
    format!("[\n{}\n]", rows.join(",\n"))
}

fn report_problems(found: &Audit) {
    let color = crate::diagnostics::use_color();
    let mut count = 0;
    for p in &found.problems {
        match p {
            Problem::Unreadable { path, error } => {
                count += 1;
                eprintln!("error: cannot read `{}`: {error}", path.display());
            }
            Problem::Invalid(f) => {
                let file = SourceFile {
                    path: &f.display,
                    text: &f.source,
                };
                for d in &f.diagnostics {
                    count += 1;
                    eprint!("{}", render(d, &file, color));
                }
            }
        }
    }
    eprintln!(
        "kora audit: {count} error{} found; no sites listed, since the listing would be incomplete",
        if count == 1 { "" } else { "s" }
    );
}

/// Every `.ko` file under `dir`, in path order; hidden folders and build output are skipped.
/// Paths under `.` are written without the leading `./`, as a user would type them.
fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .map(|p| match p.strip_prefix(".") {
            Ok(rest) if dir == Path::new(".") => rest.to_path_buf(),
            _ => p,
        })
        .collect();
    entries.sort();
    for p in entries {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.is_dir() {
            if !name.starts_with('.') && name != "target" && name != "node_modules" {
                collect(&p, files);
            }
        } else if audit::is_source(&p) {
            files.push(p);
        }
    }
}
