//! A package's grants as plain data, with the two comparisons confinement needs: does a set
//! cover one effect, and does one set hold everything another asks for.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::rules::{shape_of, Shape};

/// One key's grant: `true`, or a list (absolute directories for `fs`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Grant {
    All,
    List(Vec<String>),
}

/// What one package may do. Empty: nothing that reaches outside the program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grants {
    pub keys: BTreeMap<String, Grant>,
}

impl Grants {
    /// Whether the grant under `key` covers `target` (for `fs`, an absolute, normalised path).
    pub fn covers(&self, key: &str, target: &str) -> bool {
        match self.keys.get(key) {
            None => false,
            Some(Grant::All) => true,
            Some(Grant::List(items)) => items.iter().any(|g| item_covers(key, g, target)),
        }
    }

    /// What `other` asks for that `self` does not hold, as `key = item` lines (empty: none).
    pub fn missing(&self, other: &Grants) -> Vec<String> {
        let mut out = Vec::new();
        for (key, want) in &other.keys {
            match (self.keys.get(key), want) {
                (Some(Grant::All), _) => {}
                (None, Grant::All) | (Some(Grant::List(_)), Grant::All) => {
                    out.push(format!("{key} = true"));
                }
                (have, Grant::List(items)) => {
                    for i in items {
                        let held = match have {
                            Some(Grant::List(h)) => h.iter().any(|g| item_covers(key, g, i)),
                            _ => false,
                        };
                        if !held {
                            out.push(format!("{key} = [\"{i}\"]"));
                        }
                    }
                }
            }
        }
        out
    }

    /// A short rendering for messages: `fs = [...], net = [...]` or `nothing`.
    pub fn describe(&self) -> String {
        if self.keys.is_empty() {
            return "nothing".into();
        }
        self.keys
            .iter()
            .map(|(k, g)| match g {
                Grant::All => format!("{k} = true"),
                Grant::List(l) => format!("{k} = {l:?}"),
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

fn item_covers(key: &str, granted: &str, target: &str) -> bool {
    match shape_of(key) {
        Some(Shape::Paths) => Path::new(target).starts_with(Path::new(granted)),
        Some(Shape::Hosts) => match granted.strip_prefix("*.") {
            Some(domain) => target == domain || target.ends_with(&format!(".{domain}")),
            None => granted == target,
        },
        _ => granted == target,
    }
}

/// `base/./a/../b` → `base/b`, lexically: a grant compares paths as written, never following
/// a link the package might have planted.
pub fn absolute(base: &Path, p: &str) -> PathBuf {
    let joined = base.join(p);
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(pairs: &[(&str, Grant)]) -> Grants {
        Grants {
            keys: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        }
    }

    #[test]
    fn a_path_grant_covers_what_lies_under_it_and_nothing_beside() {
        let gs = g(&[("fs", Grant::List(vec!["/p/data".into()]))]);
        assert!(gs.covers("fs", "/p/data/x.txt"));
        assert!(!gs.covers("fs", "/p/database"));
        assert!(!gs.covers("fs", "/p/secret.txt"));
        assert_eq!(
            absolute(Path::new("/p"), "./data/../../etc"),
            PathBuf::from("/etc")
        );
    }

    #[test]
    fn hosts_and_subsets() {
        let parent = g(&[("net", Grant::List(vec!["*.example.com".into()]))]);
        assert!(parent.covers("net", "api.example.com"));
        assert!(!parent.covers("net", "example.org"));
        let child = g(&[
            ("net", Grant::List(vec!["api.example.com".into()])),
            ("sql", Grant::All),
        ]);
        assert_eq!(parent.missing(&child), vec!["sql = true".to_string()]);
    }
}
