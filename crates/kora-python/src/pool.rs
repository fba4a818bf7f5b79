//! The workers of a run: started when a call needs one, reused, each serving one call at a
//! time, so `parallel for` branches that call Python at once run on separate processes. A
//! worker that crashes or times out is gone; the next call that needs one starts another.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::config::PythonConfig;
use crate::worker::Worker;

pub struct Pool {
    pub cfg: PythonConfig,
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Default)]
struct State {
    idle: Vec<Worker>,
    /// Workers alive, idle or lent.
    alive: usize,
    /// The longest start so far, for measurement.
    pub slowest_start: Duration,
}

/// A worker lent to one call: given back with `Pool::give_back`, or dropped (killed).
pub enum Lent {
    Worker(Worker),
    /// No worker could be had by the deadline.
    None(String),
}

impl Pool {
    pub fn new(cfg: PythonConfig) -> Pool {
        Pool {
            cfg,
            state: Mutex::new(State::default()),
            freed: Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An idle worker, a new one while fewer than `workers` live, else the next one freed.
    pub fn lend(&self, deadline: Instant) -> Lent {
        let mut st = self.lock();
        loop {
            if let Some(w) = st.idle.pop() {
                return Lent::Worker(w);
            }
            if st.alive < self.cfg.workers {
                st.alive += 1;
                drop(st);
                return match Worker::start(&self.cfg, deadline) {
                    Ok(w) => {
                        let mut st = self.lock();
                        st.slowest_start = st.slowest_start.max(w.start);
                        Lent::Worker(w)
                    }
                    Err(why) => {
                        self.lost();
                        Lent::None(why)
                    }
                };
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Lent::None(format!(
                    "all {} Python workers stayed busy until the deadline",
                    self.cfg.workers
                ));
            }
            st = self
                .freed
                .wait_timeout(st, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    pub fn give_back(&self, w: Worker) {
        self.lock().idle.push(w);
        self.freed.notify_one();
    }

    /// A lent worker died or was killed: its place is free.
    pub fn lost(&self) {
        let mut st = self.lock();
        st.alive = st.alive.saturating_sub(1);
        drop(st);
        self.freed.notify_one();
    }

    pub fn slowest_start(&self) -> Duration {
        self.lock().slowest_start
    }

    pub fn stop_all(&self) {
        let mut st = self.lock();
        st.idle.clear();
    }
}
