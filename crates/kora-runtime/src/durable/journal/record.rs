//! One journal line: a header, an effect's attempt or outcome, a decision about an attempt, printed output, or a status change.
//!
//! Each line is the record's JSON with its sequence number first (`"n"`) and a CRC32C of
//! everything before the checksum last (`"crc"`), so a line that was changed, cut, moved or
//! dropped is told apart from the one line a kill can leave unfinished (the last).

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use super::check::Check;

/// The journal format this build writes and reads. Older files are refused, never guessed at.
/// 3: every line carries a sequence number and a checksum; classified values are digested or
/// sealed; attempts say how a resume checks them.
pub const FORMAT: u32 = 3;

/// A line of the journal. `t` names the variant so a person can read the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Record {
    /// The first line: which program this run is, so a resume of a changed program is refused.
    Header {
        format: u32,
        run: String,
        program: String,
        digest: String,
        args: Vec<String>,
        /// `kora run --model NAME`: a resume answers to the model the run started with.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        /// A digest per `kora.toml` table the run started under.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        config: Option<std::collections::BTreeMap<String, String>>,
    },
    /// A two-phase effect is about to act on the world (synced before it is performed).
    Sent {
        slot: String,
        kind: String,
        call: String,
        /// How a resume tells whether it happened; absent: only a person can.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        check: Option<Check>,
        /// What it acted on, for the stop message of an effect no check settles (a URL).
        #[serde(default, skip_serializing_if = "String::is_empty")]
        target: String,
        /// What a person's `--mark-done` replays for it (`{"ok": ...}`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        done_as: Option<Json>,
    },
    /// An effect's outcome as the pipeline records it (`{"ok": ..}` / `{"err": ..}`).
    Done {
        slot: String,
        kind: String,
        result: Json,
        /// SHA-256 of what a read saw, checked again on resume.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        digest: Option<String>,
        /// A keyed digest of a classified value a resume reads again (the value is not kept;
        /// `result` holds no trace of it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        keyed: Option<String>,
        /// The result sealed with the machine key, because it holds a classified value and
        /// must be replayed (`result` is null).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sealed: Option<String>,
    },
    /// An attempt with no outcome, settled before a resume ran anything: by looking at the
    /// world (`by: "check"`) or by a person (`kora run --resume ID --mark-done/--retry`).
    Resolved {
        slot: String,
        /// `done`: it happened, and `result` is replayed; `not_run`: it did not (or a person
        /// wants it again), so the resume performs it when it gets there.
        decision: String,
        by: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Json>,
    },
    /// Bytes of program output that reached the terminal (not synced: output is re-shown at worst).
    Out { bytes: u64 },
    /// The run's state changed.
    Status {
        state: String,
        #[serde(default, skip_serializing_if = "String::is_empty")]
        detail: String,
    },
}

/// The checksum's tail: `,"crc":"xxxxxxxx"}`.
const CRC_TAIL: usize = 18;

impl Record {
    /// The record's JSON without a sequence number (what `numbered` frames).
    pub fn body(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }

    /// The line as written: sequence number `n`, the record, its checksum and a newline.
    pub fn line(&self, n: u64) -> String {
        numbered(&self.body(), n)
    }
}

/// Frames a record's JSON body (`{"t":...}`) as line `n`. Digits are written by hand: through
/// `core::fmt` the number and the checksum cost more than the checksum's own arithmetic.
pub fn numbered(body: &str, n: u64) -> String {
    let inner = body
        .strip_prefix('{')
        .and_then(|b| b.strip_suffix('}'))
        .unwrap_or("");
    let mut line = Vec::with_capacity(body.len() + 48);
    line.extend_from_slice(b"{\"n\":");
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut v = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    line.extend_from_slice(&digits[i..]);
    if !inner.is_empty() {
        line.push(b',');
        line.extend_from_slice(inner.as_bytes());
    }
    // The checksum covers the line as it would read without it: `{"n":..,...}`.
    let crc = crc32c::crc32c_append(crc32c::crc32c(&line), b"}");
    line.extend_from_slice(b",\"crc\":\"");
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for shift in (0..8).rev() {
        line.push(HEX[((crc >> (shift * 4)) & 0xf) as usize]);
    }
    line.extend_from_slice(b"\"}\n");
    // Only ASCII was added to a `str`'s bytes.
    String::from_utf8(line).unwrap_or_default()
}

