//! Program output under a durable run: what an earlier process already showed is not shown again.
//!
//! The program is deterministic between effects and its effects replay, so a
//! resumed run prints the same bytes in the same order; the first `shown` of
//! them reached the terminal before the kill. A piece written but not yet
//! recorded when the kill came is shown twice: output is at-least-once, the one
//! effect the journal does not sync for.

use std::io::Write;
use std::sync::Arc;

use super::run::Run;

/// Wraps the terminal; each write is flushed, then recorded.
pub struct JournaledOut<W: Write> {
    run: Arc<Run>,
    inner: W,
    skip: u64,
}

impl<W: Write> JournaledOut<W> {
    pub fn new(run: Arc<Run>, inner: W) -> JournaledOut<W> {
        let skip = run.past.out_bytes;
        JournaledOut { run, inner, skip }
    }
}

impl<W: Write> Write for JournaledOut<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let already = (self.skip.min(buf.len() as u64)) as usize;
        self.skip -= already as u64;
        let rest = &buf[already..];
        if !rest.is_empty() {
            // What is shown may derive from an unsynced effect (a clock reading, a draw):
            // it must be durable before anyone can see its consequence.
            self.run.settle();
            self.inner.write_all(rest)?;
            self.inner.flush()?;
            self.run.shown(rest.len() as u64);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
