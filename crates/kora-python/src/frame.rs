//! Frames between Kora and a worker: a 4-byte big-endian length, then that many bytes of JSON.

use std::io::{Read, Write};

use serde_json::Value as Json;

/// The largest frame either side accepts.
pub const MAX_FRAME: usize = 256 << 20;

pub fn write(w: &mut impl Write, msg: &Json) -> std::io::Result<()> {
    let body = msg.to_string();
    let len = u32::try_from(body.len())
        .ok()
        .filter(|n| (*n as usize) <= MAX_FRAME)
        .ok_or_else(|| std::io::Error::other("a frame past 256 MiB"))?;
    w.write_all(&len.to_be_bytes())?;
    w.write_all(body.as_bytes())?;
    w.flush()
}

/// Reads one frame; `Ok(None)` at a clean end of the stream.
pub fn read(r: &mut impl Read) -> Result<Option<Json>, String> {
    let mut head = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut head[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err("the stream ended inside a frame's length".into()),
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
    let n = u32::from_be_bytes(head) as usize;
    if n > MAX_FRAME {
        return Err(format!("a frame of {n} bytes, past the 256 MiB limit"));
    }
    let mut body = vec![0u8; n];
    r.read_exact(&mut body)
        .map_err(|e| format!("the stream ended inside a frame: {e}"))?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| format!("a frame that is not JSON: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn frames_read_back_as_written(xs in proptest::collection::vec("[a-z0-9 ]{0,20}", 0..5)) {
            let mut buf = Vec::new();
            for x in &xs {
                write(&mut buf, &Json::String(x.clone())).expect("written");
            }
            let mut r = buf.as_slice();
            for x in &xs {
                prop_assert_eq!(read(&mut r).expect("frame"), Some(Json::String(x.clone())));
            }
            prop_assert_eq!(read(&mut r).expect("end"), None);
        }

        #[test]
        fn any_bytes_read_without_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let mut r = bytes.as_slice();
            for _ in 0..4 {
                if !matches!(read(&mut r), Ok(Some(_))) {
                    break;
                }
            }
        }
    }
}
