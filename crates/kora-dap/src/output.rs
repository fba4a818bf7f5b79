//! The program's standard output, turned into `output` events as it is written.

use std::io::Write;
use std::sync::mpsc::Sender;

use crate::link::Msg;

/// A `Write` that forwards complete UTF-8 text to the protocol thread.
pub struct ProgramOutput {
    tx: Sender<Msg>,
    /// Bytes of a character split across two writes.
    pending: Vec<u8>,
}

impl ProgramOutput {
    pub fn new(tx: Sender<Msg>) -> ProgramOutput {
        ProgramOutput {
            tx,
            pending: Vec::new(),
        }
    }

    fn emit(&mut self, text: String) -> std::io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.tx
            .send(Msg::Output {
                stderr: false,
                text,
            })
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the editor is gone"))
    }
}

impl Write for ProgramOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            // Not UTF-8 at all: show it rather than hold it back forever.
            Err(_) => self.pending.len(),
        };
        let rest = self.pending.split_off(valid);
        let text =
            String::from_utf8_lossy(&std::mem::replace(&mut self.pending, rest)).into_owned();
        self.emit(text)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let text = String::from_utf8_lossy(&std::mem::take(&mut self.pending)).into_owned();
        self.emit(text)
    }
}
