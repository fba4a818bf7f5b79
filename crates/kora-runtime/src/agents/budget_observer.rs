//! The budget's observer on the effect pipeline: admits model calls at Prepared and charges them at Terminal.
//!
//! It meters `Kind::Model` effects, and the calls of external modules: a direct MCP tool call
//! is a call of its own (a tool the model calls inside a tool loop belongs to that loop's one
//! call), and every MCP or Python call is refused once the budget's time is out. Every other
//! effect passes untouched.
//! Effects nest (a tool's effects run while its model call is in flight), so
//! the calls between Prepared and Terminal form a stack.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

use serde_json::Value as Json;

use crate::agents::budget::{BudgetChain, Reserved};
use crate::durable::effect::{Effect, Kind, Observation, Observer, State, Verdict};

/// The budget scope the interpreter is in, shared with its observer.
pub(crate) type CurrentBudget = Rc<RefCell<BudgetChain>>;

/// One metered call between Prepared and Terminal.
struct Pending {
    chain: BudgetChain,
    reserved: Reserved,
    sent: bool,
    /// A model call (charged its tokens and steps), not an external one.
    model: bool,
}

/// Admits model calls at Prepared and charges them at Terminal (or releases them when
/// another observer stopped the call). Other kinds of effect pass untouched.
pub(crate) struct BudgetObserver {
    current: CurrentBudget,
    /// Effects nest (a tool's effects run inside its model call), so calls form a stack.
    pending: Vec<Pending>,
}

impl BudgetObserver {
    pub(crate) fn new(current: CurrentBudget) -> BudgetObserver {
        BudgetObserver {
            current,
            pending: Vec::new(),
        }
    }
}

fn metered(e: &Effect) -> bool {
    e.kind == Kind::Model
        || matches!(e.kind, Kind::Mcp | Kind::Python)
            && e.class == crate::durable::effect::Class::WorldChanging
}

impl Observer for BudgetObserver {
    fn transition(&mut self, e: &Effect, state: State) {
        if !metered(e) {
            return;
        }
        match state {
            State::Prepared => self.pending.push(Pending {
                chain: self.current.borrow().clone(),
                reserved: Reserved::default(),
                sent: false,
                model: e.kind == Kind::Model,
            }),
            State::Sent { .. } => {
                if let Some(p) = self.pending.last_mut() {
                    p.sent = true;
                }
            }
            State::Observed | State::Terminal => {}
        }
    }

    fn prepared(&mut self, e: &Effect) -> Verdict {
        if !metered(e) {
            return Verdict::Proceed;
        }
        let Some(p) = self.pending.last_mut() else {
            return Verdict::Proceed;
        };
        if p.chain.is_unbudgeted() {
            return Verdict::Proceed;
        }
        if !p.model {
            // A direct MCP call is one call; inside a model call it is part of that one.
            let in_model = self.pending.iter().rev().skip(1).any(|q| q.model);
            let count = e.kind == Kind::Mcp && !in_model;
            let p = self.pending.last_mut().expect("pushed at Prepared");
            return match p.chain.admit_external(Instant::now(), count) {
                Ok(r) => {
                    p.reserved = r;
                    Verdict::Proceed
                }
                Err(m) => Verdict::Exhausted(m),
            };
        }
        match p.chain.admit(Instant::now()) {
            Ok(r) => {
                p.reserved = r;
                Verdict::Proceed
            }
            Err(m) => Verdict::Exhausted(m),
        }
    }

    fn observed(&mut self, e: &Effect, what: &Observation) {
        if let (true, Observation::Usage { input, output }, Some(p)) =
            (metered(e), what, self.pending.last_mut())
        {
            // Charged at once, so the next turn of a tool loop sees them.
            p.chain.charge_tokens(input + output);
        }
    }

    fn abandoned(&mut self, e: &Effect) {
        if !metered(e) {
            return;
        }
        if let Some(p) = self.pending.pop() {
            p.chain.release(p.reserved);
        }
    }

