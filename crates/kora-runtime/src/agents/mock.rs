//! `with mock analyze -> value:`: a test's stack of canned answers for model calls.
//!
//! A call asks the stack innermost first. A mock fits when its value is a
//! non-`Ok` outcome, or an `Ok` whose payload reads back as the call's declared
//! type through the same JSON decoding a model's answer goes through, so a
//! mock cannot pass a test with an answer no model could have given. A
//! mismatch falls through to the mock beneath; only when nothing fits does
//! the call fail, with the innermost mismatch's message first.

use kora_check::hir::{self, AnalyzeCall, Stmt};
use kora_syntax::{LineIndex, Span};

use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::{Flow, Interp};
use crate::value::json::{from_json, to_json};
use crate::value::{OutcomeTag, Value};

/// One active `with mock` block.
pub(crate) struct Mock {
    pub value: Value,
    /// Where the block is, as `file:line`, for messages.
    pub at: String,
    /// `with mock alias.member -> ...`: the external member it answers for (`None`: `analyze`).
    pub member: Option<(kora_check::hir::ExtId, String)>,
}

impl Interp<'_> {
    pub(crate) fn exec_mock(
        &mut self,
        value: &hir::Expr,
        body: &[Stmt],
        span: Span,
    ) -> RtResult<Flow> {
        let v = self.eval(value)?;
        let at = self.place(span);
        if !matches!(v, Value::Outcome(_)) {
            return Err(RtError::new(
                codes::MOCK_VALUE,
                format!(
                    "the mock at {at} answers with {}, not an outcome; write `Ok(value)`, `Uncertain(\"why\")` or `Failed(\"why\")`",
                    crate::value::conform::describe(&self.prog, &v)
                ),
            ));
        }
        self.mocks.push(Mock {
            value: v,
            at,
            member: None,
        });
        let r = self.exec_block(body);
        self.mocks.pop();
        r
    }

    /// The answer of the innermost mock that fits `call`; `None` when no mock is active.
    pub(crate) fn mock_answer(&mut self, call: &AnalyzeCall) -> Option<RtResult<Value>> {
        if self.mocks.iter().all(|m| m.member.is_some()) {
            return None;
        }
        let mut misses = Vec::new();
        for m in self.mocks.iter().rev().filter(|m| m.member.is_none()) {
            match self.mock_fits(m, call) {
                Ok(v) => return Some(Ok(v)),
                Err(why) => misses.push(why),
            }
        }
        let mut msg = format!(
            "no mock fits the model call at {}: {}",
            call.site, misses[0]
        );
        for other in &misses[1..] {
            msg.push_str(&format!("; beneath it, {other}"));
        }
        msg.push_str(&format!(
            "; add `with mock analyze -> Ok({}(...)):` around the call",
            call.expect
        ));
        Some(Err(RtError::new(codes::MOCK_MISMATCH, msg)))
    }

    fn mock_fits(&self, m: &Mock, call: &AnalyzeCall) -> Result<Value, String> {
        let Value::Outcome(o) = &m.value else {
            return Err(format!("the mock at {} is not an outcome", m.at));
        };
        if o.tag != OutcomeTag::Ok {
            return Ok(m.value.clone());
        }
        let describe = || crate::value::format::type_name_in(&self.prog, &o.payload).to_string();
        let j = to_json(&self.prog, &o.payload).map_err(|why| {
            format!(
                "the mock at {} answers `Ok({})`, which no model can return: {why}",
                m.at,
                describe()
            )
        })?;
        match from_json(&self.prog, &j, &call.expect) {
            Ok(v) => Ok(Value::outcome(OutcomeTag::Ok, v)),
            Err(path) => Err(format!(
                "the mock at {} answers `Ok({})`, but the call expects `{}` ({path})",
                m.at,
                describe(),
                call.expect
            )),
        }
    }

    /// `file:line` of a span in the module being run.
    pub(crate) fn place(&self, span: Span) -> String {
        let m = &self.prog.modules[self.cur_mod];
        let line = LineIndex::new(&m.source).line(span.start);
        format!("{}:{}", m.display, line)
    }
}
