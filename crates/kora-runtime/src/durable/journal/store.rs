//! Reading a journal file: every whole line is a record; a torn last line is dropped.
//!
//! A kill can stop a write mid-line, and only the last line can be torn because
//! records are appended in order; so a final line without its newline is the
//! remains of an interrupted append and is ignored. A line that is whole but does
//! not parse was damaged some other way, and the run refuses to guess.

use std::path::Path;

use super::record::Record;

/// Why a journal could not be read.
#[derive(Debug)]
pub enum LoadError {
    Io(std::io::Error),
    /// A whole line that is not a record, with its 1-based line number.
    Corrupt {
        line: usize,
        why: String,
    },
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            LoadError::Io(e) => write!(f, "{e}"),
            LoadError::Corrupt { line, why } => write!(
                f,
                "the journal is corrupt at line {line}: {why}; it was changed by something other than kora, so the run cannot be resumed safely"
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

/// Parses journal bytes.
pub fn parse(bytes: &[u8]) -> Result<Loaded, LoadError> {
    let mut records = Vec::new();
    let mut start = 0;
    let mut line_no = 0;
    while let Some(nl) = bytes[start..].iter().position(|&b| b == b'\n') {
        line_no += 1;
        let line = &bytes[start..start + nl];
        let rec = serde_json::from_slice::<Record>(line).map_err(|e| LoadError::Corrupt {
            line: line_no,
            why: e.to_string(),
        })?;
        records.push(rec);
        start += nl + 1;
    }
    Ok(Loaded {
        records,
        whole: start as u64,
    })
}

/// Reads a journal file.
pub fn load(path: &Path) -> Result<Loaded, LoadError> {
    let bytes = std::fs::read(path).map_err(LoadError::Io)?;
    parse(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn record() -> impl Strategy<Value = Record> {
        let text = "[a-z:#/._ \"\\\\é\n]{0,12}";
        prop_oneof![
            (text, text).prop_map(|(slot, call)| Record::Sent {
                slot,
                kind: "sql_write".into(),
                call,
            }),
            (text, any::<i64>(), any::<bool>()).prop_map(|(slot, n, d)| Record::Done {
                slot,
                kind: "clock".into(),
                result: json!({ "ok": n }),
                digest: d.then(|| "ab".repeat(32)),
            }),
            any::<u64>().prop_map(|bytes| Record::Out { bytes }),
            text.prop_map(|detail| Record::Status {
                state: "running".into(),
                detail,
            }),
        ]
    }

    proptest! {
        /// Loading a journal cut anywhere equals the records written before the cut.
        #[test]
        fn any_truncation_loads_the_records_before_the_cut(
            recs in proptest::collection::vec(record(), 0..12),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut bytes = Vec::new();
            let mut ends = Vec::new();
            for r in &recs {
                bytes.extend_from_slice(r.line().as_bytes());
                ends.push(bytes.len());
            }
            let cut = cut.index(bytes.len() + 1);
            let loaded = parse(&bytes[..cut]).expect("a truncated journal loads");
            let whole = ends.iter().filter(|&&e| e <= cut).count();
            prop_assert_eq!(&loaded.records[..], &recs[..whole]);
            prop_assert_eq!(loaded.whole as usize, if whole == 0 { 0 } else { ends[whole - 1] });
        }
    }

    #[test]
    fn a_bad_line_before_the_end_is_corruption_with_its_number() {
        let good = Record::Out { bytes: 3 }.line();
        let text = format!("{good}{{not json\n{good}");
        match parse(text.as_bytes()) {
            Err(LoadError::Corrupt { line, .. }) => assert_eq!(line, 2),
            other => panic!("expected corruption, got {other:?}"),
        }
    }
}