    fn terminal(&mut self, e: &Effect, _ok: bool, record: &dyn Fn() -> Json) {
        if !metered(e) {
            return;
        }
        let Some(p) = self.pending.pop() else { return };
        // An external call's reservation is its whole charge.
        if p.chain.is_unbudgeted() || !p.model {
            return;
        }
        // A replayed answer was never sent: the tokens it cost are the ones it was recorded with,
        // so a replay spends what the original run spent. A sent call's were charged as observed.
        let tokens = if p.sent {
            0
        } else {
            recorded_tokens(&record())
        };
        p.chain.charge(tokens, p.reserved);
    }
}

/// `{"ok": {"usage": {"input_tokens": i, "output_tokens": o}, ...}}` → `i + o`.
fn recorded_tokens(j: &Json) -> u64 {
    let usage = &j["ok"]["usage"];
    usage["input_tokens"].as_u64().unwrap_or(0) + usage["output_tokens"].as_u64().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::budget::{Limits, Meter};

    fn limits(calls: Option<u64>) -> Limits {
        Limits {
            calls,
            ..Limits::default()
        }
    }

    #[test]
    fn a_call_whose_handler_raises_is_still_charged() {
        use crate::durable::effect::{Class, Pipeline, Stop};
        let now = Instant::now();
        let chain = BudgetChain::default()
            .enter(limits(Some(5)), now)
            .expect("fresh");
        let mut p = Pipeline::default();
        p.attach(Box::new(BudgetObserver::new(Rc::new(RefCell::new(
            chain.clone(),
        )))));
        let e = Effect {
            kind: Kind::Model,
            class: Class::Effect,
            op: "main.ko:<module>#0",
            call: "analyze",
            target: "m",
        };
        let r: Result<Result<Result<(), String>, Stop>, &str> = p.run_with(&e, None, |s| {
            s.observe(Observation::Usage {
                input: 30,
                output: 12,
            });
            Err("the handler raised")
        });
        assert!(matches!(r, Err("the handler raised")));
        assert_eq!(chain.spent(), (42, 1, 1));
        // The same path with nothing left refuses before sending and charges nothing.
        let spent = BudgetChain::default()
            .enter(limits(Some(0)), now)
            .expect("fresh");
        let mut p = Pipeline::default();
        p.attach(Box::new(BudgetObserver::new(Rc::new(RefCell::new(
            spent.clone(),
        )))));
        let r: Result<Result<Result<(), String>, Stop>, &str> =
            p.run_with(&e, None, |_| panic!("sent despite an empty budget"));
        assert!(matches!(r, Ok(Err(Stop::Exhausted(Meter::Calls)))));
        assert_eq!(spent.spent(), (0, 0, 0));
    }

    #[test]
    fn tokens_reported_mid_call_stop_its_next_turn() {
        use crate::durable::effect::{Begun, Class, Pipeline};
        let now = Instant::now();
        let chain = BudgetChain::default()
            .enter(
                Limits {
                    tokens: Some(50),
                    ..Limits::default()
                },
                now,
            )
            .expect("fresh");
        let mut p = Pipeline::default();
        p.attach(Box::new(BudgetObserver::new(Rc::new(RefCell::new(
            chain.clone(),
        )))));
        let e = Effect {
            kind: Kind::Model,
            class: Class::WorldChanging,
            op: "main.ko:<module>#0",
            call: "analyze",
            target: "m",
        };
        assert!(matches!(p.begin::<String>(&e), Begun::Perform));
        assert_eq!(chain.admit_turn(Instant::now()), Ok(()));
        p.observe(
            &e,
            Observation::Usage {
                input: 40,
                output: 20,
            },
        );
        assert_eq!(chain.admit_turn(Instant::now()), Err(Meter::Tokens));
        p.finish(&e, &Ok::<_, String>("done".to_string()));
        // Charged once: as observed, not again at Terminal.
        assert_eq!(chain.spent(), (60, 1, 2));
    }
}
