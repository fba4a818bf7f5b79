//! Calling an `agent name(...) -> T: isolated`: a fresh interpreter on a snapshot of its arguments, inline.
//!
//! The same machinery as one `parallel for` branch (`Seed`, `Portable`), run
//! on the caller's thread because there is nothing to run beside it. The agent
//! cannot reach the caller's heap: it gets copies of its arguments and of the
//! module variables it reads, and its answer comes back as a copy.

use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::{Interp, KwNames};
use crate::observe::span_buffer::SpanBuffer;
use crate::value::portable::Portable;
use crate::value::{Function, Value};

impl Interp<'_> {
    /// `c`'s arguments sit on the stack at `base` (positional, then keyword values).
    pub(crate) fn call_isolated(
        &mut self,
        c: &std::rc::Rc<Function>,
        base: usize,
        npos: usize,
        kw: KwNames<'_>,
    ) -> RtResult<Value> {
        let nkw = kw.len();
        let copied: RtResult<Vec<Portable>> = self.stack[base..base + npos + nkw]
            .iter()
            .map(Portable::of)
            .collect();
        self.stack.truncate(base);
        let args = copied?;
        let names: Vec<_> = (0..nkw).map(|i| kw.get(i)).collect();
        let agent = Portable::of(&Value::Func(c.clone()))?;
        let seed = self.seed()?;
        let mut out = Vec::new();
        let mut buf = SpanBuffer::default();
        let mut spent = None;
        let result = {
            let mut w = seed.interp(&mut out, 0);
            if seed.traced {
                w.trace_into(&mut buf);
            }
            let Value::Func(f) = agent.to_value() else {
                return Err(RtError::new(
                    codes::NOT_PORTABLE,
                    "an isolated agent did not copy as a function",
                ));
            };
            let wbase = w.stack.len();
            w.stack.extend(args.iter().map(Portable::to_value));
            w.enter_isolated = true;
            let r = w.invoke(&f, wbase, npos, KwNames::Plain(&names));
            let _ = w.flush_out();
            if seed.traced {
                spent = Some(w.worker_spend());
            }
            r.and_then(|v| Portable::of(&v))
        };
        // The agent's span is open here (see `agent_span.rs`): its work nests under it.
        if let Some(s) = spent {
            buf.spent = s;
            self.adopt_spans(buf, None);
        }
        self.write(&String::from_utf8_lossy(&out))?;
        Ok(result?.to_value())
    }
}
