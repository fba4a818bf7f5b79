//! `kora fmt`: lays `.ko` files out in the canonical layout, in place; `--check` and
//! `--diff` only report, `-` formats stdin to stdout.
//!
//! A file with syntax errors is left as it is and reported with its diagnostics;
//! so is one the formatter could not lay out safely (see `kora_fmt::verify`).
//! Exit codes: 0 done (or nothing to change), 1 `--check`/`--diff` found files
//! that would change, 2 a file could not be formatted, a path or `kora.toml` is bad.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use kora_fmt::{FmtConfig, FormatError};
use kora_syntax::diagnostic::{render, SourceFile};

pub struct FmtOpts {
    pub paths: Vec<PathBuf>,
    pub check: bool,
    pub diff: bool,
}

/// Folders a walk never enters: tools' output and dependencies, not sources.
fn skipped_dir(name: &str) -> bool {
    name.starts_with('.') || name == "target" || name == "node_modules"
}

#[derive(Default)]
struct Tally {
    changed: usize,
    unchanged: usize,
    failed: usize,
}

pub fn fmt(opts: FmtOpts) -> u8 {
    if opts.paths.iter().any(|p| p.as_os_str() == "-") {
        if opts.paths.len() > 1 {
            eprintln!("error: `-` (stdin) cannot be combined with other paths");
            return 2;
        }
        return stdin(&opts);
    }
    let roots = if opts.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        opts.paths.clone()
    };
    let mut configs: BTreeMap<Option<PathBuf>, std::rc::Rc<FmtConfig>> = BTreeMap::new();
    let mut files: Vec<(PathBuf, std::rc::Rc<FmtConfig>)> = Vec::new();
    for root in &roots {
        let meta = match std::fs::metadata(root) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("error: cannot read `{}`: {e}", root.display());
                return 2;
            }
        };
        let cfg = match FmtConfig::discover(root) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return 2;
            }
        };
        let cfg = configs
            .entry(cfg.path.clone())
            .or_insert_with(|| std::rc::Rc::new(cfg))
            .clone();
        if meta.is_dir() {
            let mut found = Vec::new();
            if let Err(e) = walk(root, &cfg, &mut found) {
                eprintln!("error: {e}");
                return 2;
            }
            found.sort();
            files.extend(found.into_iter().map(|f| (f, cfg.clone())));
        } else {
            files.push((root.clone(), cfg.clone()));
        }
    }
    let mut tally = Tally::default();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for (path, cfg) in &files {
        one_file(path, cfg, &opts, &mut tally, &mut out);
    }
    let _ = out.flush();
    summary(&tally, &opts);
    if tally.failed > 0 {
        2
    } else if (opts.check || opts.diff) && tally.changed > 0 {
        1
    } else {
        0
    }
}

fn walk(dir: &Path, cfg: &FmtConfig, found: &mut Vec<PathBuf>) -> Result<(), String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read `{}`: {e}", dir.display()))?;
    for entry in entries {
        let entry = entry.map_err(|e| format!("cannot read `{}`: {e}", dir.display()))?;
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry
            .file_type()
            .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        if cfg.excluded(&path) {
            continue;
        }
        if kind.is_dir() {
            if !skipped_dir(&name) {
                walk(&path, cfg, found)?;
            }
        } else if name.ends_with(".ko") {
            found.push(path);
        }
    }
    Ok(())
}

fn one_file(path: &Path, cfg: &FmtConfig, opts: &FmtOpts, tally: &mut Tally, out: &mut impl Write) {
    let shown = path.display().to_string();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read `{shown}`: {e}");
            tally.failed += 1;
            return;
        }
    };
    let formatted = match kora_fmt::format(&text, &cfg.options) {
        Ok(f) => f,
        Err(e) => {
            report(&shown, &text, &e);
            tally.failed += 1;
            return;
        }
    };
    if formatted == text {
        tally.unchanged += 1;
        return;
    }
    tally.changed += 1;
    if opts.diff {
        let _ = out.write_all(kora_fmt::edits::unified_diff(&text, &formatted, &shown).as_bytes());
    } else if opts.check {
        let _ = writeln!(out, "Would reformat: {shown}");
    } else if let Err(e) = std::fs::write(path, &formatted) {
        eprintln!("error: cannot write `{shown}`: {e}");
        tally.changed -= 1;
        tally.failed += 1;
    }
}

fn report(shown: &str, text: &str, e: &FormatError) {
    match e {
        FormatError::Syntax(diags) => {
            let color = crate::diagnostics::use_color();
            let file = SourceFile { path: shown, text };
            for d in diags {
                eprint!("{}", render(d, &file, color));
            }
            eprintln!("error: `{shown}` was not formatted: {e}; fix them and run `kora fmt` again");
        }
        FormatError::Unsafe(_) => eprintln!("error: `{shown}` was not formatted: {e}"),
    }
}

fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

fn summary(t: &Tally, opts: &FmtOpts) {
    let mut parts = Vec::new();
    if opts.check || opts.diff {
        if t.changed > 0 {
            parts.push(format!(
                "{} would be reformatted",
                plural(t.changed, "file")
            ));
        }
        if t.unchanged > 0 {
            parts.push(format!("{} already formatted", plural(t.unchanged, "file")));
        }
    } else {
        if t.changed > 0 {
            parts.push(format!("{} reformatted", plural(t.changed, "file")));
        }
        if t.unchanged > 0 {
            parts.push(format!("{} left unchanged", plural(t.unchanged, "file")));
        }
    }
    if t.failed > 0 {
        parts.push(format!(
            "{} could not be formatted",
            plural(t.failed, "file")
        ));
    }
    if parts.is_empty() {
        parts.push("no .ko files found".into());
    }
    eprintln!("kora fmt: {}", parts.join(", "));
}

fn stdin(opts: &FmtOpts) -> u8 {
    let mut text = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut text) {
        eprintln!("error: cannot read stdin: {e}");
        return 2;
    }
    let cfg = match FmtConfig::discover(Path::new(".")) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let formatted = match kora_fmt::format(&text, &cfg.options) {
        Ok(f) => f,
        Err(e) => {
            report("<stdin>", &text, &e);
            return 2;
        }
    };
    let changed = formatted != text;
    let mut out = std::io::stdout().lock();
    let written = if opts.diff {
        out.write_all(kora_fmt::edits::unified_diff(&text, &formatted, "<stdin>").as_bytes())
    } else if opts.check {
        Ok(())
    } else {
        out.write_all(formatted.as_bytes())
    };
    if let Err(e) = written.and_then(|_| out.flush()) {
        eprintln!("error: cannot write stdout: {e}");
        return 2;
    }
    if (opts.check || opts.diff) && changed {
        1
    } else {
        0
    }
}
