//! `kora.toml [fmt]`: the layout options and the files to leave alone, read strictly.
//!
//! Strict like the other tables: an unknown key, a wrong type or an out-of-range
//! number is an error naming the file, the line and the key, because a misspelt
//! `line_lenght` that is silently ignored formats the whole project wrongly.

use std::path::{Path, PathBuf};

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::options::{Options, QuoteStyle};

const KEYS: &[&str] = &[
    "line_length",
    "indent_width",
    "quote_style",
    "magic_trailing_comma",
    "exclude",
];

/// The formatter's settings for one project.
#[derive(Clone, Debug, Default)]
pub struct FmtConfig {
    pub options: Options,
    /// Paths (relative to `root`) that a walk over folders skips.
    pub exclude: Vec<glob::Pattern>,
    /// The folder holding `kora.toml` (exclusions are relative to it).
    pub root: PathBuf,
    /// The `kora.toml` read, when one was found.
    pub path: Option<PathBuf>,
}

/// A problem in `kora.toml`'s `[fmt]`, with where it is.
#[derive(Debug, Clone)]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: Option<usize>,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{}: {}", self.path.display(), l, self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

impl std::error::Error for ConfigError {}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

impl FmtConfig {
    /// The settings of the nearest `kora.toml` at or above `start` (a file or a folder);
    /// defaults when there is none.
    pub fn discover(start: &Path) -> Result<FmtConfig, ConfigError> {
        let abs = std::path::absolute(start).unwrap_or_else(|_| start.to_path_buf());
        let mut cur = if abs.is_dir() {
            Some(abs.as_path())
        } else {
            abs.parent()
        };
        while let Some(dir) = cur {
            let candidate = dir.join("kora.toml");
            if candidate.is_file() {
                let text = std::fs::read_to_string(&candidate).map_err(|e| ConfigError {
                    path: candidate.clone(),
                    line: None,
                    message: format!("cannot read: {e}"),
                })?;
                return FmtConfig::parse(&candidate, &text);
            }
            cur = dir.parent();
        }
        Ok(FmtConfig {
            root: abs
                .parent()
                .filter(|_| !abs.is_dir())
                .unwrap_or(&abs)
                .to_path_buf(),
            ..FmtConfig::default()
        })
    }

    /// Reads the `[fmt]` table of the `kora.toml` at `path` whose text is `text`.
    pub fn parse(path: &Path, text: &str) -> Result<FmtConfig, ConfigError> {
        let err = |offset: Option<usize>, message: String| ConfigError {
            path: path.to_path_buf(),
            line: offset.map(|o| line_of(text, o)),
            message,
        };
        let doc = DeTable::parse(text)
            .map_err(|e| err(e.span().map(|s| s.start), e.message().to_string()))?;
        let mut cfg = FmtConfig {
            root: path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            path: Some(path.to_path_buf()),
            ..FmtConfig::default()
        };
        let Some((key, value)) = doc.get_ref().iter().find(|(k, _)| k.get_ref() == "fmt") else {
            return Ok(cfg);
        };
        let DeValue::Table(table) = value.get_ref() else {
            return Err(err(
                Some(key.span().start),
                "`fmt` must be a table: write `[fmt]`".into(),
            ));
        };
        for (k, v) in table.iter() {
            let at = Some(v.span().start);
            let name = k.get_ref().as_ref();
            let bad = |what: &str| err(at, format!("`[fmt].{name}` must be {what}"));
            match name {
                "line_length" => {
                    cfg.options.line_length =
                        int_in(v, 1, 320).ok_or_else(|| bad("a whole number from 1 to 320"))?
                }
                "indent_width" => {
                    cfg.options.indent_width =
                        int_in(v, 1, 16).ok_or_else(|| bad("a whole number from 1 to 16"))?
                }
                "quote_style" => {
                    cfg.options.quote_style = match v.get_ref().as_str() {
                        Some("double") => QuoteStyle::Double,
                        Some("single") => QuoteStyle::Single,
                        Some("preserve") => QuoteStyle::Preserve,
                        _ => return Err(bad("\"double\", \"single\" or \"preserve\"")),
                    }
                }
                "magic_trailing_comma" => {
                    cfg.options.magic_trailing_comma =
                        v.get_ref().as_bool().ok_or_else(|| bad("true or false"))?;
                }
                "exclude" => {
                    let items = v
                        .get_ref()
                        .as_array()
                        .ok_or_else(|| bad("a list of paths or glob patterns"))?;
                    for item in items.iter() {
                        let at = Some(item.span().start);
                        let pat = item.get_ref().as_str().ok_or_else(|| {
                            err(
                                at,
                                format!(
                                    "`[fmt].exclude` holds paths, not {}",
                                    item.get_ref().type_str()
                                ),
                            )
                        })?;
                        let pattern =
                            glob::Pattern::new(pat.trim_end_matches('/')).map_err(|e| {
                                err(
                                    at,
                                    format!("`[fmt].exclude`: `{pat}` is not a glob pattern: {e}"),
                                )
                            })?;
                        cfg.exclude.push(pattern);
                    }
                }
                _ => {
                    return Err(err(
                        Some(k.span().start),
                        format!("unknown key `[fmt].{name}` (known: {})", KEYS.join(", ")),
                    ))
                }
            }
        }
        Ok(cfg)
    }

