//! A `tools/call` result read as the program sees it: structured content parsed, text content
//! as a `str`, `isError: true` as `Err(text)` (the tool ran and said no: an answer).

use serde_json::Value as Json;

use kora_runtime::external::{Data, Reply};

pub fn reply_of(result: &Json) -> Reply {
    let content = result.get("content").and_then(Json::as_array);
    let texts: Option<Vec<&str>> = content.map(|c| {
        c.iter()
            .filter(|i| i.get("type").and_then(Json::as_str) == Some("text"))
            .filter_map(|i| i.get("text").and_then(Json::as_str))
            .collect()
    });
    let all_text = content.is_some_and(|c| {
        c.iter()
            .all(|i| i.get("type").and_then(Json::as_str) == Some("text"))
    });
    if result.get("isError").and_then(Json::as_bool) == Some(true) {
        let text = texts.map(|t| t.join("\n")).unwrap_or_default();
        return Reply::Err(if text.is_empty() {
            "the tool reported an error and said nothing more".into()
        } else {
            text
        });
    }
    if let Some(s) = result.get("structuredContent") {
        return Reply::Ok(Data::from_plain_json(s));
    }
    match (content, all_text) {
        (Some(_), true) => Reply::Ok(Data::Str(texts.unwrap_or_default().join("\n"))),
        // Images, audio, resources: each item as the server sent it.
        (Some(c), false) => Reply::Ok(Data::List(c.iter().map(Data::from_plain_json).collect())),
        (None, _) => Reply::Failed(format!(
            "protocol error: a tool result with no `content`: {}",
            crate::jsonrpc::clip(&result.to_string())
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_kind_of_result_reads_as_the_program_sees_it() {
        assert_eq!(
            reply_of(&json!({"content": [{"type": "text", "text": "hi"}]})),
            Reply::Ok(Data::Str("hi".into()))
        );
        assert_eq!(
            reply_of(
                &json!({"content": [{"type": "text", "text": "{}"}], "structuredContent": {"t": 3}})
            ),
            Reply::Ok(Data::Dict(vec![(Data::Str("t".into()), Data::Int(3))]))
        );
        assert_eq!(
            reply_of(&json!({"content": [{"type": "text", "text": "denied"}], "isError": true})),
            Reply::Err("denied".into())
        );
        assert!(matches!(reply_of(&json!({"x": 1})), Reply::Failed(_)));
    }
}
