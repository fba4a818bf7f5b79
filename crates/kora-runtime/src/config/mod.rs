//! `kora.toml` as plain settings: the file found and read strictly (this file), which table
//! changed since a durable run began (`digest.rs`), `[budget.pricing]` (`pricing.rs`),
//! `[sinks]` and `[output]` (`sinks.rs`), `[telemetry]` (`telemetry.rs`). The bottom of the
//! runtime: it uses no other folder.
//!
//! `kora.toml`: finding it, reading it strictly, and resolving which model entry a call uses.
//!
//! Strict means an unknown key is an error naming the key and its line, because a
//! misspelt `max_retires` that is silently ignored is worse than no setting at all.

pub mod digest;
#[cfg(test)]
mod fuzz;
pub mod pricing;
pub mod section;
pub mod sinks;
pub mod telemetry;

use std::path::{Path, PathBuf};

use kora_models::config::{CALL_TIMEOUT_RANGE, MAX_RETRIES, TIMEOUT_RANGE};
use kora_models::{Api, ModelEntry, Settings, Structured};

/// The settings of one `kora.toml`, as far as this build uses them.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Where it was read from (`None`: no `kora.toml` was found; built-in defaults apply).
    pub path: Option<PathBuf>,
    pub models: Vec<ModelEntryNamed>,
    /// The entry used when a call names none.
    pub default_model: Option<ModelEntryNamed>,
    pub settings: Settings,
    /// `[budget.pricing]`, for the cost report's money column.
    pub pricing: Option<pricing::Pricing>,
    /// `[models] max_tool_turns`: model turns a tool loop may spend asking for tools.
    pub max_tool_turns: Option<u32>,
    /// `[sinks]` and `[output]` (see `sinks.rs`).
    pub sinks: sinks::SinkPolicy,
    /// `[telemetry]` (see `telemetry.rs`).
    pub telemetry: telemetry::TelemetrySettings,
    /// The entry `default = "name"` names, when it names one.
    pub default_alias: Option<String>,
    /// A digest per top-level table, so a durable resume can tell which settings moved.
    pub table_digests: std::collections::BTreeMap<String, String>,
    /// The file's text and tables as read: `[mcp]` and `[python]` belong to the crates that
    /// speak to them, which read them strictly from here (with `line_of` for their lines).
    pub raw: Option<std::sync::Arc<(String, toml::Table)>>,
    /// The names `declassify x for NAME:` may give besides models: each `[mcp.NAME]`, `python`.
    pub external_sinks: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct ModelEntryNamed {
    /// The key under `[models]` (what `model="..."` names).
    pub key: String,
    pub entry: ModelEntry,
}

/// A problem in `kora.toml`, with where it is.
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

/// How many model turns may ask for tools before the call gives up, unless
/// `[models] max_tool_turns` says otherwise.
pub const DEFAULT_MAX_TOOL_TURNS: u32 = 10;

/// The built-in default when no `[models]` entry is configured.
pub const BUILTIN_DEFAULT: &str = "openai:gpt-4o-mini";

const TOP_TABLES: &[&str] = &[
    "models",
    "sinks",
    "output",
    "budget",
    "mcp",
    "python",
    "pdf",
    "dependencies",
    "package",
    // `kora fmt`'s table: read (strictly) by kora-fmt, nothing a run uses.
    "fmt",
    "telemetry",
];
const ENTRY_KEYS: &[&str] = &[
    "name",
    "endpoint",
    "api_key_env",
    "api",
    "structured",
    "max_output_tokens",
];

impl Config {
    /// How many turns a tool loop may ask for tools before it ends `Failed`.
    pub fn tool_turns(&self) -> u32 {
        self.max_tool_turns.unwrap_or(DEFAULT_MAX_TOOL_TURNS)
    }

