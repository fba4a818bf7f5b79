//! External modules: the seam through which `use mcp NAME` and `use python MODULE` reach code
//! the runtime does not contain. The embedder (kora-cli) registers one `Provider` per kind
//! (`provider.rs`); calls cross it as `Data` (`data.rs`), plain values that travel between
//! threads and record as JSON, converted from and to `Value` at one place each (`convert.rs`).
//!
//! May use: `config`, `value`, `labels`, `durable`, `observe`. Must not know: the interpreter
//! (a call arrives as plain data), nor any provider: the runtime names no MCP client and no
//! Python worker. The interpreter's side (effects, mocks, cassettes, spans, the tool loop) is
//! `agents/external_call.rs` and `agents/foreign_tool.rs`.

pub mod convert;
pub mod data;
pub mod provider;

pub use data::Data;
pub use provider::{find_tool_named, Call, Provider, Registry, Reply, ToolInfo};
