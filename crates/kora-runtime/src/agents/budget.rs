//! Budgets: the atomic meters of a `budget(...)` scope and the chain of nested scopes (`budget_observer.rs` admits and charges calls).
//!
//! A scope's meters are atomics and a chain is a list of `Arc`s from the
//! innermost scope outwards, so a `BudgetChain` is `Send + Sync`: a
//! `parallel for` hands the same chain to every worker (`Interp::adopt_budget`)
//! and all branches spend from one set of meters. Spending is charged to every
//! scope of the chain, so an outer scope always sees what its inner ones spent.
//!
//! Calls and steps are reserved when a call is admitted (a compare-and-swap
//! per scope), which is what makes "stops at exactly the cap" hold with eight
//! branches racing for the last slot. Tokens can only be known afterwards: a
//! call is admitted while any tokens are left and charged in full at Terminal.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) use crate::agents::budget_observer::{BudgetObserver, CurrentBudget};

pub use crate::durable::meter::Meter;

/// What one `budget(...)` line declares; `None` leaves a meter to the enclosing scopes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Limits {
    pub tokens: Option<u64>,
    pub calls: Option<u64>,
    pub steps: Option<u64>,
    pub seconds: Option<f64>,
}

/// A child scope asked for more than an enclosing scope allows.
#[derive(Debug, PartialEq)]
pub struct Loosened {
    pub meter: Meter,
    pub asked: f64,
    pub allowed: f64,
}

/// One `budget(...)` scope: its limits, its deadline, and what was spent inside it.
#[derive(Debug)]
struct Scope {
    parent: Option<Arc<Scope>>,
    limits: Limits,
    /// Stored as the moment it passes, so every worker measures against the same instant.
    deadline: Option<Instant>,
    tokens: AtomicU64,
    calls: AtomicU64,
    steps: AtomicU64,
}

impl Scope {
    fn counter(&self, m: Meter) -> Option<(&AtomicU64, u64)> {
        match m {
            Meter::Tokens => self.limits.tokens.map(|c| (&self.tokens, c)),
            Meter::Calls => self.limits.calls.map(|c| (&self.calls, c)),
            Meter::Steps => self.limits.steps.map(|c| (&self.steps, c)),
            Meter::Time => None,
        }
    }
}

/// The budget scopes in force, innermost first; empty when the code runs unbudgeted.
/// Cloning shares the meters: this is what a `parallel for` gives each worker.
#[derive(Clone, Debug, Default)]
pub struct BudgetChain(Option<Arc<Scope>>);

/// What admission reserved, to be given back if the call never happens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reserved {
    calls: bool,
    steps: bool,
}

impl BudgetChain {
    pub fn is_unbudgeted(&self) -> bool {
        self.0.is_none()
    }

    fn scopes(&self) -> impl Iterator<Item = &Scope> {
        std::iter::successors(self.0.as_deref(), |s| s.parent.as_deref())
    }

    /// A nested scope with `limits`; a meter set higher than an enclosing scope set it is refused.
    pub fn enter(&self, limits: Limits, now: Instant) -> Result<BudgetChain, Loosened> {
        for (m, asked) in [
            (Meter::Tokens, limits.tokens.map(|v| v as f64)),
            (Meter::Calls, limits.calls.map(|v| v as f64)),
            (Meter::Steps, limits.steps.map(|v| v as f64)),
            (Meter::Time, limits.seconds),
        ] {
            let Some(asked) = asked else { continue };
            // Compared with the nearest scope that set the same meter: its value is the promise.
            let allowed = self.scopes().find_map(|s| match m {
                Meter::Tokens => s.limits.tokens.map(|v| v as f64),
                Meter::Calls => s.limits.calls.map(|v| v as f64),
                Meter::Steps => s.limits.steps.map(|v| v as f64),
                Meter::Time => s.limits.seconds,
            });
            if let Some(allowed) = allowed.filter(|a| asked > *a) {
                return Err(Loosened {
                    meter: m,
                    asked,
                    allowed,
                });
            }
        }
        let deadline = limits
            .seconds
            .map(|s| now.checked_add(Duration::from_secs_f64(s)).unwrap_or(now));
        Ok(BudgetChain(Some(Arc::new(Scope {
            parent: self.0.clone(),
            limits,
            deadline,
            tokens: AtomicU64::new(0),
            calls: AtomicU64::new(0),
            steps: AtomicU64::new(0),
        }))))
    }

    /// The earliest deadline of the chain: what the transport is told.
    pub fn deadline(&self) -> Option<Instant> {
        self.scopes().filter_map(|s| s.deadline).min()
    }