    /// Reads the nearest `kora.toml` at or above `dir`; no file means defaults.
    pub fn discover(dir: &Path) -> Result<Config, ConfigError> {
        // `kora run prog.ko` names its folder as `.`, whose parents a relative path cannot
        // reach: walk up from where it really is.
        let real = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let mut cur = Some(real.as_path());
        while let Some(d) = cur {
            let candidate = d.join("kora.toml");
            if candidate.is_file() {
                return Config::load(&candidate);
            }
            cur = d.parent();
        }
        Ok(Config::default())
    }

    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            path: path.to_path_buf(),
            line: None,
            message: format!("cannot read: {e}"),
        })?;
        Config::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
        let err = |line: Option<usize>, message: String| ConfigError {
            path: path.to_path_buf(),
            line,
            message,
        };
        let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            err(line, e.message().to_string())
        })?;
        let mut cfg = Config {
            path: Some(path.to_path_buf()),
            table_digests: digest::table_digests(&table),
            ..Config::default()
        };
        if let Some(mcp) = table.get("mcp").and_then(|m| m.as_table()) {
            cfg.external_sinks = mcp
                .iter()
                .filter(|(_, v)| v.is_table())
                .map(|(k, _)| k.clone())
                .collect();
        }
        cfg.raw = Some(std::sync::Arc::new((text.to_string(), table.clone())));
        for (k, v) in &table {
            if !TOP_TABLES.contains(&k.as_str()) {
                return Err(err(
                    line_of(text, k, None),
                    format!("unknown table `[{k}]` (known: {})", TOP_TABLES.join(", ")),
                ));
            }
            if !v.is_table() {
                return Err(err(
                    line_of(text, k, None),
                    format!("`{k}` must be a table: write `[{k}]`"),
                ));
            }
        }
        if let Some(b) = table.get("budget").and_then(|b| b.as_table()) {
            cfg.pricing = pricing::parse_budget(b).map_err(|(key, m)| {
                let line = line_of(text, &key, Some("budget"))
                    .or_else(|| line_of(text, &format!("\"{key}\""), Some("budget.pricing")))
                    .or_else(|| line_of(text, &key, Some("budget.pricing")))
                    .or_else(|| line_of(text, "budget.pricing", None));
                err(line, m)
            })?;
        }
        cfg.sinks = sinks::parse(&table).map_err(|(key, m)| {
            let line =
                line_of(text, &key, Some("sinks")).or_else(|| line_of(text, &key, Some("output")));
            err(line, m)
        })?;
        cfg.telemetry = telemetry::parse(&table)
            .map_err(|(key, m)| err(line_of(text, &key, Some("telemetry")), m))?;
        let Some(models) = table.get("models").and_then(|m| m.as_table()) else {
            return Ok(cfg);
        };
        let mut default_spec: Option<&toml::Value> = None;
        for (k, v) in models {
            let line = line_of(text, k, Some("models"));
            match k.as_str() {
                "timeout_secs" => {
                    cfg.settings.timeout_secs =
                        seconds(v, k, TIMEOUT_RANGE, "the longest a request may stay silent")
                            .map_err(|m| err(line, m))?;
                }
                "call_timeout_secs" => {
                    cfg.settings.call_timeout_secs = seconds(
                        v,
                        k,
                        CALL_TIMEOUT_RANGE,
                        "the longest one call may take, retries included",
                    )
                    .map_err(|m| err(line, m))?;
                }
                "max_retries" => {
                    let n = v
                        .as_integer()
                        .filter(|n| (0..=i64::from(MAX_RETRIES)).contains(n))
                        .ok_or_else(|| {
                            err(
                                line,
                                format!("`[models].max_retries` must be a whole number from 0 to {MAX_RETRIES}: the retries after a failed first attempt"),
                            )
                        })?;
                    cfg.settings.max_retries = n as u32;
                }
                "max_tool_turns" => {
                    let n = v
                        .as_integer()
                        .filter(|n| (1..=1000).contains(n))
                        .ok_or_else(|| {
                            err(
                                line,
                                "`[models].max_tool_turns` must be a whole number from 1 to 1000"
                                    .into(),
                            )
                        })?;
                    cfg.max_tool_turns = Some(n as u32);
                }
                "default" => default_spec = Some(v),
                _ => {
                    let entry =
                        entry_from(v).map_err(|m| err(line, format!("`[models].{k}`: {m}")))?;
                    cfg.models.push(ModelEntryNamed {
                        key: k.clone(),
                        entry,
                    });
                }
            }
        }
        if let Some(v) = default_spec {
            let line = line_of(text, "default", Some("models"));
            let entry = match v.as_str() {
                // `default = "fast"` names another entry.
                Some(name) if cfg.models.iter().any(|m| m.key == name) => {
                    cfg.default_alias = Some(name.to_string());
                    cfg.models
                        .iter()
                        .find(|m| m.key == name)
                        .map(|m| m.entry.clone())
                        .expect("checked above")
                }
                _ => entry_from(v).map_err(|m| err(line, format!("`[models].default`: {m}")))?,
            };
            cfg.default_model = Some(ModelEntryNamed {
                key: "default".into(),
                entry,
            });
        }
        Ok(cfg)
    }

    /// The entry a call uses: the one it names, else the default, else the built-in default.
    pub fn resolve(&self, name: Option<&str>) -> Result<ModelEntry, String> {
        match name {
            Some(n) => self
                .models
                .iter()
                .chain(self.default_model.iter())
                .find(|m| m.key == n)
                .map(|m| m.entry.clone())
                .ok_or_else(|| {
                    let known: Vec<&str> = self.models.iter().map(|m| m.key.as_str()).collect();
                    format!(
                        "no model entry `{n}` in {} (known: {})",
                        self.where_(),
                        if known.is_empty() {
                            "none".to_string()
                        } else {
                            known.join(", ")
                        }
                    )
                }),
            None => match &self.default_model {
                Some(m) => Ok(m.entry.clone()),
                None => match self.models.as_slice() {
                    [only] => Ok(only.entry.clone()),
                    _ => ModelEntry::parse_shorthand(BUILTIN_DEFAULT).map_err(|e| e.to_string()),
                },
            },
        }
    }

    fn where_(&self) -> String {
        match &self.path {
            Some(p) => format!("`[models]` of {}", p.display()),
            None => "kora.toml (none was found)".to_string(),
        }
    }
}

