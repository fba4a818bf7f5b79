//! The helper's side of stdio/v1: read a request, answer it, until stdin ends.

use std::io::{self, BufReader, BufWriter};

use serde_json::{json, Value as Json};

use crate::frame::{Frame, FrameError};

/// Serves requests from stdin with `handle(op, header, payload)`; `Err(msg)` becomes an `err`
/// reply. Returns when Kora closes stdin.
pub fn serve(
    mut handle: impl FnMut(&str, &Json, &[u8]) -> Result<(Json, Vec<u8>), String>,
) -> Result<(), FrameError> {
    let mut input = BufReader::new(io::stdin().lock());
    let mut output = BufWriter::new(io::stdout().lock());
    loop {
        let req = match Frame::read_from(&mut input) {
            Ok(f) => f,
            Err(FrameError::Eof) => return Ok(()),
            Err(e) => return Err(e),
        };
        let op = req.header.get("op").and_then(Json::as_str).unwrap_or("");
        let header = req.header.get("header").cloned().unwrap_or(Json::Null);
        let out = match handle(op, &header, &req.payload) {
            Ok((h, payload)) => Frame::new(json!({ "ok": h }), payload),
            Err(msg) => Frame::new(json!({ "err": msg }), Vec::new()),
        };
        out.write_to(&mut output)?;
    }
}
