//! stdio/v1: the frames a helper and Kora exchange over its stdin and stdout.
//!
//! A frame is an 8-byte prefix (header length, payload length, both u32 big-endian), a JSON
//! header, then the payload's raw bytes: a rendered page crosses as itself, not as base64.
//! The same frame goes both ways; one request gets exactly one reply.

use std::io::{self, Read, Write};

use serde_json::Value as Json;

/// A header longer than this is a broken or hostile peer, not a real message.
pub const MAX_HEADER: u32 = 1 << 20;
/// The largest payload either side accepts (a page rendered at high dpi fits well inside).
pub const MAX_PAYLOAD: u32 = 1 << 30;

/// One stdio/v1 message.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub header: Json,
    pub payload: Vec<u8>,
}

/// Why a frame could not be read.
#[derive(Debug)]
pub enum FrameError {
    /// The stream ended cleanly between frames.
    Eof,
    /// The stream ended inside a frame.
    Truncated,
    /// A length past the limits, or a header that is not a JSON object.
    Malformed(String),
    Io(io::Error),
}

impl std::fmt::Display for FrameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FrameError::Eof => write!(f, "the stream ended"),
            FrameError::Truncated => write!(f, "the stream ended inside a frame"),
            FrameError::Malformed(why) => write!(f, "a malformed stdio/v1 frame: {why}"),
            FrameError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for FrameError {}

impl Frame {
    pub fn new(header: Json, payload: Vec<u8>) -> Frame {
        Frame { header, payload }
    }

    /// The frame's bytes. `Err` when the header or payload is past the limits.
    pub fn encode(&self) -> Result<Vec<u8>, FrameError> {
        let head =
            serde_json::to_vec(&self.header).map_err(|e| FrameError::Malformed(e.to_string()))?;
        let hl = check_len(head.len(), MAX_HEADER, "header")?;
        let pl = check_len(self.payload.len(), MAX_PAYLOAD, "payload")?;
        let mut out = Vec::with_capacity(8 + head.len() + self.payload.len());
        out.extend_from_slice(&hl.to_be_bytes());
        out.extend_from_slice(&pl.to_be_bytes());
        out.extend_from_slice(&head);
        out.extend_from_slice(&self.payload);
        Ok(out)
    }

    pub fn write_to(&self, w: &mut impl Write) -> Result<(), FrameError> {
        let bytes = self.encode()?;
        w.write_all(&bytes).map_err(FrameError::Io)?;
        w.flush().map_err(FrameError::Io)
    }

    /// Reads one frame; `Eof` only when the stream ends exactly between frames.
    pub fn read_from(r: &mut impl Read) -> Result<Frame, FrameError> {
        let mut prefix = [0u8; 8];
        match fill(r, &mut prefix)? {
            0 => return Err(FrameError::Eof),
            8 => {}
            _ => return Err(FrameError::Truncated),
        }
        let (hl, pl) = lengths(&prefix)?;
        let mut head = vec![0u8; hl as usize];
        if fill(r, &mut head)? != head.len() {
            return Err(FrameError::Truncated);
        }
        let header = parse_header(&head)?;
        let mut payload = vec![0u8; pl as usize];
        if fill(r, &mut payload)? != payload.len() {
            return Err(FrameError::Truncated);
        }
        Ok(Frame { header, payload })
    }

    /// Decodes a frame at the start of `buf`: `Ok(None)` when more bytes are needed, else the
    /// frame and how many bytes it used.
    pub fn decode(buf: &[u8]) -> Result<Option<(Frame, usize)>, FrameError> {
        let Some(prefix) = buf.get(..8) else {
            return Ok(None);
        };
        let mut p = [0u8; 8];
        p.copy_from_slice(prefix);
        let (hl, pl) = lengths(&p)?;
        let end_head = 8 + hl as usize;
        let end = end_head + pl as usize;
        if buf.len() < end {
            return Ok(None);
        }
        let header = parse_header(&buf[8..end_head])?;
        Ok(Some((Frame::new(header, buf[end_head..end].to_vec()), end)))
    }
}

fn check_len(n: usize, max: u32, what: &str) -> Result<u32, FrameError> {
    match u32::try_from(n) {
        Ok(v) if v <= max => Ok(v),
        _ => Err(FrameError::Malformed(format!(
            "a {what} of {n} bytes is past the limit of {max}"
        ))),
    }
}

fn lengths(prefix: &[u8; 8]) -> Result<(u32, u32), FrameError> {
    let hl = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
    let pl = u32::from_be_bytes([prefix[4], prefix[5], prefix[6], prefix[7]]);
    check_len(hl as usize, MAX_HEADER, "header")?;
    check_len(pl as usize, MAX_PAYLOAD, "payload")?;
    Ok((hl, pl))
}

fn parse_header(bytes: &[u8]) -> Result<Json, FrameError> {
    let header: Json = serde_json::from_slice(bytes)
        .map_err(|e| FrameError::Malformed(format!("the header is not JSON: {e}")))?;
    if !header.is_object() {
        return Err(FrameError::Malformed(
            "the header is not a JSON object".into(),
        ));
    }
    Ok(header)
}

/// Reads until `buf` is full or the stream ends; how many bytes arrived.
fn fill(r: &mut impl Read, buf: &mut [u8]) -> Result<usize, FrameError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(FrameError::Io(e)),
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn header() -> impl Strategy<Value = Json> {
        proptest::collection::btree_map("[a-z]{0,6}", any::<i64>(), 0..4)
            .prop_map(|m| serde_json::json!(m))
    }

    proptest! {
        #[test]
        fn a_frame_reads_back_as_written(h in header(), p in proptest::collection::vec(any::<u8>(), 0..512)) {
            let f = Frame::new(h, p);
            let bytes = f.encode().expect("encodes");
            let back = Frame::read_from(&mut bytes.as_slice()).expect("reads");
            prop_assert_eq!(&back, &f);
            let (d, used) = Frame::decode(&bytes).expect("decodes").expect("whole");
            prop_assert_eq!(d, f);
            prop_assert_eq!(used, bytes.len());
        }

        #[test]
        fn any_prefix_of_a_frame_asks_for_more(h in header(), p in proptest::collection::vec(any::<u8>(), 0..64), cut in 0usize..200) {
            let bytes = Frame::new(h, p).encode().expect("encodes");
            let cut = cut % bytes.len();
            prop_assert!(matches!(Frame::decode(&bytes[..cut]), Ok(None)));
            let r = Frame::read_from(&mut &bytes[..cut]);
            prop_assert!(matches!(r, Err(FrameError::Eof) | Err(FrameError::Truncated)));
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let _ = Frame::decode(&bytes);
            let _ = Frame::read_from(&mut bytes.as_slice());
        }
    }

    #[test]
    fn a_huge_length_is_refused_before_allocating() {
        let mut bytes = vec![0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
        bytes.extend_from_slice(b"{}");
        assert!(matches!(
            Frame::read_from(&mut bytes.as_slice()),
            Err(FrameError::Malformed(_))
        ));
    }

    #[test]
    fn a_header_must_be_an_object() {
        let mut bytes = vec![0, 0, 0, 2, 0, 0, 0, 0];
        bytes.extend_from_slice(b"[]");
        assert!(matches!(
            Frame::decode(&bytes),
            Err(FrameError::Malformed(_))
        ));
    }
}