/// Why one whole line is not a record.
#[derive(Debug, PartialEq, Eq)]
pub enum BadLine {
    /// Its checksum does not match its bytes (or it has none).
    Checksum,
    /// It checks out but does not read as a record.
    Shape(String),
}

/// Reads one whole line (without its newline): its sequence number and record.
pub fn parse_line(line: &[u8]) -> Result<(u64, Record), BadLine> {
    let n = line.len();
    if n < CRC_TAIL + 2 || &line[n - CRC_TAIL..n - 10] != b",\"crc\":\"" || &line[n - 2..] != b"\"}"
    {
        return Err(BadLine::Checksum);
    }
    let covered = &line[..n - CRC_TAIL];
    // Only the lowercase digits the writer uses: `F` for `f` would be a changed byte whose
    // value still matches.
    let hex = &line[n - 10..n - 2];
    if !hex.iter().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(BadLine::Checksum);
    }
    let want = std::str::from_utf8(hex)
        .ok()
        .and_then(|h| u32::from_str_radix(h, 16).ok())
        .ok_or(BadLine::Checksum)?;
    if crc32c::crc32c_append(crc32c::crc32c(covered), b"}") != want {
        return Err(BadLine::Checksum);
    }
    let rest = covered
        .strip_prefix(b"{\"n\":")
        .ok_or_else(|| BadLine::Shape("no sequence number".into()))?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let seq = std::str::from_utf8(&rest[..digits])
        .ok()
        .and_then(|d| d.parse::<u64>().ok())
        .ok_or_else(|| BadLine::Shape("no sequence number".into()))?;
    let fields = match rest.get(digits) {
        Some(b',') => &rest[digits + 1..],
        _ => return Err(BadLine::Shape("no record after the sequence number".into())),
    };
    let mut json = Vec::with_capacity(fields.len() + 2);
    json.push(b'{');
    json.extend_from_slice(fields);
    json.push(b'}');
    let rec = serde_json::from_slice::<Record>(&json).map_err(|e| BadLine::Shape(e.to_string()))?;
    Ok((seq, rec))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_reads_back_with_its_number() {
        let r = Record::Out { bytes: 7 };
        let line = r.line(41);
        assert!(line.starts_with("{\"n\":41,\"t\":\"out\",\"bytes\":7,\"crc\":\""));
        let (n, back) = parse_line(line.trim_end().as_bytes()).expect("reads");
        assert_eq!((n, back), (41, r));
    }

    #[test]
    fn a_changed_byte_fails_the_checksum() {
        let line = Record::Out { bytes: 7 }.line(3);
        let mut bytes = line.trim_end().as_bytes().to_vec();
        bytes[12] ^= 1;
        assert_eq!(parse_line(&bytes).map(|_| ()), Err(BadLine::Checksum));
        assert_eq!(
            parse_line(b"{\"t\":\"out\",\"bytes\":7}").map(|_| ()),
            Err(BadLine::Checksum)
        );
    }

    #[test]
    fn an_uppercased_checksum_digit_is_a_changed_byte() {
        // Found by the damage test: `f` -> `F` parses to the same number.
        let mut bytes = (0..64u64)
            .map(|n| {
                Record::Out { bytes: n }
                    .line(n)
                    .trim_end()
                    .as_bytes()
                    .to_vec()
            })
            .find(|l| {
                l[l.len() - 10..l.len() - 2]
                    .iter()
                    .any(u8::is_ascii_lowercase)
            })
            .expect("a checksum with a letter");
        let n = bytes.len();
        let at = (n - 10..n - 2)
            .find(|&i| bytes[i].is_ascii_lowercase())
            .expect("letter");
        bytes[at] = bytes[at].to_ascii_uppercase();
        assert_eq!(parse_line(&bytes).map(|_| ()), Err(BadLine::Checksum));
    }
}