    /// The first meter (time first) that has nothing left in some scope of the chain.
    pub fn exhausted(&self, now: Instant) -> Option<Meter> {
        if self.deadline().is_some_and(|d| now >= d) {
            return Some(Meter::Time);
        }
        [Meter::Tokens, Meter::Calls, Meter::Steps]
            .into_iter()
            .find(|m| {
                self.scopes()
                    .filter_map(|s| s.counter(*m))
                    .any(|(used, cap)| used.load(Ordering::SeqCst) >= cap)
            })
    }

    /// Admits one model call: refuses with the meter that is out, else reserves its call and
    /// its first step in every scope.
    pub fn admit(&self, now: Instant) -> Result<Reserved, Meter> {
        if let Some(m) = self.exhausted(now) {
            return Err(m);
        }
        self.reserve(Meter::Calls)?;
        if let Err(m) = self.reserve(Meter::Steps) {
            self.unreserve(Meter::Calls);
            return Err(m);
        }
        Ok(Reserved {
            calls: true,
            steps: true,
        })
    }

    /// Admits one call of an external module: refused once time is out; `count` reserves it
    /// as a call (a direct MCP tool call), else it takes nothing (a Python call, a tool a
    /// model calls inside its own admitted call).
    pub fn admit_external(&self, now: Instant, count: bool) -> Result<Reserved, Meter> {
        if self.deadline().is_some_and(|d| now >= d) {
            return Err(Meter::Time);
        }
        if !count {
            return Ok(Reserved::default());
        }
        self.reserve(Meter::Calls)?;
        Ok(Reserved {
            calls: true,
            steps: false,
        })
    }

    /// Admits one more model turn inside an admitted call (a tool loop's next request):
    /// `Err(meter)` means the call ends as `Exhausted(meter)` between turns.
    /// The calls meter is not consulted: this call already holds its place in it, and a
    /// cap it filled must not stop its own later turns.
    pub fn admit_turn(&self, now: Instant) -> Result<(), Meter> {
        if let Some(m) = self.exhausted(now).filter(|m| *m != Meter::Calls) {
            return Err(m);
        }
        // `exhausted` names time and tokens before calls, so only a full steps meter is left to
        // find, and the reservation finds it.
        self.reserve(Meter::Steps)
    }

    /// Gives back what `admit` reserved for a call that was not performed.
    pub fn release(&self, r: Reserved) {
        if r.calls {
            self.unreserve(Meter::Calls);
        }
        if r.steps {
            self.unreserve(Meter::Steps);
        }
    }

    /// Gives back the call and step of a call that was admitted and charged but sent nothing
    /// (cancelled before its first request): a call never made is never counted.
    pub fn refund_unsent(&self) {
        self.release(Reserved {
            calls: true,
            steps: true,
        });
    }

