//! `kora add`, `kora remove`, `kora update`, `kora vendor` and `kora install`: the commands
//! that edit `kora.toml`, move `kora.lock` on, and fetch or copy what it locks.

use std::path::{Path, PathBuf};

use kora_pkg::edit::{self, Edited, Origin};
use kora_pkg::git::Store;
use kora_pkg::lock::Lockfile;
use kora_pkg::ops::{self, short, Outcome};
use kora_pkg::{GitRef, Source};

/// The project folder: `--dir`, else the nearest `kora.toml` at or above the current folder.
fn project(dir: Option<PathBuf>, make: bool) -> Result<PathBuf, String> {
    let start = dir.unwrap_or_else(|| PathBuf::from("."));
    match ops::project_dir(&start) {
        Some(p) => Ok(p),
        None if make => Ok(std::fs::canonicalize(&start).unwrap_or(start)),
        None => Err(format!(
            "no kora.toml in {} or above it; add a dependency first (`kora add NAME --path DIR`)",
            std::fs::canonicalize(&start).unwrap_or(start).display()
        )),
    }
}

fn store(project: &Path) -> Store {
    let mut s = Store::from_env();
    s.project = Some(project.to_path_buf());
    s
}

fn done(r: Result<u8, String>, what: &str) -> u8 {
    r.unwrap_or_else(|why| {
        eprintln!("error: kora {what}: {why}");
        2
    })
}

/// What `kora add` was told about the source.
pub struct AddOpts {
    pub name: String,
    pub path: Option<String>,
    pub git: Option<String>,
    pub tag: Option<String>,
    pub rev: Option<String>,
    pub branch: Option<String>,
    pub grants: Vec<String>,
    pub dir: Option<PathBuf>,
}

pub fn add(o: AddOpts) -> u8 {
    done(add_inner(o), "add")
}

fn add_inner(o: AddOpts) -> Result<u8, String> {
    let dir = project(o.dir, true)?;
    let manifest = dir.join("kora.toml");
    let origin = match (o.path, o.git) {
        (Some(p), None) => Origin::Path(p),
        (None, Some(url)) => Origin::Git {
            url,
            reference: match (o.tag, o.rev, o.branch) {
                (Some(t), _, _) => GitRef::Tag(t),
                (_, Some(r), _) => GitRef::Rev(r),
                (_, _, Some(b)) => GitRef::Branch(b),
                _ => GitRef::Head,
            },
        },
        _ => return Err("give `--path DIR` or `--git URL`".into()),
    };
    let edited = edit::add(&manifest, &o.name, &origin, &o.grants)?;
    let verb = match edited {
        Edited::Added => "added",
        Edited::Replaced => "replaced",
    };
    eprintln!(
        "kora: {verb} `{}` in {}{}",
        o.name,
        manifest.display(),
        if matches!(origin, Origin::Git { .. }) && edited == Edited::Replaced {
            format!(
                "; the lock still holds the old commit until `kora update {}`",
                o.name
            )
        } else if matches!(origin, Origin::Git { .. }) {
            "; it is fetched and locked when a program first `use`s it".to_string()
        } else {
            String::new()
        }
    );
    Ok(0)
}

pub fn remove(name: &str, dir: Option<PathBuf>) -> u8 {
    done(remove_inner(name, dir), "remove")
}

fn remove_inner(name: &str, dir: Option<PathBuf>) -> Result<u8, String> {
    let dir = project(dir, false)?;
    let manifest = dir.join("kora.toml");
    let dep = edit::remove(&manifest, name)?;
    if let Source::Git { url, .. } = &dep.source {
        let url = kora_pkg::git::absolute_url(url, &dir);
        let mut lock = Lockfile::read(&dir)?;
        let before = lock.entries.len();
        lock.entries.retain(|e| e.url != url);
        if lock.entries.len() != before {
            lock.write(&dir)?;
        }
    }
    eprintln!("kora: removed `{name}` from {}", manifest.display());
    Ok(0)
}

pub fn update(name: Option<&str>, accept: bool, dir: Option<PathBuf>) -> u8 {
    done(update_inner(name, accept, dir), "update")
}

fn update_inner(name: Option<&str>, accept: bool, dir: Option<PathBuf>) -> Result<u8, String> {
    let dir = project(dir, false)?;
    let results = ops::update(&store(&dir), &dir, name, accept)?;
    let mut refused = 0;
    for (name, outcome) in results {
        match outcome {
            Outcome::UpToDate { commit } => println!("{name}: up to date at {}", short(&commit)),
            Outcome::Locked { commit } => println!("{name}: locked at {}", short(&commit)),
            Outcome::Moved { from, to, widened } => {
                println!("{name}: {} -> {}", short(&from), short(&to));
                if !widened.is_empty() {
                    println!("  accepted, the new version asks for more:");
                    for w in widened {
                        println!("    {w}");
                    }
                }
            }
            Outcome::Refused { from, to, widened } => {
                refused += 1;
                println!(
                    "{name}: {} -> {} refused; the new version asks for more than the locked one:",
                    short(&from),
                    short(&to)
                );
                for w in widened {
                    println!("    {w}");
                }
            }
        }
    }
    if refused > 0 {
        eprintln!(
            "error: kora update: {refused} package{} not updated; kora.lock keeps the locked commit. Read the difference, then `kora update{} --accept` to take it",
            if refused == 1 { "" } else { "s" },
            name.map_or_else(String::new, |n| format!(" {n}"))
        );
        return Ok(1);
    }
    Ok(0)
}

pub fn vendor(dir: Option<PathBuf>) -> u8 {
    done(
        project(dir, false).and_then(|d| {
            let lines = ops::vendor(&store(&d), &d)?;
            for l in &lines {
                println!("{l}");
            }
            eprintln!(
                "kora: {} package{} vendored into {}; builds read them from there, offline",
                lines.len(),
                if lines.len() == 1 { "" } else { "s" },
                d.join("vendor").display()
            );
            Ok(0)
        }),
        "vendor",
    )
}

pub fn install(dir: Option<PathBuf>) -> u8 {
    done(
        project(dir, false).and_then(|d| {
            let lines = ops::install(&store(&d), &d)?;
            for l in &lines {
                println!("{l}");
            }
            if lines.is_empty() {
                eprintln!("kora: kora.lock locks nothing yet; `kora run` or `kora check` locks each git dependency a program uses");
            }
            Ok(0)
        }),
        "install",
    )
}
