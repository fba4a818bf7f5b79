//! `kora.toml`'s `[package]` and `[dependencies]`, read strictly: an unknown key is an error
//! naming the file, its line and the key. There is no field for install scripts, and an
//! unknown key is refused, so none can be added by writing one.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use kora_runtime::grants::rules::{shape_of, Shape, KEYS};
use kora_runtime::grants::{Grant, Grants};

/// One `kora.toml`, as far as packages go.
#[derive(Clone, Debug)]
pub struct Manifest {
    pub path: PathBuf,
    /// The folder holding it: relative paths in it resolve here.
    pub dir: PathBuf,
    pub package: Option<PackageMeta>,
    pub deps: BTreeMap<String, Dependency>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PackageMeta {
    pub name: String,
    pub version: Option<String>,
    pub description: Option<String>,
    /// The range of Kora versions it is written for (`kora = ">=0.1"`): recorded, shown.
    pub kora: Option<String>,
    /// `[package.helper]`: the one program this package's `use helper` talks to.
    pub helper: Option<crate::helper_decl::HelperDecl>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dependency {
    pub name: String,
    pub source: Source,
    /// `fs` entries are absolute (resolved against the manifest's folder).
    pub grants: Grants,
    /// The grants as written, for messages and `kora audit --deps`.
    pub grants_written: Vec<String>,
    pub line: Option<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// `path = "../x"`: as written, and resolved against the manifest's folder.
    Path {
        written: String,
        dir: PathBuf,
    },
    Git {
        url: String,
        reference: GitRef,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GitRef {
    Tag(String),
    Rev(String),
    Branch(String),
    /// Neither: the remote's default branch.
    Head,
}

impl GitRef {
    /// What `git fetch` is asked for.
    pub fn refspec(&self) -> String {
        match self {
            GitRef::Tag(t) => format!("refs/tags/{t}"),
            GitRef::Rev(r) => r.clone(),
            GitRef::Branch(b) => format!("refs/heads/{b}"),
            GitRef::Head => "HEAD".into(),
        }
    }
}

impl GitRef {
    /// The tag, when this is one (the checksum logs pin tags).
    pub fn tag(&self) -> Option<&str> {
        match self {
            GitRef::Tag(t) => Some(t),
            _ => None,
        }
    }

    /// Reads back what `Display` wrote (as `kora.lock` keeps it).
    pub fn parse_written(s: &str) -> GitRef {
        if let Some(t) = s.strip_prefix("tag ") {
            GitRef::Tag(t.to_string())
        } else if let Some(r) = s.strip_prefix("rev ") {
            GitRef::Rev(r.to_string())
        } else if let Some(b) = s.strip_prefix("branch ") {
            GitRef::Branch(b.to_string())
        } else {
            GitRef::Head
        }
    }
}

impl fmt::Display for GitRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GitRef::Tag(t) => write!(f, "tag {t}"),
            GitRef::Rev(r) => write!(f, "rev {r}"),
            GitRef::Branch(b) => write!(f, "branch {b}"),
            GitRef::Head => write!(f, "the default branch"),
        }
    }
}

/// A problem in a manifest: the file, the line when known, the key, what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub key: String,
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(
                f,
                "{}:{l}: `{}`: {}",
                self.path.display(),
                self.key,
                self.message
            ),
            None => write!(
                f,
                "{}: `{}`: {}",
                self.path.display(),
                self.key,
                self.message
            ),
        }
    }
}

impl std::error::Error for ManifestError {}

const PACKAGE_KEYS: &[&str] = &["name", "version", "description", "kora", "helper"];
const DEP_KEYS: &[&str] = &["path", "git", "tag", "rev", "branch", "grants"];

