//! The MCP servers of a run, as the runtime's `Provider` for `use mcp NAME`.

use std::path::Path;
use std::time::Instant;

use serde_json::{Map, Value as Json};

use kora_runtime::config::{Config, ConfigError};
use kora_runtime::external::provider::Call;
use kora_runtime::external::{Data, Provider, Reply, ToolInfo};

use crate::config::McpConfig;
use crate::server::Server;

pub struct McpProvider {
    config: McpConfig,
    servers: Vec<Server>,
}

impl McpProvider {
    /// Reads `[mcp]`; servers start only when a program first uses them.
    pub fn from_config(cfg: &Config, project: &Path) -> Result<McpProvider, ConfigError> {
        Ok(McpProvider::new(McpConfig::from_config(cfg, project)?))
    }

    pub fn new(config: McpConfig) -> McpProvider {
        let servers = config.servers.iter().cloned().map(Server::new).collect();
        McpProvider { config, servers }
    }

    pub fn warnings(&self) -> &[String] {
        &self.config.warnings
    }

    pub fn server(&self, name: &str) -> Option<&Server> {
        self.servers.iter().find(|s| s.cfg.name == name)
    }

    fn missing(&self, name: &str) -> String {
        let at = self.config.path.as_ref().map_or_else(
            || "kora.toml (none was found)".to_string(),
            |p| p.display().to_string(),
        );
        let known: Vec<&str> = self.servers.iter().map(|s| s.cfg.name.as_str()).collect();
        format!(
            "no `[mcp.{name}]` in {at}{}; add one with `command = \"...\"` (a server Kora starts) or `url = \"...\"`",
            if known.is_empty() {
                String::new()
            } else {
                format!(" (its servers: {})", known.join(", "))
            }
        )
    }

    /// Stops every server this run started.
    pub fn stop_all(&self) {
        for s in &self.servers {
            s.stop();
        }
    }
}

impl Drop for McpProvider {
    fn drop(&mut self) {
        self.stop_all();
    }
}

impl Provider for McpProvider {
    fn kind(&self) -> &'static str {
        "mcp"
    }

    fn check(&self, name: &str) -> Result<(), String> {
        self.server(name)
            .map(|_| ())
            .ok_or_else(|| self.missing(name))
    }

    fn sink(&self, name: &str) -> String {
        name.to_string()
    }

    fn tools(&self, name: &str, deadline: Option<Instant>) -> Result<Vec<ToolInfo>, String> {
        let s = self.server(name).ok_or_else(|| self.missing(name))?;
        s.tools(s.deadline(deadline))
    }

    fn call(&self, call: Call<'_>) -> Reply {
        let Some(s) = self.server(call.module) else {
            return Reply::Failed(self.missing(call.module));
        };
        // An MCP tool takes one object of named arguments: keywords, or one dict.
        let arguments = match (call.args.as_slice(), call.kwargs.is_empty()) {
            ([], _) => {
                let mut m = Map::new();
                for (k, v) in &call.kwargs {
                    match v.to_plain_json() {
                        Ok(j) => {
                            m.insert(k.clone(), j);
                        }
                        Err(why) => return Reply::Err(format!("bad argument `{k}`: {why}")),
                    }
                }
                Json::Object(m)
            }
            ([d @ Data::Dict(_)], true) => match d.to_plain_json() {
                Ok(j) => j,
                Err(why) => return Reply::Err(format!("bad arguments: {why}")),
            },
            _ => {
                return Reply::Err(format!(
                    "the MCP tool `{}` takes its arguments by name: `{}(name=value, ...)`",
                    call.member, call.member
                ))
            }
        };
        s.call(call.member, arguments, call.deadline)
    }
}
