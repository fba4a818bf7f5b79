//! Cancelling a model call from another thread: a flag the transport checks before each attempt, a wait it wakes, and the connections it shuts.
//!
//! A `parallel for ... first` race decides its winner on one thread while losing branches
//! are blocked in the transport on others. Setting the flag alone would leave a loser
//! waiting out its read timeout and then its retries; so the transport registers the
//! `ureq` agent of each attempt here, and `cancel` shuts that agent down, which closes its
//! sockets and returns every read or write blocked on them at once. A backoff between
//! attempts waits on a condition variable `cancel` notifies, so it wakes too.
//!
//! Tokens nest: a branch's token is a child of its fan-out's, so cancelling an outer
//! branch reaches the calls of the fan-outs nested inside it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use ureq::Agent;

/// A handle that cancels the model calls given it. Clones share the same flag.
#[derive(Clone, Default)]
pub struct Cancel(Arc<Inner>);

#[derive(Default)]
struct Inner {
    flag: AtomicBool,
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Default)]
struct State {
    /// Agents of attempts in flight, by registration number.
    agents: Vec<(u64, Agent)>,
    next: u64,
    children: Vec<Weak<Inner>>,
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cancel({})", self.is_cancelled())
    }
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Cancel {
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// A token cancelled with this one (and on its own).
    pub fn child(&self) -> Cancel {
        let child = Cancel::new();
        let mut st = lock(&self.0.state);
        st.children.retain(|c| c.strong_count() > 0);
        st.children.push(Arc::downgrade(&child.0));
        drop(st);
        if self.is_cancelled() {
            child.cancel();
        }
        child
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.flag.load(Ordering::Acquire)
    }

    /// Cancels every call given this token (or a child of it): attempts in flight lose
    /// their connections, waits end, and no further attempt starts.
    pub fn cancel(&self) {
        if self.0.flag.swap(true, Ordering::AcqRel) {
            return;
        }
        let (agents, children) = {
            let mut st = lock(&self.0.state);
            (
                std::mem::take(&mut st.agents),
                std::mem::take(&mut st.children),
            )
        };
        self.0.wake.notify_all();
        for (_, a) in agents {
            a.shutdown();
        }
        for c in children.iter().filter_map(Weak::upgrade) {
            Cancel(c).cancel();
        }
    }

    /// Registers the agent of an attempt about to start; `None` (and the agent shut) when
    /// the token is already cancelled. The guard unregisters it.
    pub(crate) fn register(&self, agent: &Agent) -> Option<Registered<'_>> {
        let mut st = lock(&self.0.state);
        // Checked under the lock `cancel` takes, so an agent registered now is shut by it.
        if self.is_cancelled() {
            drop(st);
            agent.clone().shutdown();
            return None;
        }
        let n = st.next;
        st.next += 1;
        st.agents.push((n, agent.clone()));
        Some(Registered { token: self, n })
    }

    /// Sleeps for `d` unless cancelled first; `false` when the sleep was cut short.
    pub fn sleep(&self, d: Duration) -> bool {
        let until = Instant::now() + d;
        let mut st = lock(&self.0.state);
        loop {
            if self.is_cancelled() {
                return false;
            }
            let now = Instant::now();
            if now >= until {
                return true;
            }
            st = match self.0.wake.wait_timeout(st, until - now) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
    }
}

/// An attempt's agent, registered with its token until this is dropped.
pub(crate) struct Registered<'a> {
    token: &'a Cancel,
    n: u64,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        lock(&self.token.0.state)
            .agents
            .retain(|(n, _)| *n != self.n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancelling_wakes_a_sleep_and_reaches_children() {
        let parent = Cancel::new();
        let child = parent.child();
        let sleeper = {
            let child = child.clone();
            std::thread::spawn(move || {
                let t = Instant::now();
                (child.sleep(Duration::from_secs(60)), t.elapsed())
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        parent.cancel();
        let (slept, took) = sleeper.join().expect("joins");
        assert!(!slept);
        assert!(took < Duration::from_secs(30), "{took:?}");
        assert!(child.is_cancelled());
        // A child made after the cancel starts cancelled; a registration is refused.
        let late = parent.child();
        assert!(late.is_cancelled());
        assert!(late.register(&Agent::new_with_defaults()).is_none());
        assert!(Cancel::new().sleep(Duration::from_millis(1)));
    }
}
