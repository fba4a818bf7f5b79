//! Reading the editor's requests: `Content-Length` framing, and the requests that carry no arguments accepted in every spelling clients use.
//!
//! The `dap` crate's own reader refuses `"arguments": {}` on requests that
//! take none (`configurationDone`, `threads`), which some clients send.

use std::io::{BufRead, Read};

use dap::requests::Request;
use serde_json::Value;

/// What one read produced.
pub enum Incoming {
    Request(Box<Request>),
    /// A well-framed message this adapter cannot take; answer `seq` with an error if there is one.
    Unknown {
        seq: Option<i64>,
        why: String,
    },
    Closed,
}

/// The largest request body read: a debugger request is a few kilobytes.
const MAX_MESSAGE: usize = 64 << 20;

/// Requests without arguments in the protocol.
const NO_ARGUMENTS: &[&str] = &["configurationDone", "threads", "loadedSources"];

pub fn read(input: &mut impl BufRead) -> Incoming {
    let mut length = None;
    loop {
        let mut line = String::new();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => return Incoming::Closed,
            Ok(_) => {}
        }
        let line = line.trim();
        if line.is_empty() {
            if length.is_some() {
                break;
            }
            continue;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<usize>().ok();
            }
        }
    }
    let length = length.unwrap_or(0);
    if length > MAX_MESSAGE {
        // Skipped without holding it, so a wrong header costs time, never memory.
        let skipped = std::io::copy(&mut input.take(length as u64), &mut std::io::sink());
        if skipped.map_or(true, |n| n < length as u64) {
            return Incoming::Closed;
        }
        return Incoming::Unknown {
            seq: None,
            why: format!(
                "a message of {length} bytes is over the adapter's limit of {MAX_MESSAGE}"
            ),
        };
    }
    // Grown as bytes arrive rather than allocated from the header up front.
    let mut body = Vec::new();
    match input.take(length as u64).read_to_end(&mut body) {
        Ok(n) if n == length => {}
        _ => return Incoming::Closed,
    }
    let mut v: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            return Incoming::Unknown {
                seq: None,
                why: format!("not JSON: {e}"),
            }
        }
    };
    let command = v["command"].as_str().unwrap_or("").to_string();
    if NO_ARGUMENTS.contains(&command.as_str()) {
        if let Some(o) = v.as_object_mut() {
            o.remove("arguments");
        }
    }
    if command == "setBreakpoints" {
        protocol_names(&mut v);
    }
    let seq = v["seq"].as_i64();
    match serde_json::from_value::<Request>(v) {
        Ok(r) => Incoming::Request(Box::new(r)),
        Err(e) => Incoming::Unknown {
            seq,
            why: format!("`{command}`: {e}"),
        },
    }
}

/// This version of the `dap` crate reads a source breakpoint's `hitCondition` and `logMessage`
/// under their Rust names only; without this they would be dropped and the breakpoint would
/// stop unconditionally.
fn protocol_names(v: &mut Value) {
    let Some(bps) = v
        .pointer_mut("/arguments/breakpoints")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for bp in bps.iter_mut().filter_map(Value::as_object_mut) {
        for (wire, ours) in [
            ("hitCondition", "hit_condition"),
            ("logMessage", "log_message"),
        ] {
            if let Some(x) = bp.remove(wire) {
                bp.insert(ours.to_string(), x);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dap::requests::Command;
    use proptest::strategy::Strategy;

    fn frame(body: &str) -> std::io::Cursor<Vec<u8>> {
        std::io::Cursor::new(format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes())
    }

    #[test]
    fn empty_arguments_on_argument_free_requests_are_accepted() {
        let mut input =
            frame(r#"{"seq":3,"type":"request","command":"configurationDone","arguments":{}}"#);
        match read(&mut input) {
            Incoming::Request(r) => assert!(matches!(r.command, Command::ConfigurationDone)),
            _ => panic!("not read as configurationDone"),
        }
        assert!(matches!(read(&mut input), Incoming::Closed));
    }

    #[test]
    fn a_huge_length_is_refused_without_allocating_it() {
        let mut input = std::io::Cursor::new(b"Content-Length: 99999999999999\r\n\r\n{}".to_vec());
        assert!(matches!(read(&mut input), Incoming::Closed));
        let mut input = std::io::Cursor::new(
            format!(
                "Content-Length: {}\r\n\r\n{}",
                MAX_MESSAGE + 1,
                " ".repeat(MAX_MESSAGE + 1)
            )
            .into_bytes(),
        );
        assert!(matches!(
            read(&mut input),
            Incoming::Unknown { seq: None, .. }
        ));
        assert!(matches!(read(&mut input), Incoming::Closed));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

        /// Whatever arrives, reading ends in requests, refusals and finally `Closed`, never a panic.
        #[test]
        fn any_bytes_read_to_the_end_without_panicking(
            bytes in proptest::prelude::prop_oneof![
                proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200),
                "(Content-Length: [0-9]{1,20}\r?\n(\r?\n)?(\\{\"seq\":[0-9],\"type\":\"request\",\"command\":\"[a-z]{1,8}\"\\})?){1,3}"
                    .prop_map(String::into_bytes),
            ]
        ) {
            let mut input = std::io::Cursor::new(bytes);
            let mut reads = 0;
            while !matches!(read(&mut input), Incoming::Closed) {
                reads += 1;
                proptest::prop_assert!(reads < 1000, "reading never reached the end");
            }
        }
    }

    #[test]
    fn an_unknown_command_keeps_its_sequence_number() {
        let mut input = frame(r#"{"seq":9,"type":"request","command":"fly","arguments":{}}"#);
        match read(&mut input) {
            Incoming::Unknown { seq, .. } => assert_eq!(seq, Some(9)),
            _ => panic!("an unknown command was accepted"),
        }
    }
}
