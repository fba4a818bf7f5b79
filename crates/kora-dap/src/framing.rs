//! Reading the editor's requests: `Content-Length` framing, and the requests that carry no arguments accepted in every spelling clients use.
//!
//! The `dap` crate's own reader refuses `"arguments": {}` on requests that
//! take none (`configurationDone`, `threads`), which some clients send.

use std::io::BufRead;

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
    let mut body = vec![0; length.unwrap_or(0)];
    if input.read_exact(&mut body).is_err() {
        return Incoming::Closed;
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
    let seq = v["seq"].as_i64();
    match serde_json::from_value::<Request>(v) {
        Ok(r) => Incoming::Request(Box::new(r)),
        Err(e) => Incoming::Unknown {
            seq,
            why: format!("`{command}`: {e}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dap::requests::Command;

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
    fn an_unknown_command_keeps_its_sequence_number() {
        let mut input = frame(r#"{"seq":9,"type":"request","command":"fly","arguments":{}}"#);
        match read(&mut input) {
            Incoming::Unknown { seq, .. } => assert_eq!(seq, Some(9)),
            _ => panic!("an unknown command was accepted"),
        }
    }
}