    /// Charges spending to every scope; what `admit` reserved is not charged again.
    pub fn charge(&self, tokens: u64, r: Reserved) {
        for s in self.scopes() {
            s.tokens.fetch_add(tokens, Ordering::SeqCst);
            if !r.calls {
                s.calls.fetch_add(1, Ordering::SeqCst);
            }
            if !r.steps {
                s.steps.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    /// Charges tokens as they are reported, before the call ends: a tool loop's next turn is
    /// admitted against what its earlier turns spent.
    pub fn charge_tokens(&self, tokens: u64) {
        for s in self.scopes() {
            s.tokens.fetch_add(tokens, Ordering::SeqCst);
        }
    }

    /// Takes one unit of `m` in every scope that limits it, all or none.
    fn reserve(&self, m: Meter) -> Result<(), Meter> {
        let scopes: Vec<&Scope> = self.scopes().collect();
        for (i, s) in scopes.iter().enumerate() {
            let taken = match s.counter(m) {
                Some((used, cap)) => used
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |u| {
                        (u < cap).then_some(u + 1)
                    })
                    .is_ok(),
                None => {
                    s.counter_unlimited(m).fetch_add(1, Ordering::SeqCst);
                    true
                }
            };
            if !taken {
                for back in &scopes[..i] {
                    back.counter_unlimited(m).fetch_sub(1, Ordering::SeqCst);
                }
                return Err(m);
            }
        }
        Ok(())
    }

    fn unreserve(&self, m: Meter) {
        for s in self.scopes() {
            s.counter_unlimited(m).fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// What the innermost scopes leave of `m`: the least over every scope that limits it,
    /// `None` when none does. Time is in seconds.
    pub fn remaining(&self, m: Meter, now: Instant) -> Option<f64> {
        match m {
            Meter::Time => self
                .deadline()
                .map(|d| d.saturating_duration_since(now).as_secs_f64()),
            _ => self
                .scopes()
                .filter_map(|s| s.counter(m))
                .map(|(used, cap)| cap.saturating_sub(used.load(Ordering::SeqCst)))
                .min()
                .map(|v| v as f64),
        }
    }

    /// What the innermost scope has spent: `(tokens, calls, steps)`.
    pub fn spent(&self) -> (u64, u64, u64) {
        self.0.as_deref().map_or((0, 0, 0), |s| {
            (
                s.tokens.load(Ordering::SeqCst),
                s.calls.load(Ordering::SeqCst),
                s.steps.load(Ordering::SeqCst),
            )
        })
    }
}

impl Scope {
    /// The counter of `m` whether or not this scope limits it (spending is counted everywhere).
    fn counter_unlimited(&self, m: Meter) -> &AtomicU64 {
        match m {
            Meter::Tokens | Meter::Time => &self.tokens,
            Meter::Calls => &self.calls,
            Meter::Steps => &self.steps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(calls: Option<u64>, tokens: Option<u64>, seconds: Option<f64>) -> Limits {
        Limits {
            tokens,
            calls,
            steps: None,
            seconds,
        }
    }

    #[test]
    fn calls_stop_at_the_cap_across_threads() {
        let now = Instant::now();
        let chain = BudgetChain::default()
            .enter(limits(Some(5), None, None), now)
            .expect("fresh");
        let admitted = AtomicU64::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                let chain = chain.clone();
                let admitted = &admitted;
                s.spawn(move || {
                    for _ in 0..10 {
                        if let Ok(r) = chain.admit(Instant::now()) {
                            admitted.fetch_add(1, Ordering::SeqCst);
                            chain.charge(3, r);
                        }
                    }
                });
            }
        });
        assert_eq!(admitted.load(Ordering::SeqCst), 5);
        assert_eq!(chain.spent(), (15, 5, 5));
        assert_eq!(chain.admit(now), Err(Meter::Calls));
    }

    #[test]
    fn a_child_may_tighten_but_not_loosen() {
        let now = Instant::now();
        let outer = BudgetChain::default()
            .enter(limits(Some(10), None, Some(5.0)), now)
            .expect("fresh");
        assert!(outer.enter(limits(Some(3), None, Some(1.0)), now).is_ok());
        let err = outer
            .enter(limits(Some(11), None, None), now)
            .expect_err("looser");
        assert_eq!(err.meter, Meter::Calls);
        let err = outer
            .enter(limits(None, None, Some(9.0)), now)
            .expect_err("looser");
        assert_eq!(err.meter, Meter::Time);
        // A meter the parent leaves open may be set to anything.
        assert!(outer
            .enter(limits(None, Some(1_000_000), None), now)
            .is_ok());
    }

    #[test]
    fn spending_reaches_every_scope_and_time_is_named_first() {
        let now = Instant::now();
        let outer = BudgetChain::default()
            .enter(limits(None, Some(100), Some(0.0)), now)
            .expect("fresh");
        let inner = outer
            .enter(limits(Some(2), None, None), now)
            .expect("tighter");
        inner.charge(150, Reserved::default());
        assert_eq!(outer.spent(), (150, 1, 1));
        assert_eq!(inner.exhausted(now), Some(Meter::Time));
        assert_eq!(inner.remaining(Meter::Tokens, now), Some(0.0));
        assert_eq!(inner.remaining(Meter::Calls, now), Some(1.0));
        assert_eq!(inner.remaining(Meter::Steps, now), None);
        assert_eq!(BudgetChain::default().remaining(Meter::Time, now), None);
    }

    #[test]
    fn a_released_reservation_is_given_back() {
        let now = Instant::now();
        let chain = BudgetChain::default()
            .enter(limits(Some(1), None, None), now)
            .expect("fresh");
        let r = chain.admit(now).expect("room");
        assert_eq!(chain.admit(now), Err(Meter::Calls));
        chain.release(r);
        assert!(chain.admit(now).is_ok());
    }

    #[test]
    fn a_full_calls_meter_does_not_stop_the_turns_of_the_call_that_filled_it() {
        let now = Instant::now();
        let chain = BudgetChain::default()
            .enter(
                Limits {
                    calls: Some(1),
                    steps: Some(3),
                    ..Limits::default()
                },
                now,
            )
            .expect("fresh");
        chain.admit(now).expect("room");
        assert_eq!(chain.admit(now), Err(Meter::Calls));
        assert_eq!(chain.admit_turn(now), Ok(()));
        assert_eq!(chain.admit_turn(now), Ok(()));
        assert_eq!(chain.admit_turn(now), Err(Meter::Steps));
    }

    #[test]
    fn a_chain_crosses_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<BudgetChain>();
    }
}
