//! What a version of a package asks for, as `kora update` compares it: the grants its own
//! manifest passes to its dependencies, the standard modules that reach outside the program
//! it uses, and its `declassify` sites. A bump that adds to any of them needs `--accept`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::manifest::Manifest;

/// One version's asks; every item is a line a person can read in the difference.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Profile {
    pub grants: BTreeSet<String>,
    pub effects: BTreeSet<String>,
    /// `file: declassify EXPR for SINK`, with how many times it occurs.
    pub declassify: BTreeMap<String, usize>,
}

impl Profile {
    /// The profile of the package tree at `root`. A file that does not parse adds nothing
    /// here: the checker refuses it when it is used.
    pub fn of(root: &Path) -> Profile {
        let mut p = Profile::default();
        match Manifest::read(&root.join("kora.toml")) {
            Ok(m) => {
                for d in m.deps.values() {
                    if d.grants_written.is_empty() {
                        p.grants
                            .insert(format!("its dependency `{}` (granted nothing)", d.name));
                    }
                    for g in &d.grants_written {
                        p.grants
                            .insert(format!("grants its dependency `{}`: {g}", d.name));
                    }
                }
            }
            Err(e) => {
                p.grants.insert(format!("an unreadable manifest: {e}"));
            }
        }
        let mut files = Vec::new();
        ko_files(root, root, &mut files);
        files.sort();
        for rel in files {
            let Ok(text) = std::fs::read_to_string(root.join(&rel)) else {
                continue;
            };
            let parsed = kora_syntax::parse(&text);
            for s in &parsed.module.stmts {
                if let kora_syntax::ast::StmtKind::Use(u) = &s.kind {
                    if let kora_syntax::ast::UseTarget::Std(n) = &u.target {
                        if let Some(key) = grant_key_of_module(&n.name) {
                            p.effects
                                .insert(format!("uses `{}` (needs the grant `{key}`)", n.name));
                        }
                    }
                    if let kora_syntax::ast::UseTarget::Provider { kind, name } = &u.target {
                        p.effects
                            .insert(format!("uses {} `{}`", kind.name, name.name));
                    }
                }
            }
            for site in kora_check::audit::file_sites(&rel, &text, &parsed.module.stmts) {
                *p.declassify
                    .entry(format!("{rel}: declassify {} for {}", site.expr, site.sink))
                    .or_default() += 1;
            }
        }
        p
    }

    /// What `new` asks for that `self` did not, as lines (empty: nothing more).
    pub fn widened_by(&self, new: &Profile) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        out.extend(
            new.grants
                .difference(&self.grants)
                .map(|g| format!("+ {g}")),
        );
        out.extend(
            new.effects
                .difference(&self.effects)
                .map(|g| format!("+ {g}")),
        );
        for (site, n) in &new.declassify {
            let before = self.declassify.get(site).copied().unwrap_or(0);
            if *n > before {
                out.push(format!(
                    "+ {site}{}",
                    if n - before > 1 {
                        format!(" ({} more times)", n - before)
                    } else {
                        String::new()
                    }
                ));
            }
        }
        out
    }
}

/// The grant a standard module's effects need, by the runtime's registry of grant keys.
fn grant_key_of_module(module: &str) -> Option<&'static str> {
    let key = match module {
        "fs" => "fs",
        "http" => "net",
        "sql" => "sql",
        "env" => "env",
        _ => return None,
    };
    kora_runtime::grants::rules::shape_of(key).map(|_| key)
}

fn ko_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(ty) = e.file_type() else { continue };
        if ty.is_dir() {
            if e.file_name() != ".git" {
                ko_files(root, &p, out);
            }
        } else if p.extension().is_some_and(|x| x == "ko") {
            if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
}
