//! The call frames the debugger, stack traces and `parallel for` see: reused slots, not a pushed stack.

use std::rc::Rc;

use kora_check::hir;
use kora_syntax::Span;

use crate::eval::interp::Interp;
use crate::observe::debug::FrameInfo;
use crate::value::{Function, Value};

/// One active call, as the debugger and stack traces see it.
pub(crate) struct Frame {
    /// The closure being run. An `Rc`, not the definition's `Arc`: a frame is pushed per
    /// call, and an atomic count there drains the store buffer on every call and return.
    pub closure: Rc<Function>,
    pub base: usize,
    /// The statement being executed, kept up to date only while a debugger is attached.
    pub at: Span,
}

impl Frame {
    pub(crate) fn func(&self) -> &hir::Function {
        &self.closure.def
    }
}

impl Interp<'_> {
    /// The active calls, outermost first.
    pub(crate) fn frames(&self) -> &[Frame] {
        &self.frame_slots[..self.live_frames]
    }

    /// The innermost active call.
    pub(crate) fn top_frame_mut(&mut self) -> Option<&mut Frame> {
        let n = self.live_frames.checked_sub(1)?;
        self.frame_slots.get_mut(n)
    }

    /// Enters a call. The frame it leaves when it returns is `live_frames -= 1`.
    #[inline(always)]
    pub(crate) fn push_frame(&mut self, c: &Rc<Function>, base: usize, at: Span) {
        let n = self.live_frames;
        match self.frame_slots.get_mut(n) {
            Some(f) => {
                f.closure = c.clone();
                f.base = base;
                f.at = at;
            }
            None => self.frame_slots.push(Frame {
                closure: c.clone(),
                base,
                at,
            }),
        }
        self.live_frames = n + 1;
    }

    /// What the debugger sees: one entry per active call, innermost last.
    pub fn frame_infos(&self) -> Vec<FrameInfo> {
        self.frames()
            .iter()
            .map(|f| {
                let locals = f
                    .func()
                    .slot_names
                    .iter()
                    .enumerate()
                    .filter_map(|(i, n)| {
                        let v = self.stack.get(f.base + i)?;
                        let v = match v {
                            Value::Cell(c) => c.borrow().clone(),
                            other => other.clone(),
                        };
                        Some((n.clone(), v))
                    })
                    .collect();
                FrameInfo {
                    func: f.func().name.clone(),
                    module: f.func().module,
                    at: f.at,
                    locals,
                }
            })
            .collect()
    }

    /// `setVariable` on a local: frame `frame` counts from the outermost call. A captured
    /// variable's box is written through, so closures sharing it see the new value.
    pub fn set_frame_local(
        &mut self,
        frame: usize,
        name: &str,
        value: Value,
    ) -> Result<(), String> {
        let f = self
            .frames()
            .get(frame)
            .ok_or_else(|| format!("there is no frame {frame}"))?;
        let i = f
            .func()
            .slot_names
            .iter()
            .position(|n| n == name)
            .ok_or_else(|| format!("`{name}` is not a local of `{}`", f.func().name))?;
        let at = f.base + i;
        let slot = self
            .stack
            .get_mut(at)
            .ok_or_else(|| format!("`{name}` has no value yet"))?;
        match slot {
            Value::Cell(c) => *c.borrow_mut() = value,
            other => *other = value,
        }
        Ok(())
    }
}
