//! One journal line: a header, an effect's attempt or outcome, printed output, or a status change.

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// The journal format this build writes and reads. Older files are refused, never guessed at.
pub const FORMAT: u32 = 2;

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
        /// A digest per `kora.toml` table the run started under (absent in journals from before it was kept).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        config: Option<std::collections::BTreeMap<String, String>>,
    },
    /// A two-phase effect is about to act on the world (synced before it is performed).
    Sent {
        slot: String,
        kind: String,
        call: String,
    },
    /// An effect's outcome as the pipeline records it (`{"ok": ..}` / `{"err": ..}`).
    Done {
        slot: String,
        kind: String,
        result: Json,
        /// SHA-256 of what a read saw, checked again on resume.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        digest: Option<String>,
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

impl Record {
    /// The line as written: compact JSON and a newline.
    pub fn line(&self) -> String {
        let mut s = serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string());
        s.push('\n');
        s
    }
}
