//! Package confinement: what a package may do (`Grants`), which package an effect's code
//! belongs to (`package_of`), and the observer that refuses an effect a package was not
//! granted (`check.rs`), in the one effect pipeline. May use `durable`; knows nothing of
//! manifests, fetching or the checker: kora-pkg builds the grants and the CLI attaches them.
//!
//! A new effect kind registers by adding one row to `rules::RULES` (its `Kind` and the grant
//! key that covers it) and, when the key is new, one row to `rules::KEYS`: manifests are read
//! against that table, so a key the runtime cannot check can never be written.

pub mod check;
pub mod rules;
mod set;

pub use check::GrantCheck;
pub use set::{absolute as set_absolute, Grant, Grants};

/// The package whose code made an effect, read from its operation id: a package's files are
/// sited as `[ID]/file.ko` (a branch prefix such as `p3.7|` comes first). `None`: the program.
pub fn package_of(op: &str) -> Option<&str> {
    let site = op.rsplit_once('|').map_or(op, |(_, s)| s);
    let rest = site.strip_prefix('[')?;
    rest.split_once(']').map(|(id, _)| id)
}

#[cfg(test)]
mod tests {
    use super::package_of;

    #[test]
    fn package_is_read_from_the_site() {
        assert_eq!(package_of("[weather]/lib.ko:fetch#0"), Some("weather"));
        assert_eq!(package_of("p3.7|[w~2]/a.ko:f#1"), Some("w~2"));
        assert_eq!(package_of("main.ko:<module>#0"), None);
    }
}
