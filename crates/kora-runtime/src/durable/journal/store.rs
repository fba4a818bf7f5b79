//! Reading a journal file: every whole line is a checked record in sequence; only a torn last line is dropped.
//!
//! A kill can stop a write mid-line, and records are appended in order, so the
//! one line a kill can leave unfinished is the last, and it has no newline. Every
//! whole line carries its sequence number and a CRC32C: a line that fails its
//! checksum, or a number out of sequence, was damaged some other way (a disk, an
//! editor, a copy cut short), and the run refuses to guess. So does a journal
//! shorter than what its writer last synced (`synced`, beside it): a file cut
//! at a line boundary is otherwise indistinguishable from a run that stopped there.

use std::path::Path;

use super::record::{parse_line, BadLine, Record, FORMAT};

/// Why a journal could not be read.
#[derive(Debug)]
pub enum LoadError {
    Io(std::io::Error),
    /// A whole line that is not a record in sequence, with its 1-based line number.
    Corrupt {
        line: usize,
        why: String,
    },
    /// The journal was written by a kora with another journal format.
    Format {
        found: u32,
    },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            LoadError::Io(e) => write!(f, "{e}"),
            LoadError::Corrupt { line, why } => write!(
                f,
                "the journal is damaged at line {line}: {why}; something other than kora changed it, so the run cannot be resumed safely (start a new run)"
            ),
            LoadError::Format { found } if *found < FORMAT => write!(
                f,
                "the journal was written in format {found} by an older kora, and this kora reads format {FORMAT} only (its lines carry checksums and its secrets are sealed); finish the run with the kora that started it, or start a new run"
            ),
            LoadError::Format { found } => write!(
                f,
                "the journal was written in format {found} by a newer kora, and this kora reads format {FORMAT} only; resume it with the kora that started it"
            ),
        }
    }
}

/// What a journal file holds: its records and how many bytes of it are whole lines.
#[derive(Debug)]
pub struct Loaded {
    pub records: Vec<Record>,
    /// The length of the file's whole lines; appends continue from here.
    pub whole: u64,
}

impl Loaded {
    /// The sequence number the next appended record takes.
    pub fn next_seq(&self) -> u64 {
        self.records.len() as u64
    }
}

/// Parses journal bytes; `synced` is how many bytes its writer last knew were on disk.
pub fn parse(bytes: &[u8], synced: u64) -> Result<Loaded, LoadError> {
    let mut records = Vec::new();
    let mut start = 0;
    let mut line_no = 0;
    while let Some(nl) = bytes[start..].iter().position(|&b| b == b'\n') {
        line_no += 1;
        let line = &bytes[start..start + nl];
        let (seq, rec) = match parse_line(line) {
            Ok(r) => r,
            // A journal of an older format has no checksums: say so rather than "damaged".
            Err(_) if line_no == 1 => return Err(header_problem(line)),
            Err(BadLine::Checksum) => return Err(corrupt(line_no, "its checksum does not match")),
            Err(BadLine::Shape(why)) => return Err(corrupt(line_no, &why)),
        };
        if seq != records.len() as u64 {
            return Err(corrupt(
                line_no,
                &format!("it is record {seq} where record {} belongs", records.len()),
            ));
        }
        match (&rec, line_no) {
            (Record::Header { format, .. }, 1) if *format != FORMAT => {
                return Err(LoadError::Format { found: *format })
            }
            (Record::Header { .. }, 1) => {}
            (_, 1) => return Err(corrupt(1, "the first line is not the run's header")),
            (Record::Header { .. }, _) => return Err(corrupt(line_no, "a second header")),
            _ => {}
        }
        records.push(rec);
        start += nl + 1;
    }
    if (start as u64) < synced {
        return Err(corrupt(
            line_no + 1,
            &format!(
                "the file ends after {start} whole bytes, but kora had synced {synced}; records were cut off"
            ),
        ));
    }
    Ok(Loaded {
        records,
        whole: start as u64,
    })
}

fn corrupt(line: usize, why: &str) -> LoadError {
    LoadError::Corrupt {
        line,
        why: why.to_string(),
    }
}

/// A first line that is not a checked record: an older format's header, or damage.
fn header_problem(line: &[u8]) -> LoadError {
    // Only a line with neither a sequence number nor a checksum is an older format's; a
    // numbered line that fails its checksum is damage, whatever format it claims.
    let format = serde_json::from_slice::<serde_json::Value>(line)
        .ok()
        .filter(|j| j.get("t").and_then(|t| t.as_str()) == Some("header"))
        .filter(|j| j.get("n").is_none() && j.get("crc").is_none())
        .and_then(|j| j.get("format").and_then(|f| f.as_u64()));
    match format {
        Some(f) if f != u64::from(FORMAT) => LoadError::Format {
            found: u32::try_from(f).unwrap_or(u32::MAX),
        },
        _ => corrupt(1, "the header's checksum does not match"),
    }
}

/// The file beside a journal that holds how many of its bytes were last synced.
pub fn synced_path(journal: &Path) -> std::path::PathBuf {
    journal.with_file_name("synced")
}

