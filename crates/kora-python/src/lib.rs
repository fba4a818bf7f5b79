//! Kora's Python sidecar: `use python MODULE as alias` runs `MODULE.f(...)` in a separate
//! Python process, data in and data out, through the runtime's external-module seam.
//!
//! Chosen over embedding CPython (the record's "Python via sidecar worker"): Kora keeps no GIL
//! and N workers run in parallel; a call is atomic, so a journal checkpoints around it; the
//! boundary is explicit, so labels stop at it; and a program without `use python` needs no
//! Python at all. The parts: `[python]` read strictly (`config.rs`), the worker module Kora
//! ships and writes to its cache (`worker.py`, `script.rs`), length-prefixed JSON frames
//! (`frame.rs`), one worker process (`worker.rs`), the pool that lends workers to calls
//! (`pool.rs`) and the runtime `Provider` (`provider.rs`).

pub mod config;
pub mod frame;
pub mod pool;
pub mod provider;
pub mod script;
pub mod worker;

pub use config::PythonConfig;
pub use provider::PythonProvider;
