//! `[mcp]` and `[mcp.NAME]` of kora.toml, read strictly: an unknown key, a wrong type, both or
//! neither transport is an error naming the key and its line.
//!
//! ```toml
//! [mcp]
//! timeout_secs = 60                      # every request's deadline, unless a server says
//!
//! [mcp.fs]                               # stdio: a command Kora starts
//! command = "npx"
//! args = ["-y", "@modelcontextprotocol/server-filesystem", "./data"]
//! env = { LOG_LEVEL = "warn", TOKEN = "${FS_TOKEN}" }
//!
//! [mcp.github]                           # Streamable HTTP: a server already running
//! url = "https://example.invalid/mcp"
//! headers = { Authorization = "Bearer ${GITHUB_TOKEN}" }
//! timeout_secs = 120
//! ```
//!
//! Secrets never sit in the file: `${NAME}` in `env` and `headers` values is read from the
//! environment when the server starts, and a missing one is an error naming it. A timeout of
//! zero or less is clamped to the default with a warning, never honoured: a tool call without
//! a deadline can stop a program forever.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kora_runtime::config::{line_of, Config, ConfigError};

/// `[mcp] timeout_secs` when kora.toml does not set it.
pub const DEFAULT_TIMEOUT_SECS: f64 = 60.0;

/// How Kora reaches one server.
#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        /// Values may name environment variables as `${NAME}`.
        env: BTreeMap<String, String>,
    },
    Http {
        url: String,
        /// Values may name environment variables as `${NAME}`.
        headers: BTreeMap<String, String>,
    },
}

/// One `[mcp.NAME]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    pub timeout: Duration,
    /// Where a stdio server runs and relative paths resolve: the project folder.
    pub dir: PathBuf,
    /// Where a stdio server's standard error goes.
    pub log: PathBuf,
}

/// Every server of a kora.toml, and the warnings reading it gave.
#[derive(Clone, Debug, Default)]
pub struct McpConfig {
    pub servers: Vec<ServerConfig>,
    pub warnings: Vec<String>,
    /// The kora.toml they came from, for messages.
    pub path: Option<PathBuf>,
}

const TOP_KEYS: &[&str] = &["timeout_secs"];
const SERVER_KEYS: &[&str] = &["command", "args", "env", "url", "headers", "timeout_secs"];

impl McpConfig {
    pub fn server(&self, name: &str) -> Option<&ServerConfig> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// Reads `[mcp]` from a loaded configuration; `project` is where servers run and log.
    pub fn from_config(cfg: &Config, project: &Path) -> Result<McpConfig, ConfigError> {
        let Some(raw) = cfg.raw.as_ref() else {
            return Ok(McpConfig::default());
        };
        let path = cfg
            .path
            .clone()
            .unwrap_or_else(|| PathBuf::from("kora.toml"));
        McpConfig::parse(&path, &raw.0, &raw.1, project)
    }

