//! How a recorder's batches reach the encoder: on a thread of its own for a trace file, so
//! the interpreter's thread only fills records, or in place for a recording kept in memory.
//!
//! Whole batches cross, never single spans: one channel send per few hundred records. The
//! channel is bounded, so an encoder that falls behind (a slow disk) holds the program
//! back instead of letting memory grow, and the encoder sends emptied batches back, so a
//! long run keeps reusing the same few buffers. The thread starts with the first full
//! batch, so a run of a few spans (most runs: a handful of model calls) never pays for
//! one. When the recording finishes, on a run's normal and error exits alike, the thread hands
//! the encoder back once every record is encoded; it is not joined, so its own ending (its
//! stack and allocator heap given back: about 0.1 ms here) overlaps the end of the run.

use std::mem;
use std::path::PathBuf;
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};

use crate::encoder::Encoder;
use crate::span_event::{Batch, STREAMING_BATCH};

/// Full batches waiting for the encoder at most; past that, handing one over waits.
const QUEUED: usize = 4;

/// Where full batches go.
pub(crate) enum Handoff {
    /// Encoded on the recorder's own thread as each batch fills.
    InPlace(Box<Encoder>),
    /// A trace file whose encoder gets a thread once a batch fills; until then (and at the
    /// end) batches are encoded in place. The file, to report it broken if the thread is lost.
    Deferred(Box<Encoder>, Option<PathBuf>),
    Thread(Worker),
    /// The encoder's thread ended early (it panicked): records are dropped, and the
    /// trace file, if any, is reported broken at the end.
    Lost(Option<PathBuf>),
}

/// The encoder's thread, as its channels: full batches there, empty ones and at the end
/// the encoder itself back.
pub(crate) struct Worker {
    full: SyncSender<Batch>,
    empty: Receiver<Batch>,
    /// Closed without a message when the thread panicked.
    done: Receiver<Box<Encoder>>,
    /// The trace file being written, to report it broken if the thread is lost.
    tmp: Option<PathBuf>,
}

impl Handoff {
    /// Starts the encoder's thread; encodes in place if no thread can be started.
    pub(crate) fn spawn(enc: Box<Encoder>, tmp: Option<PathBuf>) -> Handoff {
        let (full, full_rx) = sync_channel::<Batch>(QUEUED);
        let (empty_tx, empty) = channel::<Batch>();
        // The encoder follows the thread once it runs, so a failed start still has it. Boxed,
        // because a channel's first send zeroes room for a block of 31 of what it carries.
        let (give, given) = channel::<Box<Encoder>>();
        let (give_back, done) = channel::<Box<Encoder>>();
        let started = std::thread::Builder::new()
            .name("kora-trace".into())
            .spawn(move || {
                let Ok(mut enc) = given.recv() else {
                    return;
                };
                while let Ok(mut batch) = full_rx.recv() {
                    enc.take(&mut batch);
                    // The recorder may have finished already; then the batch is simply freed.
                    let _ = empty_tx.send(batch);
                }
                let _ = give_back.send(enc);
            });
        match started {
            Ok(_detached) => match give.send(enc) {
                Ok(()) => Handoff::Thread(Worker {
                    full,
                    empty,
                    done,
                    tmp,
                }),
                Err(back) => Handoff::InPlace(back.0),
            },
            Err(_) => Handoff::InPlace(enc),
        }
    }

    /// Hands `batch` over and leaves an empty one in its place; `full` when it was handed
    /// for its size rather than its age.
    pub(crate) fn hand(&mut self, batch: &mut Batch, full: bool) {
        if full {
            if let Handoff::Deferred(..) = self {
                let Handoff::Deferred(enc, tmp) = mem::replace(self, Handoff::Lost(None)) else {
                    return;
                };
                *self = Handoff::spawn(enc, tmp);
            }
        }
        match self {
            Handoff::InPlace(enc) | Handoff::Deferred(enc, _) => enc.take(batch),
            Handoff::Thread(w) => {
                // Sized for the batches that cross from now on, not for the first, larger one.
                let next = w
                    .empty
                    .try_recv()
                    .unwrap_or_else(|_| Batch::with_room(STREAMING_BATCH));
                if w.full.send(mem::replace(batch, next)).is_err() {
                    let tmp = w.tmp.take();
                    *self = Handoff::Lost(tmp);
                }
            }
            Handoff::Lost(_) => {
                batch.events.clear();
                batch.calls.clear();
            }
        }
    }

    /// The encoder, while it is still on this thread (before the first batch is handed over).
    pub(crate) fn encoder_mut(&mut self) -> Option<&mut Encoder> {
        match self {
            Handoff::InPlace(enc) | Handoff::Deferred(enc, _) => Some(enc),
            Handoff::Thread(_) | Handoff::Lost(_) => None,
        }
    }

    /// Whether batches go to the encoder's own thread.
    pub(crate) fn is_thread(&self) -> bool {
        matches!(self, Handoff::Thread(_))
    }

    /// Hands over the last records and waits for the encoder to take them all; `Err` carries
    /// the trace file to report broken when the encoder's thread was lost.
    pub(crate) fn finish(mut self, mut last: Batch) -> Result<Encoder, Option<PathBuf>> {
        self.hand(&mut last, false);
        match self {
            Handoff::InPlace(enc) | Handoff::Deferred(enc, _) => Ok(*enc),
            Handoff::Thread(w) => {
                // Closing the channel ends the thread's loop once the queue is drained.
                drop(w.full);
                w.done.recv().map(|enc| *enc).map_err(|_| w.tmp)
            }
            Handoff::Lost(tmp) => Err(tmp),
        }
    }
}
