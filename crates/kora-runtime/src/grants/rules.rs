//! Which grant covers which effect kind: the registry a new effect kind joins.

use crate::durable::effect::Kind;

/// How a grant key is written in `kora.toml` and how it covers an effect's target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `fs = ["./data"]`: directories, relative to the manifest that grants them.
    Paths,
    /// `net = ["api.example.com"]`: host names (`*.example.com` covers subdomains).
    Hosts,
    /// `mcp = ["github"]`: names, compared exactly.
    Names,
    /// `sql = true`: all or nothing.
    Flag,
}

/// Every grant key a manifest may write, and its shape.
pub const KEYS: &[(&str, Shape)] = &[
    ("fs", Shape::Paths),
    ("net", Shape::Hosts),
    ("sql", Shape::Flag),
    ("mcp", Shape::Names),
    ("python", Shape::Flag),
    ("env", Shape::Flag),
    ("helper", Shape::Flag),
];

/// For each effect kind that reaches outside the program, the key that must grant it. Kinds
/// missing here (model calls, output, the clock, randomness, notes) need no grant: they act
/// on nothing a package could take from its importer.
pub const RULES: &[(Kind, &str)] = &[
    (Kind::FsRead, "fs"),
    (Kind::FsWrite, "fs"),
    (Kind::Http, "net"),
    (Kind::SqlRead, "sql"),
    (Kind::SqlWrite, "sql"),
    (Kind::Mcp, "mcp"),
    (Kind::Python, "python"),
    (Kind::Env, "env"),
    // A helper is compiled code in another process: the importer decides whether it runs.
    (Kind::Helper, "helper"),
];

pub fn key_for(kind: Kind) -> Option<&'static str> {
    RULES.iter().find(|(k, _)| *k == kind).map(|(_, key)| *key)
}

pub fn shape_of(key: &str) -> Option<Shape> {
    KEYS.iter().find(|(k, _)| *k == key).map(|(_, s)| *s)
}