impl Manifest {
    pub fn read(path: &Path) -> Result<Manifest, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|e| ManifestError {
            path: path.to_path_buf(),
            line: None,
            key: "kora.toml".into(),
            message: format!("cannot read it: {e}"),
        })?;
        Manifest::parse(path, &text)
    }

    /// Reads `[package]` and `[dependencies]` from `text`; other tables belong to others.
    pub fn parse(path: &Path, text: &str) -> Result<Manifest, ManifestError> {
        let err = |line: Option<usize>, key: &str, message: String| ManifestError {
            path: path.to_path_buf(),
            line,
            key: key.to_string(),
            message,
        };
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            err(line, "kora.toml", e.message().to_string())
        })?;
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
        let mut m = Manifest {
            path: path.to_path_buf(),
            dir: dir.clone(),
            package: None,
            deps: BTreeMap::new(),
        };
        if let Some(p) = table.get("package") {
            let line = line_of(text, "package", None);
            let t = p
                .as_table()
                .ok_or_else(|| err(line, "package", "must be a table: write `[package]`".into()))?;
            let helper = match t.get("helper") {
                None => None,
                Some(h) => Some(
                    crate::helper_decl::parse(text, h)
                        .map_err(|(line, key, message)| err(line, &key, message))?,
                ),
            };
            let get = |k: &str| -> Result<Option<String>, ManifestError> {
                match t.get(k) {
                    None => Ok(None),
                    Some(toml::Value::String(s)) => Ok(Some(s.clone())),
                    Some(_) => Err(err(
                        line_of(text, k, Some("package")),
                        &format!("package.{k}"),
                        "must be a string".into(),
                    )),
                }
            };
            for k in t.keys() {
                if !PACKAGE_KEYS.contains(&k.as_str()) {
                    return Err(err(
                        line_of(text, k, Some("package")),
                        &format!("package.{k}"),
                        format!("unknown key (known: {})", PACKAGE_KEYS.join(", ")),
                    ));
                }
            }
            let name = get("name")?.ok_or_else(|| {
                err(
                    line,
                    "package.name",
                    "a package needs a name: `name = \"mylib\"`".into(),
                )
            })?;
            if !is_name(&name) {
                return Err(err(
                    line_of(text, "name", Some("package")),
                    "package.name",
                    format!("`{name}` is not a package name: letters, digits and `_`, not starting with a digit"),
                ));
            }
            m.package = Some(PackageMeta {
                name,
                version: get("version")?,
                description: get("description")?,
                kora: get("kora")?,
                helper,
            });
        }
        if let Some(d) = table.get("dependencies") {
            let t = d.as_table().ok_or_else(|| {
                err(
                    line_of(text, "dependencies", None),
                    "dependencies",
                    "must be a table: write `[dependencies]`".into(),
                )
            })?;
            for (name, v) in t {
                let line = line_of(text, name, Some("dependencies"))
                    .or_else(|| line_of(text, &format!("dependencies.{name}"), None));
                let dep = dependency(name, v, &dir).map_err(|(key, message)| {
                    err(line, &format!("dependencies.{name}{key}"), message)
                })?;
                m.deps.insert(name.clone(), Dependency { line, ..dep });
            }
        }
        Ok(m)
    }
}

/// A package name: an identifier, so `use NAME` can spell it.
pub fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

type Problem = (String, String);

