//! Token counts for an answer whose server reported none, so budgets and cost reports never read zero for real work.
//!
//! Servers differ: llama.cpp's Python server sends no usage frame in a stream even when
//! `stream_options.include_usage` asks for one, and some OpenAI-compatible proxies drop
//! `usage` from plain replies. A call that spent tokens but reported none would pass
//! through `budget(max_tokens=...)` for free. So a reply that carries no usage at all is
//! charged by the context fence's rule instead (a reported count stands, even zero): a quarter of a token per byte, rounded
//! up, of the request body without its images, plus each image by the tile rule, and a
//! quarter per byte of the answer and its tool calls' arguments.

use crate::image_tokens::image_tokens;
use crate::request::Request;
use crate::response::{Reply, Usage};

/// What `reply` reports, or the estimate when it reports nothing.
pub fn usage_or_estimate(reply: &Reply, req: &Request, body_bytes: usize) -> Usage {
    if reply.usage_reported {
        return reply.usage;
    }
    // Each image rides in the body as base64: 4 bytes per 3, which the tile rule replaces.
    let image_text: usize = req
        .images
        .iter()
        .map(|i| i.bytes.len().div_ceil(3) * 4)
        .sum();
    let image_cost: u64 = req.images.iter().map(image_tokens).sum();
    let text = body_bytes.saturating_sub(image_text) as u64;
    let answer: usize = reply.content.len()
        + reply
            .tool_calls
            .iter()
            .map(|c| c.name.len() + c.arguments.to_string().len())
            .sum::<usize>();
    Usage {
        input_tokens: text.div_ceil(4) + image_cost,
        output_tokens: (answer as u64).div_ceil(4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reported_count_stands() {
        let reply = Reply {
            usage: Usage {
                input_tokens: 7,
                output_tokens: 0,
            },
            usage_reported: true,
            content: "a long answer".into(),
            ..Reply::default()
        };
        assert_eq!(
            usage_or_estimate(&reply, &Request::default(), 400).input_tokens,
            7
        );
    }

    #[test]
    fn no_count_is_estimated_from_the_bytes() {
        let reply = Reply {
            content: "12345678".into(),
            ..Reply::default()
        };
        let u = usage_or_estimate(&reply, &Request::default(), 401);
        assert_eq!(u.input_tokens, 101);
        assert_eq!(u.output_tokens, 2);
    }

    #[test]
    fn a_reported_zero_stands_too() {
        let reply = Reply {
            content: "12345678".into(),
            usage_reported: true,
            ..Reply::default()
        };
        assert_eq!(
            usage_or_estimate(&reply, &Request::default(), 401).total(),
            0
        );
    }
}