/// A number of seconds for `[models].key`, inside `range` (NaN, infinities and `1e30` are not).
fn seconds(v: &toml::Value, key: &str, range: (f64, f64), what: &str) -> Result<f64, String> {
    v.as_float()
        .or_else(|| v.as_integer().map(|i| i as f64))
        .filter(|s| *s >= range.0 && *s <= range.1)
        .ok_or_else(|| {
            format!(
                "`[models].{key}` must be a number of seconds from {} to {} ({what})",
                range.0, range.1
            )
        })
}

/// An entry written out in full (`{ name, endpoint, ... }`) or as `provider:model`.
fn entry_from(v: &toml::Value) -> Result<ModelEntry, String> {
    if let Some(s) = v.as_str() {
        return ModelEntry::parse_shorthand(s).map_err(|e| e.to_string());
    }
    let Some(t) = v.as_table() else {
        return Err(
            "expected `{ name = \"...\", endpoint = \"...\" }` or a \"provider:model\" string"
                .into(),
        );
    };
    for k in t.keys() {
        if !ENTRY_KEYS.contains(&k.as_str()) {
            return Err(format!(
                "unknown key `{k}` (known: {})",
                ENTRY_KEYS.join(", ")
            ));
        }
    }
    let get = |k: &str| -> Result<Option<String>, String> {
        match t.get(k) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(|s| Some(s.to_string()))
                .ok_or_else(|| format!("`{k}` must be a string")),
        }
    };
    let name = get("name")?.ok_or("missing `name` (the model's name as its provider spells it)")?;
    let endpoint = get("endpoint")?.ok_or("missing `endpoint` (the provider's base URL)")?;
    let mut entry = ModelEntry::new(name, endpoint);
    entry.api_key_env = get("api_key_env")?;
    if let Some(api) = get("api")? {
        entry.api = Api::parse(&api).map_err(|e| e.to_string())?;
    }
    if let Some(s) = get("structured")? {
        entry.structured = Structured::parse(&s).map_err(|e| e.to_string())?;
    }
    if let Some(v) = t.get("max_output_tokens") {
        entry.max_output_tokens = Some(
            v.as_integer()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n > 0)
                .ok_or("`max_output_tokens` must be a whole number above 0")?,
        );
    }
    Ok(entry)
}

