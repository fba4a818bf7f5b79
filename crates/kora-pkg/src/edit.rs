//! `kora add` and `kora remove`: one entry of `[dependencies]` changed in place, every other
//! line and comment of `kora.toml` kept as written. What is written is read back by the
//! manifest's own reader before it replaces the file, so an edit never leaves a manifest
//! `kora run` would refuse.

use std::path::Path;

use toml_edit::{Array, DocumentMut, InlineTable, Item, Value};

use crate::manifest::{is_name, GitRef, Manifest};

/// Where `kora add` finds the package.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    Path(String),
    Git { url: String, reference: GitRef },
}

/// What an edit did, for the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edited {
    Added,
    Replaced,
}

/// Adds dependency `name` to the manifest at `path` (made when missing), or replaces the
/// entry of that name. `grants` are `--grant` values: `fs=./data`, `net=api.example.com`,
/// `sql`; a key given twice collects a list.
pub fn add(path: &Path, name: &str, origin: &Origin, grants: &[String]) -> Result<Edited, String> {
    if !is_name(name) {
        return Err(format!(
            "`{name}` is not a package name: letters, digits and `_`, not starting with a digit (it is what `use` spells)"
        ));
    }
    let text = read(path)?;
    let mut doc = parse(path, &text)?;
    let deps = deps_table(path, &mut doc)?;
    let mut entry = InlineTable::new();
    match origin {
        Origin::Path(p) => {
            entry.insert("path", Value::from(p.as_str()));
        }
        Origin::Git { url, reference } => {
            entry.insert("git", Value::from(url.as_str()));
            match reference {
                GitRef::Tag(t) => entry.insert("tag", Value::from(t.as_str())),
                GitRef::Rev(r) => entry.insert("rev", Value::from(r.as_str())),
                GitRef::Branch(b) => entry.insert("branch", Value::from(b.as_str())),
                GitRef::Head => None,
            };
        }
    }
    let g = grant_table(grants)?;
    if !g.is_empty() {
        entry.insert("grants", Value::InlineTable(g));
    }
    let edited = if deps.contains_key(name) {
        Edited::Replaced
    } else {
        Edited::Added
    };
    deps.insert(name, Item::Value(Value::InlineTable(entry)));
    save(path, &doc.to_string())?;
    Ok(edited)
}

/// Removes dependency `name`; the entry as it was, for pruning the lock.
pub fn remove(path: &Path, name: &str) -> Result<crate::Dependency, String> {
    let text = read(path)?;
    let before = Manifest::parse(path, &text).map_err(|e| e.to_string())?;
    let Some(dep) = before.deps.get(name).cloned() else {
        let names: Vec<&str> = before.deps.keys().map(String::as_str).collect();
        return Err(format!(
            "{} declares no dependency `{name}` ({})",
            path.display(),
            if names.is_empty() {
                "it declares none".to_string()
            } else {
                format!("it declares: {}", names.join(", "))
            }
        ));
    };
    let mut doc = parse(path, &text)?;
    deps_table(path, &mut doc)?.remove(name);
    save(path, &doc.to_string())?;
    Ok(dep)
}

fn read(path: &Path) -> Result<String, String> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

fn parse(path: &Path, text: &str) -> Result<DocumentMut, String> {
    text.parse::<DocumentMut>()
        .map_err(|e| format!("{}: {}", path.display(), e.message()))
}

fn deps_table<'a>(
    path: &Path,
    doc: &'a mut DocumentMut,
) -> Result<&'a mut toml_edit::Table, String> {
    let item = doc.entry("dependencies").or_insert_with(toml_edit::table);
    item.as_table_mut().ok_or_else(|| {
        format!(
            "{}: `dependencies` must be a table (`[dependencies]`) for `kora add` to edit it",
            path.display()
        )
    })
}

/// `--grant` values as the inline table `grants = { ... }`.
fn grant_table(grants: &[String]) -> Result<InlineTable, String> {
    let mut t = InlineTable::new();
    for g in grants {
        let (key, item) = match g.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (g.trim(), None),
        };
        let Some(shape) = kora_runtime::grants::rules::shape_of(key) else {
            let known: Vec<&str> = kora_runtime::grants::rules::KEYS
                .iter()
                .map(|(k, _)| *k)
                .collect();
            return Err(format!(
                "--grant {g}: unknown grant `{key}` (known: {})",
                known.join(", ")
            ));
        };
        match (shape, item) {
            (kora_runtime::grants::rules::Shape::Flag, None) => {
                t.insert(key, Value::from(true));
            }
            (kora_runtime::grants::rules::Shape::Flag, Some(_)) => {
                return Err(format!(
                    "--grant {g}: `{key}` is all or nothing; write `--grant {key}`"
                ));
            }
            (_, None | Some("")) => {
                return Err(format!(
                    "--grant {g}: `{key}` needs an item: `--grant {key}=VALUE` (once per item)"
                ));
            }
            (_, Some(v)) => {
                let list = t.entry(key).or_insert_with(|| Value::Array(Array::new()));
                match list.as_array_mut() {
                    Some(a) => a.push(v),
                    None => return Err(format!("--grant {g}: `{key}` given as a flag and a list")),
                }
            }
        }
    }
    Ok(t)
}

/// Writes `text` to `path` after reading it back as a manifest; a refused edit writes nothing.
fn save(path: &Path, text: &str) -> Result<(), String> {
    Manifest::parse(path, text).map_err(|e| format!("the edit was not written: {e}"))?;
    let tmp = path.with_extension("toml.tmp");
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("kora-edit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("dir");
        d.join("kora.toml")
    }

    #[test]
    fn an_add_keeps_comments_and_other_tables() {
        let p = temp("keep");
        let before = "# my project\n[models.main]\nprovider = \"openai\" # the default\n\n[dependencies]\n# a friend\nold = { path = \"../old\" }\n";
        std::fs::write(&p, before).expect("write");
        let origin = Origin::Git {
            url: "file:///r".into(),
            reference: GitRef::Tag("v1".into()),
        };
        let grants = [
            "net=api.example.com".to_string(),
            "net=b.example".into(),
            "sql".into(),
        ];
        assert_eq!(add(&p, "w", &origin, &grants), Ok(Edited::Added));
        let after = std::fs::read_to_string(&p).expect("read");
        assert!(after.starts_with(before), "{after}");
        assert!(
            after.ends_with("w = { git = \"file:///r\", tag = \"v1\", grants = { net = [\"api.example.com\", \"b.example\"], sql = true } }\n"),
            "{after}"
        );
        let dep = remove(&p, "old").expect("removed");
        assert_eq!(dep.name, "old");
        let after = std::fs::read_to_string(&p).expect("read");
        assert!(
            after.contains("# my project")
                && after.contains("# the default")
                && !after.contains("old ="),
            "{after}"
        );
    }

    #[test]
    fn a_bad_edit_writes_nothing() {
        let p = temp("bad");
        std::fs::write(&p, "[dependencies]\n").expect("write");
        let origin = Origin::Path("../x".into());
        assert!(add(&p, "json", &origin, &[]).is_err(), "a std module name");
        assert!(add(&p, "x", &origin, &["disk=/".into()]).is_err());
        assert!(add(&p, "x", &origin, &["sql=yes".into()]).is_err());
        assert!(add(&p, "9x", &origin, &[]).is_err());
        assert!(remove(&p, "nope")
            .expect_err("absent")
            .contains("declares none"));
        assert_eq!(
            std::fs::read_to_string(&p).expect("read"),
            "[dependencies]\n"
        );
    }
}
