//! Token counts for an answer whose server reported none, so budgets and cost reports never read zero for real work.
//!
//! Servers differ: llama.cpp's Python server sends no usage frame in a stream even when
//! `stream_options.include_usage` asks for one, and some OpenAI-compatible proxies drop
//! `usage` from plain replies. A call that spent tokens but reported none would pass
//! through `budget(max_tokens=...)` for free. So a reply that carries no usage at all is
//! charged by `token_estimate`'s rule, the one the context fence uses (a reported count
//! stands, even zero).

use crate::config::ModelEntry;
use crate::request::Request;
use crate::response::{Reply, Usage};
use crate::token_estimate::{answer_tokens, request_tokens};

/// What `reply` reports, or the estimate when it reports nothing.
pub fn usage_or_estimate(reply: &Reply, entry: &ModelEntry, req: &Request) -> Usage {
    if reply.usage_reported {
        return reply.usage;
    }
    Usage {
        input_tokens: request_tokens(entry, req),
        output_tokens: answer_tokens(&reply.content, &reply.tool_calls),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> ModelEntry {
        ModelEntry::parse_shorthand("openai:m").expect("entry")
    }

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
            usage_or_estimate(&reply, &entry(), &Request::default()).input_tokens,
            7
        );
    }

    #[test]
    fn no_count_is_charged_by_the_fences_rule() {
        let reply = Reply {
            content: "12345678".into(),
            ..Reply::default()
        };
        let req = Request {
            prompt: "p".repeat(400),
            ..Request::default()
        };
        let u = usage_or_estimate(&reply, &entry(), &req);
        assert_eq!(u.input_tokens, request_tokens(&entry(), &req));
        assert!(
            u.input_tokens > 100,
            "400 bytes of prompt: {}",
            u.input_tokens
        );
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
            usage_or_estimate(&reply, &entry(), &Request::default()).total(),
            0
        );
    }
}
