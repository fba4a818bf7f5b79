//! Kora's packages: a manifest's `[package]` and `[dependencies]` (`manifest.rs`), resolving
//! `use pkg` against the manifest that wrote it and granting each package what its importer
//! said (`resolve.rs`), fetching what a program reaches in parallel before the walk asks
//! for it (`prefetch.rs`), the sources a check reads through (`project.rs`).
//!
//! The runtime names none of this: the checker asks through `kora_check::Packages`, and the
//! grants reach the effect pipeline as a `kora_runtime::grants::GrantCheck` the CLI attaches.
//! The commands that edit the manifest and the lock are `edit.rs` and `ops.rs`; `profile.rs`
//! is what `kora update` compares between two versions.

pub mod edit;
mod fan_out;
pub mod git;
pub mod helper_decl;
pub mod lock;
pub mod manifest;
pub mod ops;
mod prefetch;
pub mod profile;
pub mod project;
pub mod resolve;
pub mod sums;
pub mod tree_hash;

pub use manifest::{Dependency, GitRef, Manifest, ManifestError, Source};
pub use project::Project;
