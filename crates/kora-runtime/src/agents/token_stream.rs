//! `on token(piece):`: a streamed model call whose pieces go to the program's handler instead of the screen.
//!
//! The handler is program code, so the transport cannot run inside a closure
//! that holds the pipeline (as `stream` does); the call uses the three-call
//! form (`begin` / `observe` / `finish`, effect/begun.rs) and the handler runs
//! on this thread as each piece arrives. The transport's rule is unchanged:
//! a piece handed to the handler is a piece shown, so that stream is never
//! retried. A handler that raises still lets the call reach Terminal, so a
//! budget charges the tokens it spent (the record's "charged at Terminal").

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

use kora_check::hir::{AnalyzeCall, ToolHandler};
use kora_models::{ModelEntry, Request, Settings};
use serde_json::Value as Json;

use crate::agents::model_effect::{answer_of, CassetteSlot, ModelAnswer, SlotResult};
use crate::agents::model_span::ModelObs;
use crate::durable::effect::{Begun, Class, Effect, Kind, Observation, Observer, Stop, Verdict};
use crate::error::{RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::Value;

type Ran = Result<Result<ModelAnswer, String>, Stop>;

/// The cassette slot of one call, attached to the pipeline for the length of that call.
///
/// Effects the handler makes pass through the same pipeline meanwhile, so the slot answers
/// only the call it belongs to (its site, outermost when a handler recurses into it).
struct SlotObserver {
    slot: Rc<RefCell<CassetteSlot>>,
    site: String,
    depth: u32,
}

impl SlotObserver {
    fn mine(&self, e: &Effect) -> bool {
        e.kind == Kind::Model && e.op == self.site
    }
}

impl Observer for SlotObserver {
    fn prepared(&mut self, e: &Effect) -> Verdict {
        if !self.mine(e) {
            return Verdict::Proceed;
        }
        self.depth += 1;
        if self.depth > 1 {
            return Verdict::Proceed;
        }
        self.slot.borrow_mut().prepared(e)
    }

    fn abandoned(&mut self, e: &Effect) {
        if self.mine(e) {
            self.depth = self.depth.saturating_sub(1);
        }
    }

    fn terminal(&mut self, e: &Effect, ok: bool, record: &dyn Fn() -> Json) {
        if !self.mine(e) {
            return;
        }
        if self.depth == 1 {
            self.slot.borrow_mut().terminal(e, ok, record);
        }
        self.depth = self.depth.saturating_sub(1);
    }
}

impl Interp<'_> {
    /// Runs a call that has `on token`: its pieces go to the handler as they arrive.
    /// Returns how the call ended and what the cassette slot found or wants recorded.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn token_stream(
        &mut self,
        call: &AnalyzeCall,
        handler: &ToolHandler,
        entry: &ModelEntry,
        settings: &Settings,
        req: &Request,
        deadline: Option<Instant>,
        slot: CassetteSlot,
        obs: &mut ModelObs,
    ) -> RtResult<(Ran, SlotResult)> {
        let effect = Effect {
            kind: Kind::Model,
            class: Class::Effect,
            op: &call.site,
            call: "analyze",
            target: &entry.name,
        };
        let slot = Rc::new(RefCell::new(slot));
        let watcher: Box<dyn Observer> = Box::new(SlotObserver {
            slot: slot.clone(),
            site: call.site.clone(),
            depth: 0,
        });
        let watcher_at: *const dyn Observer = watcher.as_ref();
        self.host().pipeline.attach(watcher);
        let ran = self.token_turn(handler, &effect, entry, settings, req, deadline, obs);
        self.host().pipeline.detach(watcher_at);
        let found = slot.borrow_mut().take_result();
        Ok((ran?, found))
    }

    #[allow(clippy::too_many_arguments)]
    fn token_turn(
        &mut self,
        handler: &ToolHandler,
        effect: &Effect,
        entry: &ModelEntry,
        settings: &Settings,
        req: &Request,
        deadline: Option<Instant>,
        obs: &mut ModelObs,
    ) -> RtResult<Ran> {
        match self.host().pipeline.begin::<ModelAnswer>(effect) {
            Begun::Perform => {}
            Begun::Done(r) => return Ok(Ok(r)),
            Begun::Stopped(stop) => return Ok(Err(stop)),
        }
        // Sent: each piece runs the handler here, on the interpreter's own thread. After a
        // raise the rest of the stream is read but no longer handed to the program.
        let mut raised: Option<Box<RtError>> = None;
        let cancel = self.cancel.clone();
        let result = {
            let mut on_piece = |piece: &str| {
                if raised.is_none() {
                    if let Err(e) = self.run_token_handler(handler, piece) {
                        raised = Some(e);
                    }
                }
            };
            kora_models::call_cancellable(
                entry,
                settings,
                req,
                deadline,
                cancel.as_ref(),
                Some(&mut on_piece),
            )
        };
        let answer = answer_of(result, req.schema.as_ref(), entry, deadline, obs);
        let pipeline = &mut self.host().pipeline;
        pipeline.observe(
            effect,
            Observation::Usage {
                input: answer.usage.input_tokens,
                output: answer.usage.output_tokens,
            },
        );
        let done = Ok::<_, String>(answer);
        pipeline.finish(effect, &done);
        match raised {
            Some(e) => Err(e),
            None => Ok(Ok(done)),
        }
    }

    /// Binds the piece and runs the handler's body in the frame of the statement it hangs off.
    pub(crate) fn run_token_handler(&mut self, h: &ToolHandler, piece: &str) -> RtResult<()> {
        if let Some(t) = h.params.first() {
            self.assign(t, Value::str(piece))?;
        }
        // The checker refuses `return` here, and the handler's own loops end inside it.
        self.exec_block(&h.body)?;
        Ok(())
    }
}
