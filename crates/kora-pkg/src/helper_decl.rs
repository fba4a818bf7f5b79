//! `[package.helper]` of a package's kora.toml, read strictly (a `command`, or per-platform
//! `url` + `sha256`; `needs`; `timeout_secs`), and the pinned fetch of a helper binary into the
//! cache under `KORA_HOME`, verified by SHA-256 before anything could execute it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The platforms a fetched helper may name, as `[package.helper.PLATFORM]`.
pub const PLATFORMS: &[&str] = &[
    "linux-x86_64",
    "linux-aarch64",
    "macos-x86_64",
    "macos-aarch64",
    "windows-x86_64",
];
const KEYS: &[&str] = &["command", "needs", "timeout_secs"];
const NEEDS: &[&str] = &["net", "write"];

/// The platform this build of Kora runs on, spelled as a manifest spells it.
pub fn this_platform() -> String {
    format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH)
}

/// A package's helper as its manifest declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct HelperDecl {
    /// `command = ["bin/h", "--flag"]`: a path relative to the package, or a program on PATH.
    pub command: Vec<String>,
    /// `[package.helper.PLATFORM] url = ..., sha256 = ...`.
    pub fetch: BTreeMap<String, Pinned>,
    pub needs_net: bool,
    pub needs_write: bool,
    pub timeout_secs: Option<f64>,
    /// The `[package.helper]` line, for messages.
    pub line: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pinned {
    pub url: String,
    /// Lowercase hex.
    pub sha256: String,
}

/// A problem: the line, the key (`package.helper.needs`), what is wrong.
pub type Problem = (Option<usize>, String, String);

/// Reads `[package.helper]` from its table; `text` is the manifest, for line numbers.
pub fn parse(text: &str, v: &toml::Value) -> Result<HelperDecl, Problem> {
    const TABLE: &str = "package.helper";
    let at = |k: &str| {
        super::manifest::line_of(text, k, Some(TABLE))
            .or_else(|| super::manifest::line_of(text, TABLE, None))
    };
    let key = |k: &str| format!("{TABLE}.{k}");
    let t = v.as_table().ok_or_else(|| {
        (
            super::manifest::line_of(text, "helper", Some("package")),
            TABLE.to_string(),
            "must be a table: write `[package.helper]`".to_string(),
        )
    })?;
    let mut d = HelperDecl {
        command: Vec::new(),
        fetch: BTreeMap::new(),
        needs_net: false,
        needs_write: false,
        timeout_secs: None,
        line: super::manifest::line_of(text, TABLE, None),
    };
    for (k, v) in t {
        match k.as_str() {
            "command" => {
                let items = v.as_array().filter(|a| !a.is_empty()).ok_or_else(|| {
                    (at(k), key(k), "must be a non-empty list of strings: `command = [\"bin/helper\"]`".to_string())
                })?;
                for i in items {
                    let s = i.as_str().filter(|s| !s.is_empty()).ok_or_else(|| {
                        (at(k), key(k), "must be a list of non-empty strings".to_string())
                    })?;
                    d.command.push(s.to_string());
                }
            }
            "needs" => {
                let items = v.as_array().ok_or_else(|| {
                    (at(k), key(k), "must be a list: `needs = [\"net\"]`".to_string())
                })?;
                for i in items {
                    match i.as_str() {
                        Some("net") => d.needs_net = true,
                        Some("write") => d.needs_write = true,
                        other => {
                            return Err((
                                at(k),
                                key(k),
                                format!(
                                    "{} is not something a helper can need (known: {})",
                                    other.map_or_else(|| format!("{i:?}"), |s| format!("`{s}`")),
                                    NEEDS.join(", ")
                                ),
                            ))
                        }
                    }
                }
            }
            "timeout_secs" => {
                let secs = kora_runtime::config::section::deadline_secs(v).ok_or_else(|| {
                    (at(k), key(k), "must be a positive number of seconds".to_string())
                })?;
                d.timeout_secs = Some(secs);
            }
            p if PLATFORMS.contains(&p) => {
                d.fetch.insert(p.to_string(), pinned(text, p, v)?);
            }
            other => {
                return Err((
                    at(other),
                    key(other),
                    format!(
                        "unknown key (known: {}, or a platform table: {}); a manifest has no install scripts",
                        KEYS.join(", "),
                        PLATFORMS.join(", ")
                    ),
                ))
            }
        }
    }
    match (d.command.is_empty(), d.fetch.is_empty()) {
        (true, true) => Err((
            d.line,
            TABLE.to_string(),
            "declares no program: write `command = [\"bin/helper\"]`, or `[package.helper.linux-x86_64]` with `url` and `sha256`".into(),
        )),
        (false, false) => Err((
            d.line,
            TABLE.to_string(),
            "give `command` or per-platform `url` + `sha256`, not both".into(),
        )),
        _ => Ok(d),
    }
}

