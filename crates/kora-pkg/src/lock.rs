//! `kora.lock`: for each git dependency, the commit it resolved to and the content hash of its
//! tree. Authoritative: once an entry exists its commit is fetched, never its reference again;
//! only `kora update` rewrites it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One locked repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Locked {
    pub name: String,
    pub url: String,
    /// The reference as the manifest wrote it (`tag v1`), for messages and `kora update`.
    pub reference: String,
    pub commit: String,
    /// `sha256:HEX` over the tree's files (`tree_hash.rs`).
    pub tree: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lockfile {
    pub entries: Vec<Locked>,
}

impl Lockfile {
    pub fn path(project: &Path) -> PathBuf {
        project.join("kora.lock")
    }

    /// Reads `kora.lock`; a missing file is an empty lock, a damaged one an error naming its line.
    pub fn read(project: &Path) -> Result<Lockfile, String> {
        let path = Lockfile::path(project);
        match std::fs::read_to_string(&path) {
            Ok(text) => Lockfile::parse(&text)
                .map_err(|(line, m)| format!("{}:{line}: {m}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Lockfile::default()),
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// `[[package]]` tables with `name`, `url`, `reference`, `commit`, `tree`, all strings.
    pub fn parse(text: &str) -> Result<Lockfile, (usize, String)> {
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e.span().map_or(1, |s| {
                text[..s.start.min(text.len())].matches('\n').count() + 1
            });
            (line, e.message().to_string())
        })?;
        let mut out = Lockfile::default();
        for (k, v) in &table {
            if k != "version" && k != "package" {
                return Err((
                    line_of_key(text, k),
                    format!("unknown key `{k}` in kora.lock"),
                ));
            }
            let _ = v;
        }
        let Some(list) = table.get("package") else {
            return Ok(out);
        };
        let list = list.as_array().ok_or((
            line_of_key(text, "package"),
            "`package` must be `[[package]]` tables".to_string(),
        ))?;
        for (i, p) in list.iter().enumerate() {
            let line = nth_table_line(text, i);
            let t = p
                .as_table()
                .ok_or((line, "a `[[package]]` entry must be a table".to_string()))?;
            let get = |k: &str| -> Result<String, (usize, String)> {
                t.get(k)
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
                    .ok_or((line, format!("entry {} needs `{k}` as a string", i + 1)))
            };
            let commit = get("commit")?;
            if commit.len() < 40 || !commit.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err((line, format!("`{commit}` is not a full commit id")));
            }
            out.entries.push(Locked {
                name: get("name")?,
                url: get("url")?,
                reference: get("reference")?,
                commit,
                tree: get("tree")?,
            });
        }
        Ok(out)
    }

    pub fn render(&self) -> String {
        let mut s = String::from(
            "# kora.lock: written by kora; the commit and tree of every git dependency.\n# Only `kora update` changes an entry.\nversion = 1\n",
        );
        let mut entries = self.entries.clone();
        entries.sort_by(|a, b| (&a.name, &a.url).cmp(&(&b.name, &b.url)));
        for e in &entries {
            let _ = write!(
                s,
                "\n[[package]]\nname = {}\nurl = {}\nreference = {}\ncommit = {}\ntree = {}\n",
                quote(&e.name),
                quote(&e.url),
                quote(&e.reference),
                quote(&e.commit),
                quote(&e.tree)
            );
        }
        s
    }

    pub fn write(&self, project: &Path) -> Result<(), String> {
        let path = Lockfile::path(project);
        let tmp = path.with_extension("lock.tmp");
        std::fs::write(&tmp, self.render())
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    pub fn find(&self, url: &str) -> Option<&Locked> {
        self.entries.iter().find(|e| e.url == url)
    }

    pub fn put(&mut self, entry: Locked) {
        self.entries.retain(|e| e.url != entry.url);
        self.entries.push(entry);
    }
}

/// A TOML basic string.
pub fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn line_of_key(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.trim_start().starts_with(key) || l.contains(&format!("[{key}]")))
        .map_or(1, |i| i + 1)
}

fn nth_table_line(text: &str, n: usize) -> usize {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == "[[package]]")
        .nth(n)
        .map_or(1, |(i, _)| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(name: &str, url: &str, reference: &str) -> Locked {
        Locked {
            name: name.into(),
            url: url.into(),
            reference: reference.into(),
            commit: "a".repeat(40),
            tree: "sha256:00".into(),
        }
    }

    proptest! {
        #[test]
        fn what_is_written_reads_back(name in "[a-z_][a-z0-9_]{0,8}", url in "\\PC{0,40}", reference in "\\PC{0,20}") {
            let lock = Lockfile { entries: vec![entry(&name, &url, &reference)] };
            prop_assert_eq!(Lockfile::parse(&lock.render()).expect("round trip"), lock);
        }

        #[test]
        fn any_text_is_an_answer_never_a_panic(text in "\\PC{0,200}") {
            let _ = Lockfile::parse(&text);
        }
    }

    #[test]
    fn a_short_commit_is_refused_with_its_line() {
        let text = "version = 1\n\n[[package]]\nname = \"a\"\nurl = \"u\"\nreference = \"tag v1\"\ncommit = \"abc\"\ntree = \"t\"\n";
        let (line, m) = Lockfile::parse(text).expect_err("short commit");
        assert_eq!(line, 3);
        assert!(m.contains("abc"), "{m}");
    }
}