    /// Whether `file` lies under an `exclude` pattern (the file itself or a folder above it).
    pub fn excluded(&self, file: &Path) -> bool {
        if self.exclude.is_empty() {
            return false;
        }
        let abs = std::path::absolute(file).unwrap_or_else(|_| file.to_path_buf());
        let root = std::path::absolute(&self.root).unwrap_or_else(|_| self.root.clone());
        let Ok(rel) = abs.strip_prefix(&root) else {
            return false;
        };
        let opts = glob::MatchOptions {
            require_literal_separator: true,
            ..glob::MatchOptions::new()
        };
        rel.ancestors()
            .filter(|a| !a.as_os_str().is_empty())
            .any(|a| self.exclude.iter().any(|p| p.matches_path_with(a, opts)))
    }
}

fn int_in(v: &Spanned<DeValue<'_>>, lo: i64, hi: i64) -> Option<usize> {
    let i = v.get_ref().as_integer()?;
    let n = i64::from_str_radix(i.as_str(), i.radix()).ok()?;
    (lo..=hi).contains(&n).then_some(n as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<FmtConfig, ConfigError> {
        FmtConfig::parse(Path::new("/p/kora.toml"), s)
    }

    #[test]
    fn reads_every_key() {
        let c = parse(
            "[models]\ndefault = \"x\"\n[fmt]\nline_length = 100\nindent_width = 2\nquote_style = \"single\"\nmagic_trailing_comma = false\nexclude = [\"tests/errors\"]\n",
        )
        .expect("valid");
        assert_eq!(c.options.line_length, 100);
        assert_eq!(c.options.indent_width, 2);
        assert_eq!(c.options.quote_style, QuoteStyle::Single);
        assert!(!c.options.magic_trailing_comma);
        assert!(c.excluded(Path::new("/p/tests/errors/a.ko")));
        assert!(c.excluded(Path::new("/p/tests/errors/lib/b.ko")));
        assert!(!c.excluded(Path::new("/p/tests/ok.ko")));
    }

    #[test]
    fn errors_name_the_line_and_the_key() {
        let e = parse("[fmt]\nline_length = 88\nline_lenght = 80\n").expect_err("unknown key");
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("line_lenght"), "{}", e.message);
        let e = parse("[fmt]\n\nline_length = 0\n").expect_err("range");
        assert_eq!(e.line, Some(3));
        let e = parse("[fmt]\nquote_style = \"fancy\"\n").expect_err("enum");
        assert!(e.message.contains("preserve"));
        let e = parse("[fmt]\nexclude = [\"a\", 3]\n").expect_err("type");
        assert_eq!(e.line, Some(2));
        let e = parse("fmt = 3\n").expect_err("table");
        assert_eq!(e.line, Some(1));
        let e = parse("[fmt\n").expect_err("syntax");
        assert_eq!(e.line, Some(1));
        assert!(e.to_string().starts_with("/p/kora.toml:1:"));
    }

    #[test]
    fn globs_match_below_the_root_only() {
        let c = parse("[fmt]\nexclude = [\"gen/*.ko\", \"**/snapshots\"]\n").expect("valid");
        assert!(c.excluded(Path::new("/p/gen/a.ko")));
        assert!(!c.excluded(Path::new("/p/gen/sub/a.ko")));
        assert!(c.excluded(Path::new("/p/x/y/snapshots/a.ko")));
        assert!(!c.excluded(Path::new("/elsewhere/gen/a.ko")));
    }
}
