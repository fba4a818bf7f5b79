//! The provider seam: what an embedder implements so `use KIND NAME` works, and the run's registry of them.
//!
//! A provider owns its processes and connections (an MCP server, a pool of Python workers) and
//! is shared by every branch of a run, so it is `Send + Sync` and takes plain `Data`. Every
//! call is given a deadline; a provider that cannot answer by then says `Failed`, never hangs.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value as Json;

use crate::external::Data;

/// How one call of an external member ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// The member ran and answered.
    Ok(Data),
    /// The member ran and reported a failure of its own (an MCP `isError` result, a Python
    /// exception): an answer a program or a model may act on.
    Err(String),
    /// No answer: a timeout, a crash, a protocol error, a setup problem. Whether the member ran
    /// is unknown, so it is never retried.
    Failed(String),
}

/// One tool a module offers (an MCP server's `tools/list` entry).
#[derive(Clone, Debug, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub description: String,
    /// The JSON Schema of its arguments, as the server gave it.
    pub input_schema: Json,
}

impl ToolInfo {
    pub fn to_json(&self) -> Json {
        serde_json::json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": self.input_schema,
        })
    }

    pub fn from_json(j: &Json) -> Option<ToolInfo> {
        Some(ToolInfo {
            name: j.get("name")?.as_str()?.to_string(),
            description: j
                .get("description")
                .and_then(Json::as_str)
                .unwrap_or("")
                .to_string(),
            input_schema: j
                .get("inputSchema")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({"type": "object"})),
        })
    }
}

/// The tool `member` names: its exact name, else one whose `-` and `.` read as `_` (a Kora
/// name cannot hold a dash, so `get_sum` calls `get-sum`).
pub fn find_tool_named<'t>(tools: &'t [ToolInfo], member: &str) -> Option<&'t ToolInfo> {
    kora_check::lower_external::find_tool(tools, |t| &t.name, member)
}

/// One call, as it crosses the seam.
#[derive(Debug)]
pub struct Call<'a> {
    /// The server or module (`fs`, `statistics`).
    pub module: &'a str,
    /// The member as the program wrote it (`read_file`, `mean`).
    pub member: &'a str,
    pub args: Vec<Data>,
    pub kwargs: Vec<(String, Data)>,
    /// The run's own limit (a budget's time): the provider answers `Failed` by then at the
    /// latest, and sooner when its own timeout is shorter.
    pub deadline: Option<Instant>,
}

/// What an embedder registers for one kind of external module.
pub trait Provider: Send + Sync {
    /// The word after `use`: `mcp`, `python`.
    fn kind(&self) -> &'static str;

    /// Whether module `name` is set up, checked before the run starts; `Err` says what to fix.
    fn check(&self, name: &str) -> Result<(), String>;

    /// The sink a `declassify x for SINK:` names to let a classified value reach `name`.
    fn sink(&self, name: &str) -> String;

    /// The tools module `name` offers, starting it if needed. `Err`: it could not be listed.
    fn tools(&self, name: &str, deadline: Option<Instant>) -> Result<Vec<ToolInfo>, String>;

    /// Whether a call reaches nothing outside the machine (Python), so a test replaying
    /// from a cassette that lacks it runs it rather than refusing it.
    fn local(&self) -> bool {
        false
    }

    /// Calls one member. Never retried by the runtime: a provider may retry starting and
    /// handshaking, never the call itself.
    fn call(&self, call: Call<'_>) -> Reply;
}

/// The providers of a run, by kind; shared with every `parallel for` branch.
#[derive(Clone, Default)]
pub struct Registry {
    providers: Vec<Arc<dyn Provider>>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kinds: Vec<&str> = self.providers.iter().map(|p| p.kind()).collect();
        write!(f, "Registry({kinds:?})")
    }
}

impl Registry {
    pub fn register(&mut self, p: Arc<dyn Provider>) {
        self.providers.retain(|q| q.kind() != p.kind());
        self.providers.push(p);
    }

    pub fn get(&self, kind: &str) -> Option<&Arc<dyn Provider>> {
        self.providers.iter().find(|p| p.kind() == kind)
    }

    /// Whether `sink` is the sink of some module of a registered kind (asked of `[mcp.NAME]` names).
    pub fn kinds(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.providers.iter().map(|p| p.kind())
    }
}