fn dependency(name: &str, v: &toml::Value, dir: &Path) -> Result<Dependency, Problem> {
    if !is_name(name) {
        return Err((
            String::new(),
            "a dependency's name is what `use` spells: letters, digits and `_`".into(),
        ));
    }
    if kora_check::std_api::StdMod::from_name(name).is_some()
        || kora_check::std_api::PLANNED.contains(&name)
    {
        return Err((
            String::new(),
            format!("`{name}` is a standard-library module; `use {name}` must keep meaning it, so name the dependency otherwise"),
        ));
    }
    let t = v.as_table().ok_or_else(|| {
        (
            String::new(),
            "write `{ path = \"../x\" }` or `{ git = \"URL\", tag = \"v1\" }`".to_string(),
        )
    })?;
    for k in t.keys() {
        if !DEP_KEYS.contains(&k.as_str()) {
            return Err((
                format!(".{k}"),
                format!(
                    "unknown key (known: {}); a manifest has no install scripts",
                    DEP_KEYS.join(", ")
                ),
            ));
        }
    }
    let string = |k: &str| -> Result<Option<String>, Problem> {
        match t.get(k) {
            None => Ok(None),
            Some(toml::Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(_) => Err((format!(".{k}"), "must be a non-empty string".into())),
        }
    };
    let source = match (string("path")?, string("git")?) {
        (Some(_), Some(_)) => {
            return Err((String::new(), "give `path` or `git`, not both".into()));
        }
        (None, None) => {
            return Err((
                String::new(),
                "needs `path = \"DIR\"` or `git = \"URL\"`".into(),
            ));
        }
        (Some(p), None) => {
            for k in ["tag", "rev", "branch"] {
                if t.contains_key(k) {
                    return Err((
                        format!(".{k}"),
                        "only a `git` dependency has a reference".into(),
                    ));
                }
            }
            Source::Path {
                dir: dir.join(&p),
                written: p,
            }
        }
        (None, Some(url)) => {
            let refs: Vec<GitRef> = [
                string("tag")?.map(GitRef::Tag),
                string("rev")?.map(GitRef::Rev),
                string("branch")?.map(GitRef::Branch),
            ]
            .into_iter()
            .flatten()
            .collect();
            if refs.len() > 1 {
                return Err((String::new(), "give one of `tag`, `rev`, `branch`".into()));
            }
            if url.starts_with('-') {
                return Err((".git".into(), "a URL cannot start with `-`".into()));
            }
            Source::Git {
                url,
                reference: refs.into_iter().next().unwrap_or(GitRef::Head),
            }
        }
    };
    let (grants, grants_written) = match t.get("grants") {
        None => (Grants::default(), Vec::new()),
        Some(g) => grants(g, dir)?,
    };
    Ok(Dependency {
        name: name.to_string(),
        source,
        grants,
        grants_written,
        line: None,
    })
}

fn grants(v: &toml::Value, dir: &Path) -> Result<(Grants, Vec<String>), Problem> {
    let t = v.as_table().ok_or_else(|| {
        (
            ".grants".to_string(),
            "write `grants = { net = [\"host\"], fs = [\"./data\"], sql = true }`".to_string(),
        )
    })?;
    let mut out = Grants::default();
    let mut written = Vec::new();
    for (k, v) in t {
        let key = format!(".grants.{k}");
        let Some(shape) = shape_of(k) else {
            let known: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
            return Err((key, format!("unknown grant (known: {})", known.join(", "))));
        };
        let g = match (shape, v) {
            (Shape::Flag, toml::Value::Boolean(true)) => Grant::All,
            (Shape::Flag, toml::Value::Boolean(false)) => continue,
            (Shape::Flag, _) => return Err((key, "must be `true` or `false`".into())),
            (_, toml::Value::Array(items)) => {
                let mut list = Vec::new();
                for i in items {
                    let Some(s) = i.as_str().filter(|s| !s.is_empty()) else {
                        return Err((key, "must be a list of non-empty strings".into()));
                    };
                    list.push(match shape {
                        Shape::Paths => kora_runtime::grants::set_absolute(dir, s)
                            .display()
                            .to_string(),
                        Shape::Hosts => s.to_ascii_lowercase(),
                        _ => s.to_string(),
                    });
                }
                list.sort();
                list.dedup();
                Grant::List(list)
            }
            (_, _) => return Err((key, "must be a list of strings".into())),
        };
        written.push(match v {
            toml::Value::Array(items) => format!(
                "{k} = [{}]",
                items
                    .iter()
                    .filter_map(|i| i.as_str())
                    .map(crate::lock::quote)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            _ => format!("{k} = true"),
        });
        out.keys.insert(k.clone(), g);
    }
    Ok((out, written))
}

pub use kora_runtime::config::line_of;
