//! `parallel for`: the fan-out over one fresh interpreter per branch, results folded back in
//! input order, lazy module variables (`fan_out.rs`), the branch threads (`pool.rs`), and the
//! loop as one journaled effect (`record.rs`). Data crosses only as `value::portable`
//! snapshots.
//!
//! May use: every folder below it. It is the top of the runtime: nothing imports it except
//! `eval/interp.rs`, which keeps a branch's lazily copied module variables.

pub(crate) mod fan_out;
pub(crate) mod pool;
pub(crate) mod record;