/// Reads the synced length beside `journal` (0 when there is none or it cannot be read: it
/// only ever raises the bar, so a missing one makes the check weaker, never wrong).
pub fn read_synced(journal: &Path) -> u64 {
    std::fs::read_to_string(synced_path(journal))
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// Reads a journal file.
pub fn load(path: &Path) -> Result<Loaded, LoadError> {
    let bytes = std::fs::read(path).map_err(LoadError::Io)?;
    parse(&bytes, read_synced(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn header() -> Record {
        Record::Header {
            format: FORMAT,
            run: "r".into(),
            program: "p.ko".into(),
            digest: "d".into(),
            args: Vec::new(),
            model: None,
            config: None,
        }
    }

    fn record() -> impl Strategy<Value = Record> {
        let text = "[a-z:#/._ \"\\\\é\n]{0,12}";
        prop_oneof![
            (text, text).prop_map(|(slot, call)| Record::Sent {
                slot,
                kind: "sql_write".into(),
                call,
                check: None,
                target: String::new(),
                done_as: None,
            }),
            (text, any::<i64>(), any::<bool>()).prop_map(|(slot, n, d)| Record::Done {
                slot,
                kind: "clock".into(),
                result: json!({ "ok": n }),
                digest: d.then(|| "ab".repeat(32)),
                keyed: None,
                sealed: None,
            }),
            any::<u64>().prop_map(|bytes| Record::Out { bytes }),
            text.prop_map(|detail| Record::Status {
                state: "running".into(),
                detail,
            }),
        ]
    }

    fn journal(recs: &[Record]) -> (Vec<u8>, Vec<usize>) {
        let mut bytes = Vec::new();
        let mut ends = Vec::new();
        for (n, r) in std::iter::once(&header()).chain(recs).enumerate() {
            bytes.extend_from_slice(r.line(n as u64).as_bytes());
            ends.push(bytes.len());
        }
        (bytes, ends)
    }

    proptest! {
        /// Cut anywhere past what was synced, a journal loads as the records before the cut;
        /// cut before it, it is refused.
        #[test]
        fn a_cut_loads_the_records_before_it_unless_it_cuts_synced_records(
            recs in proptest::collection::vec(record(), 0..12),
            cut in any::<prop::sample::Index>(),
            synced in any::<prop::sample::Index>(),
        ) {
            let (bytes, ends) = journal(&recs);
            let cut = cut.index(bytes.len() + 1);
            let synced = ends[synced.index(ends.len())] as u64;
            let whole = ends.iter().filter(|&&e| e <= cut).count();
            match parse(&bytes[..cut], synced) {
                Ok(loaded) => {
                    prop_assert!(cut as u64 >= synced);
                    prop_assert_eq!(loaded.records.len(), whole);
                    prop_assert_eq!(&loaded.records[1..], &recs[..whole - 1]);
                    prop_assert_eq!(loaded.whole as usize, ends[whole - 1]);
                }
                Err(LoadError::Corrupt { line, .. }) => {
                    prop_assert!((cut as u64) < synced);
                    prop_assert_eq!(line, whole + 1);
                }
                Err(e) => prop_assert!(false, "{e}"),
            }
        }

        /// One byte changed anywhere in a whole line is refused with that line's number.
        #[test]
        fn a_changed_byte_is_refused_with_its_line(
            recs in proptest::collection::vec(record(), 1..12),
            at in any::<prop::sample::Index>(),
            to in any::<u8>(),
        ) {
            let (mut bytes, ends) = journal(&recs);
            let at = at.index(bytes.len());
            prop_assume!(bytes[at] != to);
            bytes[at] = to;
            let line = ends.iter().filter(|&&e| e <= at).count() + 1;
            match parse(&bytes, 0) {
                Err(LoadError::Corrupt { line: l, .. }) => prop_assert_eq!(l, line),
                // The last newline changed: that line is now a torn tail, and nothing had synced it.
                Ok(loaded) => {
                    prop_assert_eq!(at, bytes.len() - 1);
                    prop_assert_eq!(loaded.records.len(), recs.len());
                }
                Err(e) => prop_assert!(false, "{e}"),
            }
        }
    }

    #[test]
    fn a_bad_line_before_the_end_is_corruption_with_its_number() {
        let (bytes, _) = journal(&[Record::Out { bytes: 3 }, Record::Out { bytes: 4 }]);
        let text = String::from_utf8(bytes).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        let changed = format!(
            "{}\n{}\n{}\n",
            lines[0],
            lines[1].replace('3', "5"),
            lines[2]
        );
        match parse(changed.as_bytes(), 0) {
            Err(LoadError::Corrupt { line, .. }) => assert_eq!(line, 2),
            other => panic!("expected corruption, got {other:?}"),
        }
    }

    #[test]
    fn a_dropped_or_repeated_line_is_a_gap_in_sequence() {
        let (bytes, _) = journal(&[Record::Out { bytes: 3 }, Record::Out { bytes: 4 }]);
        let text = String::from_utf8(bytes).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        for (text, at) in [
            (format!("{}\n{}\n", lines[0], lines[2]), 2),
            (format!("{}\n{}\n{}\n", lines[0], lines[1], lines[1]), 3),
        ] {
            match parse(text.as_bytes(), 0) {
                Err(LoadError::Corrupt { line, why }) => {
                    assert_eq!(line, at);
                    assert!(why.contains("where record"), "{why}");
                }
                other => panic!("expected a gap, got {other:?}"),
            }
        }
    }

    #[test]
    fn an_older_format_is_named_not_called_damage() {
        let old = "{\"t\":\"header\",\"format\":2,\"run\":\"r\",\"program\":\"p\",\"digest\":\"d\",\"args\":[]}\n";
        let e = parse(old.as_bytes(), 0).expect_err("refused");
        assert!(matches!(e, LoadError::Format { found: 2 }), "{e:?}");
        assert!(e.to_string().contains("format 2 by an older kora"), "{e}");
    }
}
