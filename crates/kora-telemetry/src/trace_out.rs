//! Where the encoder's span JSON goes: a buffer written to the trace file whenever it
//! fills, so a long run streams its trace with bounded memory, or kept in memory.
//!
//! It is the encoder's (`encoder.rs`), so for a run past its first batch the file is
//! written by the encoder's thread, not the interpreter's: 64 KiB at a time, about a
//! hundred model-call spans.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;

use crate::recorder::Streamed;

/// How much JSON waits before it is written: about a hundred model-call spans.
const FLUSH_AT: usize = 1 << 16;

/// The trace file being written, and how its envelope ends.
struct FileSink {
    tmp: PathBuf,
    file: File,
    suffix: Vec<u8>,
    /// The first write error: nothing more is written after it.
    failed: bool,
    /// A spare trace being written over (`recycle.rs`): cut to `written` at the end.
    recycled: bool,
    written: u64,
}

/// A run's span JSON as it is produced.
pub(crate) struct TraceOut {
    buf: Vec<u8>,
    /// No span written yet: the next needs no comma before it.
    first: bool,
    file: Option<FileSink>,
}

impl TraceOut {
    /// The span items collected in memory, comma-separated.
    pub(crate) fn memory() -> TraceOut {
        TraceOut {
            buf: Vec::with_capacity(FLUSH_AT),
            first: true,
            file: None,
        }
    }

    /// A trace file: `prefix` is the envelope up to the `spans` array's first item;
    /// `recycled` when `file` is a spare whose old bytes must be cut off at the end.
    pub(crate) fn file(
        tmp: PathBuf,
        file: File,
        recycled: bool,
        prefix: Vec<u8>,
        suffix: Vec<u8>,
    ) -> TraceOut {
        let mut buf = Vec::with_capacity(FLUSH_AT + 4096);
        buf.extend_from_slice(&prefix);
        TraceOut {
            buf,
            first: true,
            file: Some(FileSink {
                tmp,
                file,
                suffix,
                failed: false,
                recycled,
                written: 0,
            }),
        }
    }

    /// The buffer to append one span item to, after the comma that separates it.
    pub(crate) fn item(&mut self) -> &mut Vec<u8> {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        &mut self.buf
    }

    /// Called after each item: writes the buffer out once it is full.
    pub(crate) fn written(&mut self) {
        if self.buf.len() >= FLUSH_AT {
            if let Some(f) = &mut self.file {
                f.write(&self.buf);
                self.buf.clear();
            }
        }
    }

    /// Ends the JSON: a file gets the rest of its envelope. `kept` says whether the recorder
    /// kept every span, so a broken file can be written again whole.
    pub(crate) fn finish(self, kept: bool) -> Streamed {
        let Some(mut f) = self.file else {
            return Streamed::Memory(self.buf);
        };
        // One write for the rest: a system call costs more here than the copy.
        let mut rest = self.buf;
        rest.extend_from_slice(&f.suffix);
        rest.push(b'\n');
        f.write(&rest);
        if !f.failed && f.file.flush().is_err() {
            f.failed = true;
        }
        if f.recycled && !f.failed && f.file.set_len(f.written).is_err() {
            f.failed = true;
        }
        match f.failed {
            false => Streamed::File(f.tmp),
            true => Streamed::Broken(f.tmp, kept),
        }
    }
}

impl FileSink {
    fn write(&mut self, bytes: &[u8]) {
        if !self.failed && self.file.write_all(bytes).is_err() {
            self.failed = true;
        }
        self.written += bytes.len() as u64;
    }
}
