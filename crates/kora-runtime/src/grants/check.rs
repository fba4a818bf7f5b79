//! The observer that confines packages: at Prepared, an effect made by a package's code is
//! refused unless that package's grants cover it. Attached for the main interpreter and
//! recreated in every branch, so a package cannot shed it through `parallel for`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::rules::{key_for, shape_of, Shape};
use super::set::{absolute, Grants};
use crate::durable::effect::{Effect, ForBranch, Observer, Verdict};

/// Every package the program reached, by id, with what it was granted.
#[derive(Clone, Debug, Default)]
pub struct GrantCheck {
    pub packages: Arc<BTreeMap<String, Grants>>,
    /// Where a relative `fs` path of the program resolves (the entry file's folder).
    pub base_dir: PathBuf,
}

impl GrantCheck {
    /// Why `e` is refused, or `None` when it is the program's own or granted.
    pub fn refusal(&self, e: &Effect) -> Option<String> {
        let id = super::package_of(e.op)?;
        let key = key_for(e.kind)?;
        let none = Grants::default();
        let grants = self.packages.get(id).unwrap_or(&none);
        let target = match shape_of(key) {
            Some(Shape::Paths) => absolute(&self.base_dir, e.target).display().to_string(),
            Some(Shape::Hosts) => host_of(e.target),
            _ => e.target.to_string(),
        };
        if grants.covers(key, &target) {
            return None;
        }
        let wanted = match shape_of(key) {
            Some(Shape::Flag) | None => format!("{key} = true"),
            Some(_) => format!("{key} = [\"{target}\"]"),
        };
        Some(format!(
            "package `{id}` may not `{}` {}: it lacks the grant `{wanted}` (it holds {}); \
             grant it in the importing `kora.toml`: `{id} = {{ ..., grants = {{ {wanted} }} }}`",
            e.call,
            if e.target.is_empty() {
                String::new()
            } else {
                format!("`{}`", e.target)
            },
            grants.describe()
        ))
    }
}

/// `https://user@api.example.com:8443/x` → `api.example.com`.
fn host_of(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    host.to_ascii_lowercase()
}

impl Observer for GrantCheck {
    fn prepared(&mut self, e: &Effect) -> Verdict {
        match self.refusal(e) {
            Some(why) => Verdict::Refuse(why),
            None => Verdict::Proceed,
        }
    }
}

impl ForBranch for GrantCheck {
    fn for_branch(&self, _prefix: &str) -> Box<dyn Observer> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_read_from_urls() {
        assert_eq!(
            host_of("https://API.example.com:8443/x?q"),
            "api.example.com"
        );
        assert_eq!(host_of("http://u:p@h.test/"), "h.test");
        assert_eq!(host_of("http://[::1]:80/"), "::1");
    }
}