    pub fn parse(
        path: &Path,
        text: &str,
        table: &toml::Table,
        project: &Path,
    ) -> Result<McpConfig, ConfigError> {
        let err = |line: Option<usize>, message: String| ConfigError {
            path: path.to_path_buf(),
            line,
            message,
        };
        let mut out = McpConfig {
            path: Some(path.to_path_buf()),
            ..McpConfig::default()
        };
        let Some(mcp) = table.get("mcp").and_then(|m| m.as_table()) else {
            return Ok(out);
        };
        let mut default = DEFAULT_TIMEOUT_SECS;
        if let Some(v) = mcp.get("timeout_secs") {
            let line = line_of(text, "timeout_secs", Some("mcp"));
            default = timeout(
                v,
                "[mcp].timeout_secs",
                DEFAULT_TIMEOUT_SECS,
                &mut out.warnings,
            )
            .map_err(|m| err(line, m))?;
        }
        for (k, v) in mcp {
            if TOP_KEYS.contains(&k.as_str()) {
                continue;
            }
            let table_name = format!("mcp.{k}");
            let Some(server) = v.as_table() else {
                return Err(err(
                    line_of(text, k, Some("mcp")),
                    format!(
                        "unknown key `[mcp].{k}` (known: {}); a server is a table, `[mcp.{k}]`",
                        TOP_KEYS.join(", ")
                    ),
                ));
            };
            let at = |key: &str| {
                line_of(text, key, Some(&table_name)).or_else(|| line_of(text, &table_name, None))
            };
            for key in server.keys() {
                if !SERVER_KEYS.contains(&key.as_str()) {
                    return Err(err(
                        at(key),
                        format!(
                            "unknown key `[mcp.{k}].{key}` (known: {})",
                            SERVER_KEYS.join(", ")
                        ),
                    ));
                }
            }
            let string = |key: &str| -> Result<Option<String>, ConfigError> {
                match server.get(key) {
                    None => Ok(None),
                    Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
                    Some(_) => Err(err(
                        at(key),
                        format!("`[mcp.{k}].{key}` must be a non-empty string"),
                    )),
                }
            };
            let map = |key: &str| -> Result<BTreeMap<String, String>, ConfigError> {
                let mut m = BTreeMap::new();
                match server.get(key) {
                    None => {}
                    Some(toml::Value::Table(t)) => {
                        for (name, v) in t {
                            let Some(s) = v.as_str() else {
                                return Err(err(
                                    at(key),
                                    format!("`[mcp.{k}].{key}.{name}` must be a string"),
                                ));
                            };
                            m.insert(name.clone(), s.to_string());
                        }
                    }
                    Some(_) => {
                        return Err(err(
                            at(key),
                            format!("`[mcp.{k}].{key}` must be a table of strings, e.g. `{key} = {{ NAME = \"value\" }}`"),
                        ))
                    }
                }
                Ok(m)
            };
            let transport = match (string("command")?, string("url")?) {
                (Some(_), Some(_)) => {
                    return Err(err(
                        at("url"),
                        format!("`[mcp.{k}]` has both `command` (stdio) and `url` (HTTP): keep one"),
                    ))
                }
                (None, None) => {
                    return Err(err(
                        line_of(text, &table_name, None),
                        format!("`[mcp.{k}]` needs `command = \"...\"` (a server Kora starts) or `url = \"...\"` (one already running)"),
                    ))
                }
                (Some(command), None) => {
                    if server.contains_key("headers") {
                        return Err(err(
                            at("headers"),
                            format!("`[mcp.{k}].headers` needs `url`: a stdio server takes `env`"),
                        ));
                    }
                    let args = match server.get("args") {
                        None => Vec::new(),
                        Some(toml::Value::Array(a)) => a
                            .iter()
                            .map(|x| x.as_str().map(str::to_string))
                            .collect::<Option<Vec<_>>>()
                            .ok_or_else(|| {
                                err(at("args"), format!("`[mcp.{k}].args` must be a list of strings"))
                            })?,
                        Some(_) => {
                            return Err(err(
                                at("args"),
                                format!("`[mcp.{k}].args` must be a list of strings"),
                            ))
                        }
                    };
                    Transport::Stdio {
                        command,
                        args,
                        env: map("env")?,
                    }
                }
                (None, Some(url)) => {
                    if !(url.starts_with("http://") || url.starts_with("https://")) {
                        return Err(err(
                            at("url"),
                            format!("`[mcp.{k}].url` must start with http:// or https://"),
                        ));
                    }
                    if server.contains_key("env") || server.contains_key("args") {
                        return Err(err(
                            at(if server.contains_key("env") { "env" } else { "args" }),
                            format!("`[mcp.{k}]` reaches a running server by `url`: `args` and `env` belong to a `command`"),
                        ));
                    }
                    Transport::Http {
                        url,
                        headers: map("headers")?,
                    }
                }
            };
            let secs = match server.get("timeout_secs") {
                None => default,
                Some(v) => timeout(
                    v,
                    &format!("[mcp.{k}].timeout_secs"),
                    default,
                    &mut out.warnings,
                )
                .map_err(|m| err(at("timeout_secs"), m))?,
            };
            out.servers.push(ServerConfig {
                name: k.clone(),
                transport,
                timeout: Duration::from_secs_f64(secs),
                dir: project.to_path_buf(),
                log: project.join(".kora").join("mcp").join(format!("{k}.log")),
            });
        }
        Ok(out)
    }
}