/// The line of `key` inside `[table]` (or of the table `[key]` itself when `table` is `None`),
/// the key written bare or quoted: for messages only. `kora-pkg` reads its manifest's lines
/// with it too.
pub fn line_of(text: &str, key: &str, table: Option<&str>) -> Option<usize> {
    let mut in_table = table.is_none();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if let Some(name) = t.strip_prefix('[') {
            let name = name.trim_end().trim_end_matches(']').trim();
            if table.is_none() && name == key {
                return Some(i + 1);
            }
            in_table = table == Some(name);
            continue;
        }
        if in_table {
            let rest = t
                .strip_prefix(key)
                .or_else(|| t.strip_prefix(&format!("\"{key}\"")));
            if let Some(rest) = rest {
                if rest.trim_start().starts_with('=') {
                    return Some(i + 1);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<Config, ConfigError> {
        Config::parse(Path::new("kora.toml"), s)
    }

    #[test]
    fn entries_default_and_settings() {
        let c = parse(
            "[models]\ndefault = \"fast\"\ntimeout_secs = 5\nmax_retries = 0\nfast = { name = \"m\", endpoint = \"http://127.0.0.1:9/v1\" }\n",
        )
        .expect("valid");
        assert_eq!(c.settings.max_retries, 0);
        assert_eq!(c.resolve(None).expect("default").name, "m");
        assert_eq!(
            c.resolve(Some("fast")).expect("named").endpoint,
            "http://127.0.0.1:9/v1"
        );
    }

    #[test]
    fn an_output_cap_is_a_positive_whole_number() {
        let c = parse("[models]\nfast = { name = \"m\", endpoint = \"http://127.0.0.1:9/v1\", max_output_tokens = 256 }\n")
            .expect("valid");
        assert_eq!(
            c.resolve(None).expect("only entry").max_output_tokens,
            Some(256)
        );
        for bad in ["0", "-3", "\"many\"", "1.5"] {
            let e = parse(&format!(
                "[models]\nfast = {{ name = \"m\", endpoint = \"x\", max_output_tokens = {bad} }}\n"
            ))
            .expect_err(bad);
            assert!(e.message.contains("max_output_tokens"), "{}", e.message);
            assert_eq!(e.line, Some(2));
        }
    }

    #[test]
    fn unknown_keys_name_key_and_line() {
        let e = parse("[models]\nfast = { name = \"m\", endpiont = \"x\" }\n").expect_err("strict");
        assert_eq!(e.line, Some(2));
        assert!(e.message.contains("endpiont"), "{}", e.message);
        let e = parse("[modles]\n").expect_err("strict");
        assert!(e.message.contains("[modles]"));
        assert_eq!(e.line, Some(1));
    }

    #[test]
    fn the_formatter_table_is_accepted_and_does_not_steer_a_run() {
        let c =
            parse("[models]\nfast = \"ollama:llama3\"\n[fmt]\nline_length = 100\n").expect("valid");
        assert!(!c.table_digests.contains_key("fmt"));
        assert!(c.table_digests.contains_key("models"));
    }

    #[test]
    fn timeouts_and_retries_must_lie_in_their_ranges() {
        let c = parse("[models]\ntimeout_secs = 2.5\ncall_timeout_secs = 600\nmax_retries = 10\n")
            .expect("valid");
        assert_eq!(c.settings.timeout_secs, 2.5);
        assert_eq!(c.settings.call_timeout_secs, 600.0);
        assert_eq!(c.settings.call_timeout().as_secs(), 600);
        for (key, bad) in [
            ("timeout_secs", "1e30"),
            ("timeout_secs", "0"),
            ("timeout_secs", "-1"),
            ("timeout_secs", "nan"),
            ("timeout_secs", "inf"),
            ("timeout_secs", "\"60\""),
            ("call_timeout_secs", "0.01"),
            ("call_timeout_secs", "100000"),
            ("max_retries", "11"),
            ("max_retries", "-1"),
            ("max_retries", "2.0"),
        ] {
            let e = parse(&format!("[models]\n\n{key} = {bad}\n")).expect_err(bad);
            assert_eq!(e.line, Some(3), "{key} = {bad}: {}", e.message);
            assert!(e.message.contains(key), "{}", e.message);
            assert!(e.message.contains(" to "), "names the range: {}", e.message);
            assert!(e.to_string().starts_with("kora.toml:3: "), "{e}");
        }
    }

    #[test]
    fn telemetry_names_a_collector() {
        let c =
            parse("[telemetry]\nendpoint = \"http://localhost:4318\"\nprotocol = \"http/json\"\n")
                .expect("valid");
        assert_eq!(
            c.telemetry.endpoint.as_deref(),
            Some("http://localhost:4318")
        );
        assert_eq!(c.telemetry.protocol.as_deref(), Some("http/json"));
        for (bad, line) in [
            ("endpoint = \"localhost:4318\"", 2),
            ("protocol = \"grpc\"", 2),
            ("headers = \"x\"", 2),
        ] {
            let e = parse(&format!("[telemetry]\n{bad}\n")).expect_err(bad);
            assert_eq!(e.line, Some(line), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn unknown_model_name_is_an_error_listing_known_ones() {
        let c = parse("[models]\nfast = \"ollama:llama3\"\n").expect("valid");
        let e = c.resolve(Some("slow")).expect_err("unknown");
        assert!(e.contains("fast"), "{e}");
    }
}
