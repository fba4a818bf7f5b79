//! Server-sent events, as a Streamable HTTP server answers a request: each event's `data`
//! lines joined, one JSON-RPC message per event. Other fields and comments are skipped.

/// Splits an event stream into the data of its events, as they complete.
#[derive(Default)]
pub struct SseReader {
    data: Vec<String>,
    line: Vec<u8>,
}

impl SseReader {
    /// Feeds bytes; returns the data of every event they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut out = Vec::new();
        for &b in bytes {
            if b == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                self.line_done(&String::from_utf8_lossy(&line), &mut out);
            } else {
                self.line.push(b);
            }
        }
        out
    }

    /// The last event, when the stream ends without a blank line after it.
    pub fn finish(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&String::from_utf8_lossy(&line), &mut out);
        }
        self.line_done("", &mut out);
        out
    }

    fn line_done(&mut self, line: &str, out: &mut Vec<String>) {
        if line.is_empty() {
            if !self.data.is_empty() {
                out.push(std::mem::take(&mut self.data).join("\n"));
            }
            return;
        }
        if let Some(rest) = line.strip_prefix("data:") {
            self.data
                .push(rest.strip_prefix(' ').unwrap_or(rest).to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn events_are_split_and_their_data_joined() {
        let mut r = SseReader::default();
        let mut got = r.feed(b"event: message\r\ndata: {\"a\":\ndata: 1}\r\n\r\n: comment\n");
        got.extend(r.feed(b"id: 7\ndata: x"));
        got.extend(r.finish());
        assert_eq!(got, vec!["{\"a\":\n1}".to_string(), "x".to_string()]);
    }

    proptest! {
        #[test]
        fn chunking_never_changes_the_events(text in "(data: [a-z{}]{0,6}\n|event: m\n|\n|: c\n){0,12}", cut in 0usize..80) {
            let bytes = text.as_bytes();
            let cut = cut.min(bytes.len());
            let mut whole = SseReader::default();
            let mut a = whole.feed(bytes);
            a.extend(whole.finish());
            let mut parts = SseReader::default();
            let mut b = parts.feed(&bytes[..cut]);
            b.extend(parts.feed(&bytes[cut..]));
            b.extend(parts.finish());
            prop_assert_eq!(a, b);
        }
    }
}