/// A timeout setting: positive seconds; zero or less is clamped to `default` with a warning.
fn timeout(
    v: &toml::Value,
    key: &str,
    default: f64,
    warnings: &mut Vec<String>,
) -> Result<f64, String> {
    let secs = v
        .as_float()
        .or_else(|| v.as_integer().map(|i| i as f64))
        .filter(|s| s.is_finite())
        .ok_or_else(|| format!("`{key}` must be a number of seconds"))?;
    if secs <= 0.0 {
        warnings.push(format!(
            "`{key} = {secs}` is not a deadline: a tool call needs one, so {default} s is used"
        ));
        return Ok(default);
    }
    // Past a day a deadline protects nothing; it also keeps `Duration` in range.
    Ok(secs.min(86_400.0))
}

/// `${NAME}` in a value, read from the environment; `Err` names the variable that is missing.
pub fn expand(value: &str, what: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("{what}: `${{` without a closing `}}`"));
        };
        let name = &after[..end];
        match std::env::var(name) {
            Ok(v) => out.push_str(&v),
            Err(_) => {
                return Err(format!(
                    "{what} names the environment variable `{name}`, which is not set; set it before running"
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<McpConfig, ConfigError> {
        let table: toml::Table = text.parse().expect("toml");
        McpConfig::parse(Path::new("kora.toml"), text, &table, Path::new("/p"))
    }

    #[test]
    fn a_stdio_and_an_http_server_read_with_their_timeouts() {
        let c = parse(
            "[mcp]\ntimeout_secs = 5\n\n[mcp.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"x\"]\nenv = { A = \"1\" }\n\n[mcp.gh]\nurl = \"http://127.0.0.1:1/mcp\"\nheaders = { Authorization = \"Bearer ${T}\" }\ntimeout_secs = 2.5\n",
        )
        .expect("valid");
        assert_eq!(c.servers.len(), 2);
        assert_eq!(c.server("fs").expect("fs").timeout, Duration::from_secs(5));
        assert_eq!(
            c.server("gh").expect("gh").timeout,
            Duration::from_millis(2500)
        );
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn mistakes_name_the_key_and_its_line() {
        for (text, key, line) in [
            ("[mcp.fs]\ncommand = \"x\"\nargz = []\n", "argz", 3),
            ("[mcp.fs]\nargs = []\n", "needs `command", 1),
            ("[mcp.fs]\ncommand = \"x\"\nurl = \"http://h\"\n", "both", 3),
            ("[mcp.fs]\nurl = \"ftp://h\"\n", "http://", 2),
            ("[mcp]\nservers = 1\n", "servers", 2),
            (
                "[mcp.fs]\ncommand = \"x\"\nargs = \"-y\"\n",
                "list of strings",
                3,
            ),
            (
                "[mcp.fs]\ncommand = \"x\"\ntimeout_secs = \"soon\"\n",
                "seconds",
                3,
            ),
        ] {
            let e = parse(text).expect_err(text);
            assert!(e.message.contains(key), "{text:?}: {}", e.message);
            assert_eq!(e.line, Some(line), "{text:?}: {}", e.message);
        }
    }

    #[test]
    fn a_zero_or_negative_timeout_is_clamped_with_a_warning() {
        let c = parse("[mcp]\ntimeout_secs = 0\n[mcp.fs]\ncommand = \"x\"\ntimeout_secs = -3\n")
            .expect("valid");
        assert_eq!(c.server("fs").expect("fs").timeout, Duration::from_secs(60));
        assert_eq!(c.warnings.len(), 2, "{:?}", c.warnings);
    }

    #[test]
    fn variables_expand_and_a_missing_one_is_named() {
        std::env::set_var("KORA_MCP_TEST_TOKEN", "s3cret");
        assert_eq!(
            expand("Bearer ${KORA_MCP_TEST_TOKEN}!", "h").expect("set"),
            "Bearer s3cret!"
        );
        let e = expand("${KORA_MCP_NOT_SET_EVER}", "[mcp.gh].headers.Authorization")
            .expect_err("missing");
        assert!(
            e.contains("KORA_MCP_NOT_SET_EVER") && e.contains("headers.Authorization"),
            "{e}"
        );
    }
}
