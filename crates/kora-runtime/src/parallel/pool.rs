//! The threads `parallel for` branches run on: a pool sized for branches that wait, not for cores.
//!
//! A branch of an agent program spends its time waiting: on a model, on HTTP, on
//! a database, on the journal's fsync. A pool with one thread per core keeps only
//! that many branches in flight, so on a 2-core machine a fan-out of model calls
//! made two at a time and, in a durable run, no sync ever had a second record to
//! cover. The pool therefore has at least `WAITING_WIDTH` threads. A body that
//! only computes gets no faster past the core count, and loses little: the OS
//! shares the cores among the extra threads, and branches are independent.
//!
//! It is a pool of its own rather than rayon's global one, so a host embedding the
//! runtime keeps its global pool as it configured it. A nested `parallel for` runs on
//! the same pool (rayon's scope uses the pool of the thread it is called from), so
//! nesting never multiplies threads.

use std::sync::OnceLock;

/// How many branches may wait at once even on a machine with fewer cores.
pub const WAITING_WIDTH: usize = 16;

/// Room for deep recursion in a branch, as on the main interpreter thread: the
/// interpreter recurses on the host stack and allows 1000 nested calls. Address
/// space only; pages are touched as they are used.
const STACK_BYTES: usize = 1 << 30;

/// The pool, built on first use; `None` if the OS refused to start its threads.
pub(crate) fn pool() -> Option<&'static rayon::ThreadPool> {
    static POOL: OnceLock<Option<rayon::ThreadPool>> = OnceLock::new();
    POOL.get_or_init(|| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(width(cores(), std::env::var("KORA_PARALLEL_WIDTH").ok()))
            .thread_name(|i| format!("kora-branch-{i}"))
            .stack_size(STACK_BYTES)
            .build()
            .ok()
    })
    .as_ref()
}

/// How many branches of a `parallel for` run at once (what a provider sizes its pool by).
pub fn branch_width() -> usize {
    width(cores(), std::env::var("KORA_PARALLEL_WIDTH").ok())
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The pool's width: `KORA_PARALLEL_WIDTH` if it is a valid width, else the larger of
/// the core count and `WAITING_WIDTH`. A bad setting is reported before a run starts
/// (`check_width_setting`), so falling back here only covers a host embedding the runtime.
fn width(cores: usize, asked: Option<String>) -> usize {
    match asked.map(|a| parse_width(&a)) {
        Some(Ok(n)) => n,
        _ => cores.max(WAITING_WIDTH),
    }
}

/// The most threads a setting may ask for: far past any useful width, short of what
/// would exhaust the address space with 1 GiB stacks.
const MAX_WIDTH: usize = 4096;

fn parse_width(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_WIDTH).contains(&n) => Ok(n),
        _ => Err(format!(
            "KORA_PARALLEL_WIDTH={s:?} is not a thread count: set it to a whole number from 1 to {MAX_WIDTH}, or unset it to use max(cores, {WAITING_WIDTH})"
        )),
    }
}

/// Checks `KORA_PARALLEL_WIDTH` before a run, so a typo is an error naming the variable
/// rather than a width silently ignored.
pub fn check_width_setting() -> Result<(), String> {
    match std::env::var("KORA_PARALLEL_WIDTH") {
        Ok(s) => parse_width(&s).map(|_| ()),
        Err(std::env::VarError::NotPresent) => Ok(()),
        Err(std::env::VarError::NotUnicode(_)) => {
            Err("KORA_PARALLEL_WIDTH is not valid text: set it to a whole number of threads, or unset it".into())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_machine_still_gets_room_for_waiting_branches() {
        assert_eq!(width(2, None), WAITING_WIDTH);
        assert_eq!(width(64, None), 64);
    }

    #[test]
    fn an_explicit_width_wins_and_nonsense_is_ignored() {
        assert_eq!(width(2, Some("3".into())), 3);
        assert_eq!(width(2, Some("0".into())), WAITING_WIDTH);
        assert_eq!(width(2, Some("many".into())), WAITING_WIDTH);
        assert_eq!(width(2, Some("100000".into())), WAITING_WIDTH);
    }

    #[test]
    fn a_bad_width_is_explained() {
        assert_eq!(parse_width(" 8 "), Ok(8));
        for bad in ["0", "-1", "many", "", "100000"] {
            let e = parse_width(bad).expect_err(bad);
            assert!(e.contains("KORA_PARALLEL_WIDTH"), "{e}");
        }
    }
}
