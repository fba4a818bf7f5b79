//! The append-only checksum logs: the project's `kora.sums` (committed) and the machine's under
//! `KORA_HOME/sums`. The first sighting of a commit fixes its content hash, and of a tag the
//! commit it names; a later disagreement is refused, never resolved.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// One line: `URL REF COMMIT HASH`, where REF is `tag:NAME` or `-`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sighting {
    pub url: String,
    pub tag: Option<String>,
    pub commit: String,
    pub tree: String,
}

impl Sighting {
    fn line(&self) -> String {
        format!(
            "{} {} {} {}\n",
            escape(&self.url),
            self.tag
                .as_deref()
                .map_or_else(|| "-".to_string(), |t| format!("tag:{}", escape(t))),
            self.commit,
            self.tree
        )
    }

    fn parse(line: &str) -> Option<Sighting> {
        let mut parts = line.split(' ');
        let url = unescape(parts.next()?);
        let r = parts.next()?;
        let commit = parts.next()?.to_string();
        let tree = parts.next()?.to_string();
        if parts.next().is_some() {
            return None;
        }
        let tag = match r {
            "-" => None,
            t => Some(unescape(t.strip_prefix("tag:")?)),
        };
        Some(Sighting {
            url,
            tag,
            commit,
            tree,
        })
    }
}

/// One log file.
pub struct SumLog {
    pub path: PathBuf,
}

impl SumLog {
    pub fn project(dir: &Path) -> SumLog {
        SumLog {
            path: dir.join("kora.sums"),
        }
    }

    pub fn machine(home: &Path) -> SumLog {
        SumLog {
            path: home.join("sums").join("kora.sums"),
        }
    }

    fn read(&self) -> Vec<Sighting> {
        std::fs::read_to_string(&self.path)
            .map(|t| t.lines().filter_map(Sighting::parse).collect())
            .unwrap_or_default()
    }

    /// Why `s` disagrees with what this log saw first, or `None`.
    pub fn disagreement(&self, s: &Sighting) -> Option<String> {
        for seen in self.read() {
            if seen.url != s.url {
                continue;
            }
            if seen.commit == s.commit && seen.tree != s.tree {
                return Some(format!(
                    "{}: commit {} of {} was first seen with content {}, and now has {}",
                    self.path.display(),
                    s.commit,
                    s.url,
                    seen.tree,
                    s.tree
                ));
            }
            if let (Some(a), Some(b)) = (&seen.tag, &s.tag) {
                if a == b && seen.commit != s.commit {
                    return Some(format!(
                        "{}: tag {a} of {} was first seen at commit {}, and now names {}: the tag was moved",
                        self.path.display(),
                        s.url,
                        seen.commit,
                        s.commit
                    ));
                }
            }
        }
        None
    }

    /// Appends `s` unless the log already holds it.
    pub fn record(&self, s: &Sighting) -> Result<(), String> {
        if self.read().contains(s) {
            return Ok(());
        }
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(|e| format!("cannot open {}: {e}", self.path.display()))?;
        f.write_all(s.line().as_bytes())
            .map_err(|e| format!("cannot append to {}: {e}", self.path.display()))
    }
}

fn escape(s: &str) -> String {
    s.replace('%', "%25")
        .replace(' ', "%20")
        .replace('\n', "%0A")
}

fn unescape(s: &str) -> String {
    s.replace("%0A", "\n")
        .replace("%20", " ")
        .replace("%25", "%")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn a_line_reads_back(url in "\\PC{1,30}", tag in proptest::option::of("\\PC{1,10}")) {
            let s = Sighting { url, tag, commit: "c".repeat(40), tree: "sha256:ab".into() };
            prop_assert_eq!(Sighting::parse(s.line().trim_end_matches('\n')), Some(s));
        }

        #[test]
        fn any_line_is_an_answer_never_a_panic(line in "\\PC{0,100}") {
            let _ = Sighting::parse(&line);
        }
    }
}
