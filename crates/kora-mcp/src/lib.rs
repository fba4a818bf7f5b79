//! Kora's MCP client: `use mcp NAME as alias` reaches the server `[mcp.NAME]` of kora.toml
//! through the runtime's external-module seam (`kora_runtime::external::Provider`).
//!
//! Three rules, all forced by one fact, a tool call is a side effect someone else runs
//! (the record's "A tool server that does not answer is Failed, and is never called twice"):
//! every request has a deadline (transports read on their own threads and the caller waits
//! with one); a tool call is never retried (starting a server and shaking hands are); a reply
//! that comes after its deadline is matched by id and dropped. A server that dies is started
//! again on the next call, never in the middle of one.
//!
//! The parts: `[mcp]` settings read strictly (`config.rs`), JSON-RPC messages and their routing
//! to waiting requests (`jsonrpc.rs`, `router.rs`), the two transports (`stdio.rs`, `http.rs`),
//! one connection's handshake and requests (`session.rs`), a server started lazily and again
//! after a death (`server.rs`), input schemas checked before sending (`schema_check.rs`), a
//! tool result read as an answer (`result.rs`), and the provider the CLI registers
//! (`provider.rs`).

pub mod config;
pub mod http;
pub mod jsonrpc;
pub mod provider;
pub mod result;
pub mod router;
pub mod schema_check;
pub mod server;
pub mod session;
pub mod sse;
pub mod stdio;

pub use config::{McpConfig, ServerConfig, Transport};
pub use provider::McpProvider;

/// The protocol versions this client speaks, newest first: it asks for the first.
pub const PROTOCOL_VERSIONS: &[&str] = &["2025-06-18", "2025-03-26", "2024-11-05"];