fn pinned(text: &str, platform: &str, v: &toml::Value) -> Result<Pinned, Problem> {
    let table = format!("package.helper.{platform}");
    let line = |k: &str| {
        super::manifest::line_of(text, k, Some(&table))
            .or_else(|| super::manifest::line_of(text, platform, Some("package.helper")))
            .or_else(|| super::manifest::line_of(text, &table, None))
    };
    let t = v.as_table().ok_or_else(|| {
        (
            line(platform),
            table.clone(),
            "must be a table with `url` and `sha256`".to_string(),
        )
    })?;
    for k in t.keys() {
        if k != "url" && k != "sha256" {
            return Err((
                line(k),
                format!("{table}.{k}"),
                "unknown key (known: url, sha256)".into(),
            ));
        }
    }
    let url = t
        .get("url")
        .and_then(|u| u.as_str())
        .filter(|u| !u.is_empty());
    let Some(url) = url else {
        return Err((
            line("url"),
            format!("{table}.url"),
            "a fetched helper needs `url = \"https://...\"`".into(),
        ));
    };
    let sha = t.get("sha256").and_then(|u| u.as_str());
    let Some(sha) = sha.filter(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()))
    else {
        return Err((
            line("sha256"),
            format!("{table}.sha256"),
            "a fetched helper is pinned: `sha256` must be the 64 hex digits of its SHA-256 (there is no unpinned form)".into(),
        ));
    };
    if !(url.starts_with("https://") || url.starts_with("http://") || url.starts_with("file://")) {
        return Err((
            line("url"),
            format!("{table}.url"),
            "must be an `https://` (or `file://`) URL".into(),
        ));
    }
    Ok(Pinned {
        url: url.to_string(),
        sha256: sha.to_ascii_lowercase(),
    })
}

/// The program and arguments that start `package`'s helper rooted at `root`: its `command`, or
/// the verified binary for this platform (fetched into `home/helpers/` when not cached yet).
pub fn program(
    package: &str,
    root: &Path,
    d: &HelperDecl,
    home: &Path,
) -> Result<(PathBuf, Vec<String>), String> {
    if let Some((first, rest)) = d.command.split_first() {
        // A name with a slash is the package's file; a bare name is a program on PATH.
        let program = if first.contains('/') {
            let p = root.join(first);
            let canon = std::fs::canonicalize(&p).map_err(|e| {
                format!(
                    "package `{package}`'s helper `{first}` ({}): {e}",
                    p.display()
                )
            })?;
            if !canon.starts_with(root) {
                return Err(format!(
                    "package `{package}`'s helper `{first}` lies outside the package"
                ));
            }
            canon
        } else {
            PathBuf::from(first)
        };
        return Ok((program, rest.to_vec()));
    }
    let platform = this_platform();
    let Some(pin) = d.fetch.get(&platform) else {
        return Err(format!(
            "package `{package}` has no helper for this platform ({platform}); it ships {}",
            d.fetch.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    };
    fetch(package, pin, home).map(|p| (p, Vec::new()))
}

/// The cached file for `pin`, fetched and verified first when it is not there. A cached file is
/// hashed again before each use, so one changed on disk is refused like a bad download.
pub fn fetch(package: &str, pin: &Pinned, home: &Path) -> Result<PathBuf, String> {
    let dir = home.join("helpers");
    let path = dir.join(&pin.sha256);
    if let Ok(bytes) = std::fs::read(&path) {
        if hex(&bytes) == pin.sha256 {
            return Ok(path);
        }
    }
    let bytes = download(&pin.url).map_err(|e| {
        format!(
            "package `{package}`'s helper could not be fetched from {}: {e}",
            pin.url
        )
    })?;
    let got = hex(&bytes);
    if got != pin.sha256 {
        return Err(format!(
            "package `{package}`'s helper from {} was refused: its SHA-256 is {got}, but the manifest pins {}; nothing was run",
            pin.url, pin.sha256
        ));
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    // Written beside, then renamed: a reader never sees half a binary under the pinned name.
    let tmp = dir.join(format!(".{}.{}", pin.sha256, std::process::id()));
    std::fs::write(&tmp, &bytes).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o755));
    }
    std::fs::rename(&tmp, &path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

fn hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn download(url: &str) -> Result<Vec<u8>, String> {
    if let Some(path) = url.strip_prefix("file://") {
        return std::fs::read(path).map_err(|e| e.to_string());
    }
    let resp = ureq::get(url).call().map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    use std::io::Read;
    resp.into_body()
        .into_reader()
        .take(1 << 30)
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<HelperDecl, Problem> {
        let t: toml::Table = text.parse().expect("toml");
        let p = t["package"]["helper"].clone();
        parse(text, &p)
    }

    #[test]
    fn commands_pins_and_mistakes() {
        let d = read(
            "[package]\nname = \"x\"\n[package.helper]\ncommand = [\"bin/h\"]\nneeds = [\"net\"]\n",
        )
        .expect("ok");
        assert!(d.needs_net && !d.needs_write);
        let e = read(
            "[package]\nname = \"x\"\n[package.helper]\ncommand = [\"h\"]\nneeds = [\"exec\"]\n",
        )
        .expect_err("bad need");
        assert_eq!((e.0, e.1.as_str()), (Some(5), "package.helper.needs"));
        let e = read(
            "[package]\nname = \"x\"\n[package.helper]\ncommand = [\"h\"]\npostinstall = \"x\"\n",
        )
        .expect_err("unknown");
        assert_eq!(e.0, Some(5));
        let e =
            read("[package]\nname = \"x\"\n[package.helper.linux-x86_64]\nurl = \"file:///h\"\n")
                .expect_err("unpinned");
        assert_eq!(e.1, "package.helper.linux-x86_64.sha256");
        assert!(read("[package]\nname = \"x\"\n[package.helper]\n").is_err());
    }
}
