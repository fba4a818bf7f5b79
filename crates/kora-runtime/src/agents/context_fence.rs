//! The context fence: `with context(max_input_tokens=N, reserve_output_tokens=N):` decides
//! which earlier tool exchanges a model request carries, by a deterministic token estimate.
//!
//! The estimate is `kora_models::token_estimate`'s rule, the same one that charges a
//! reply whose server reported no usage, so the same program always prunes the same
//! way, on every provider and in every replay.
//!
//! The base (system, prompt, data, tool definitions) is never cut: if it alone does
//! not fit, the call is `Failed`. Earlier exchanges (one assistant turn with all of its
//! tool results) are kept whole, newest first, while they fit; the rest are left out of
//! the request. If the newest exchange cannot fit beside the base, the loop cannot go on
//! without hiding the answer the model just asked for: `Exhausted("context")`.

pub use kora_models::token_estimate::base_tokens;
use kora_models::token_estimate::turn_tokens;
use kora_models::{ModelEntry, Request, Turn};

use crate::eval::interp::Interp;

/// One active `with context(...)` block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fence {
    pub max_input: u64,
    pub reserve_output: u64,
}

impl Fence {
    /// The input tokens a request may use.
    pub fn room(&self) -> u64 {
        self.max_input.saturating_sub(self.reserve_output)
    }
}

/// What a fence lets through.
#[derive(Debug, PartialEq)]
pub enum Fit {
    /// The turns to send, and how many whole exchanges were left out (oldest first).
    Send { history: Vec<Turn>, dropped: usize },
    /// The system message, prompt, data and tool definitions alone need `need` tokens.
    BaseTooBig { need: u64, room: u64 },
    /// The newest exchange cannot be sent beside the base.
    NewestTooBig { need: u64, room: u64 },
}

/// The `Failed` reason when the base cannot fit.
pub fn base_too_big(need: u64, room: u64) -> String {
    format!("context: the prompt, data and tool definitions need about {need} tokens, but `with context` leaves {room} for input (max_input_tokens - reserve_output_tokens); send less data or raise max_input_tokens")
}

/// Splits a history into exchanges: each assistant turn with the results that follow it.
fn exchanges(history: &[Turn]) -> Vec<&[Turn]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, t) in history.iter().enumerate() {
        if i > start && matches!(t, Turn::Assistant { .. }) {
            out.push(&history[start..i]);
            start = i;
        }
    }
    if start < history.len() {
        out.push(&history[start..]);
    }
    out
}

/// Which of `history` a request under `fence` carries, given its base estimate.
pub fn fit(fence: &Fence, base: u64, history: &[Turn]) -> Fit {
    let room = fence.room();
    if base > room {
        return Fit::BaseTooBig { need: base, room };
    }
    let ex = exchanges(history);
    let mut used = base;
    let mut kept = 0;
    for e in ex.iter().rev() {
        let cost: u64 = e.iter().map(turn_tokens).sum();
        if used + cost > room {
            break;
        }
        used += cost;
        kept += 1;
    }
    if kept == 0 {
        if let Some(newest) = ex.last() {
            let need = base + newest.iter().map(turn_tokens).sum::<u64>();
            return Fit::NewestTooBig { need, room };
        }
    }
    let dropped = ex.len() - kept;
    let history = ex[dropped..]
        .iter()
        .flat_map(|e| e.iter().cloned())
        .collect();
    Fit::Send { history, dropped }
}

impl Interp<'_> {
    /// A call with no tools has only its base to fit; `Failed` when it cannot.
    pub(crate) fn fence_refuses(
        &self,
        entry: &ModelEntry,
        material: &crate::agents::cassette::KeyMaterial,
        images: &[kora_models::ImageData],
        expect: &kora_check::types::Ty,
        obs: &mut crate::agents::model_span::ModelObs,
    ) -> Option<crate::value::Value> {
        let fence = self.context_fence()?;
        let req = Request {
            model: entry.name.clone(),
            prompt: material.prompt.clone(),
            data: material.data.clone(),
            schema: (*expect != kora_check::types::Ty::Str)
                .then(|| crate::value::json::shape_of(&self.prog, expect)),
            ..Request::default()
        };
        // The request here carries no pixels (they are not needed to count them).
        let pictures: u64 = images
            .iter()
            .map(kora_models::image_tokens::image_tokens)
            .sum();
        match fit(&fence, base_tokens(entry, &req) + pictures, &[]) {
            Fit::BaseTooBig { need, room } => {
                let why = base_too_big(need, room);
                obs.failure = Some(why.clone());
                Some(crate::value::Value::outcome(
                    crate::value::OutcomeTag::Failed,
                    crate::value::Value::str(why),
                ))
            }
            _ => None,
        }
    }

    /// The tightest active fence: nested blocks can only narrow what an outer one allows.
    pub(crate) fn context_fence(&self) -> Option<Fence> {
        self.fences
            .iter()
            .copied()
            .reduce(|a, b| if b.room() < a.room() { b } else { a })
    }

    pub(crate) fn exec_context(
        &mut self,
        max_input: &kora_check::hir::Expr,
        reserve: Option<&kora_check::hir::Expr>,
        body: &[kora_check::hir::Stmt],
    ) -> crate::error::RtResult<crate::eval::interp::Flow> {
        let count = |me: &mut Self, e: &kora_check::hir::Expr, what: &str| match me.eval(e)? {
            crate::value::Value::Int(n) if n >= 0 => Ok(n as u64),
            other => Err(crate::error::RtError::new(
                crate::error::codes::VALUE,
                format!(
                    "`with context({what}=...)` takes a whole number of tokens, 0 or more, got {}",
                    crate::value::conform::describe(&me.prog, &other)
                ),
            )),
        };
        let max_input = count(self, max_input, "max_input_tokens")?;
        let reserve_output = match reserve {
            Some(e) => count(self, e, "reserve_output_tokens")?,
            None => 0,
        };
        self.fences.push(Fence {
            max_input,
            reserve_output,
        });
        let r = self.exec_block(body);
        self.fences.pop();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kora_models::ToolCall;
    use serde_json::json;

    fn exchange(id: &str, result_len: usize) -> Vec<Turn> {
        vec![
            Turn::Assistant {
                content: String::new(),
                tool_calls: vec![ToolCall {
                    id: id.into(),
                    name: "t".into(),
                    arguments: json!({}),
                }],
            },
            Turn::ToolResult {
                call_id: id.into(),
                name: "t".into(),
                result: json!("x".repeat(result_len)),
            },
        ]
    }

    #[test]
    fn keeps_the_newest_whole_exchanges_that_fit() {
        let mut h = exchange("a", 400);
        h.extend(exchange("b", 40));
        h.extend(exchange("c", 40));
        let fence = Fence {
            max_input: 200,
            reserve_output: 50,
        };
        match fit(&fence, 50, &h) {
            Fit::Send { history, dropped } => {
                assert_eq!(dropped, 1);
                assert_eq!(history.len(), 4);
                assert!(
                    matches!(&history[0], Turn::Assistant { tool_calls, .. } if tool_calls[0].id == "b")
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn base_and_newest_that_cannot_fit() {
        let fence = Fence {
            max_input: 100,
            reserve_output: 60,
        };
        assert_eq!(fit(&fence, 41, &[]), Fit::BaseTooBig { need: 41, room: 40 });
        assert!(matches!(
            fit(&fence, 30, &exchange("a", 200)),
            Fit::NewestTooBig { room: 40, .. }
        ));
        assert_eq!(
            fit(&fence, 30, &[]),
            Fit::Send {
                history: vec![],
                dropped: 0
            }
        );
    }
}
