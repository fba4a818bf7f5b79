//! `notes`: a run's scratch space, kept on disk under `.kora/notes/RUN_ID/notes.jsonl` and readable from outside (`kora notes RUN_ID`).
//!
//! Each `write` appends one JSON line `{"key": ..., "value": ...}`; the last
//! line for a key wins. Appending is what makes the file safe to read while
//! the run is still writing it, and keeps a crash from losing earlier notes.
//! A classified value is kept sealed with the machine key (`"sealed"` instead of
//! `"value"`): the file never holds its text, and only this machine reads it back.
//! The project folder is the one holding `kora.toml`, else the program's.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use indexmap::IndexMap;

use kora_check::std_api::StdFn;

use super::typed::Lenience;
use super::{err, ok, str_list, Args};
use crate::durable::effect::{Kind, Observation};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::Value;

/// Where a project keeps its runs' notes.
pub fn notes_root(project_dir: &Path) -> PathBuf {
    project_dir.join(".kora").join("notes")
}

/// A problem reading notes from outside a run.
#[derive(Debug)]
pub struct NotesError(pub String);

impl std::fmt::Display for NotesError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A run id is a file name: letters, digits, `-`, `_` and `.`, never a path.
pub fn valid_run_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

fn file_of(project_dir: &Path, run_id: &str) -> PathBuf {
    notes_root(project_dir).join(run_id).join("notes.jsonl")
}

/// The runs that have notes, oldest first (ids sort by start time).
pub fn list_runs(project_dir: &Path) -> Result<Vec<String>, NotesError> {
    let root = notes_root(project_dir);
    let rd = match std::fs::read_dir(&root) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(NotesError(format!("cannot read {}: {e}", root.display()))),
    };
    let mut out: Vec<String> = rd
        .filter_map(Result::ok)
        .filter(|e| e.path().join("notes.jsonl").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    Ok(out)
}

/// A run's notes, each key with its latest value as JSON text, in first-written order.
pub fn read_notes(project_dir: &Path, run_id: &str) -> Result<Vec<(String, String)>, NotesError> {
    if !valid_run_id(run_id) {
        return Err(NotesError(format!(
            "{run_id:?} is not a run id (letters, digits, `-`, `_`, `.`)"
        )));
    }
    let path = file_of(project_dir, run_id);
    let text = std::fs::read_to_string(&path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            NotesError(format!(
                "run {run_id} has no notes under {}",
                notes_root(project_dir).display()
            ))
        } else {
            NotesError(format!("cannot read {}: {e}", path.display()))
        }
    })?;
    // Read from outside the run, a classified note shows as the placeholder: this is output.
    fold(&text)
        .map(|m| {
            m.into_iter()
                .map(|(k, n)| {
                    let shown = if n.secret {
                        serde_json::Value::from(crate::labels::label::placeholder()).to_string()
                    } else {
                        n.text
                    };
                    (k, shown)
                })
                .collect()
        })
        .map_err(|m| NotesError(format!("{}: {m}", path.display())))
}

/// One key's latest note as the file holds it.
struct Note {
    /// The value's JSON text, or its sealed form.
    text: String,
    /// Classified when it was written.
    secret: bool,
    sealed: bool,
}

/// Where a sealed note belongs: it opens only as this key of this run.
fn context(run_id: &str, key: &str) -> String {
    format!("kora notes\0{run_id}\0{key}")
}

/// Latest value per key. A torn last line (a crash mid-append) is ignored, not fatal.
fn fold(text: &str) -> Result<IndexMap<String, Note>, String> {
    let mut m = IndexMap::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let j: serde_json::Value = match serde_json::from_str(line) {
            Ok(j) => j,
            Err(_) if i + 1 == lines.len() => break,
            Err(e) => return Err(format!("line {}: {e}", i + 1)),
        };
        let secret = j.get("classified").and_then(|c| c.as_bool()) == Some(true);
        let k = j.get("key").and_then(|k| k.as_str());
        let note = match (j.get("value"), j.get("sealed").and_then(|s| s.as_str())) {
            (Some(v), _) => Note {
                text: v.to_string(),
                secret,
                sealed: false,
            },
            (None, Some(s)) => Note {
                text: s.to_string(),
                secret: true,
                sealed: true,
            },
            (None, None) => return Err(format!("line {}: not a note", i + 1)),
        };
        let Some(k) = k else {
            return Err(format!("line {}: not a note", i + 1));
        };
        m.insert(k.to_string(), note);
    }
    Ok(m)
}

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    let call = a.name();
    match a.func {
        StdFn::NotesRunId => Ok(Value::str(it.host().run_id.clone())),
        StdFn::NotesWrite => {
            let key = a.str(0)?.to_string();
            let given = a.value(1)?;
            // The note keeps its label: a classified value comes back classified.
            let secret = crate::labels::label::deep(given).is_some_and(|t| t.is_classified());
            let given = crate::labels::label::reveal(given);
            let mut value = String::new();
            super::json::encode(&it.prog, &given, None, 0, &mut value).map_err(|m| {
                RtError::new(
                    codes::NOT_ENCODABLE,
                    format!("{m} (a note must be JSON-shaped)"),
                )
            })?;
            let host = it.host();
            let path = file_of(&host.project_dir, &host.run_id);
            let run_id = host.run_id.clone();
            let r = host.effect(&a.effect(Kind::Notes, &key, &call), |_| {
                let line = if secret {
                    let sealed = crate::durable::machine_key::key().and_then(|k| {
                        crate::durable::seal::seal(k, &context(&run_id, &key), value.as_bytes())
                    });
                    let sealed = sealed
                        .map_err(|why| format!("cannot keep the classified note {key:?}: {why}"))?;
                    serde_json::json!({ "key": key, "classified": true, "sealed": sealed })
                        .to_string()
                        + "\n"
                } else {
                    let line = serde_json::json!({ "key": key }).to_string();
                    // `{"key": K}` + `, "value": V}`: the value is already JSON text.
                    format!("{}, \"value\": {value}}}\n", &line[..line.len() - 1])
                };
                if let Some(dir) = path.parent() {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
                }
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                f.write_all(line.as_bytes())
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                Ok(())
            })?;
            Ok(match r {
                Ok(()) => ok(Value::None),
                Err(why) => err(why),
            })
        }
        StdFn::NotesRead | StdFn::NotesKeys => {
            let key = if a.func == StdFn::NotesRead {
                a.str(0)?.to_string()
            } else {
                String::new()
            };
            let host = it.host();
            let path = file_of(&host.project_dir, &host.run_id);
            let run_id = host.run_id.clone();
            let keys = a.func == StdFn::NotesKeys;
            let r = host.effect(&a.effect(Kind::Notes, &key, &call), |s| {
                let text = match std::fs::read_to_string(&path) {
                    Ok(t) => t,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
                    Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
                };
                s.observe(Observation::Read(text.as_bytes()));
                let m = fold(&text)?;
                // A note read is journaled as its text and whether it was classified; a
                // journal keeps a classified one sealed.
                if keys {
                    return Ok(m.keys().cloned().collect::<Vec<String>>());
                }
                let Some(n) = m.get(&key) else {
                    return Ok(Vec::new());
                };
                let text = if n.sealed {
                    let opened = crate::durable::machine_key::key().and_then(|k| {
                        crate::durable::seal::open(k, &context(&run_id, &key), &n.text)
                    });
                    let opened =
                        opened.map_err(|why| format!("cannot read the note {key:?}: {why}"))?;
                    String::from_utf8(opened)
                        .map_err(|_| format!("the note {key:?} is not text"))?
                } else {
                    n.text.clone()
                };
                if n.secret {
                    s.classified(None);
                }
                Ok(vec![text, n.secret.to_string()])
            })?;
            let found = match r {
                Ok(v) => v,
                Err(why) => return Ok(err(why)),
            };
            if keys {
                return Ok(ok(str_list(found)));
            }
            let stored = !found.is_empty();
            let secret = found.get(1).is_some_and(|s| s == "true");
            let v = match found.first() {
                None => a.get(1).cloned().unwrap_or(Value::None),
                Some(text) => match super::json::parse_untyped(text) {
                    Ok(v) => v,
                    Err(why) => return Ok(err(format!("note {key:?}: {why}"))),
                },
            };
            Ok(match it.narrow_root(v, &a.expect, Lenience::Strict) {
                Ok(v) if stored => {
                    // What is on disk is unverified, whoever wrote it (the record's notes design).
                    let origin = crate::labels::label::origin(&format!("the note {key:?}"));
                    let v = crate::labels::label::on_strings(
                        v,
                        crate::labels::label::Tag::unverified(origin),
                    );
                    let v = if secret {
                        crate::labels::label::wrap(v, crate::labels::label::Tag::classified(origin))
                    } else {
                        v
                    };
                    ok(v)
                }
                Ok(v) => ok(v),
                Err(why) => err(format!("note {key:?}: {why}")),
            })
        }
        _ => unreachable!("notes::call got {:?}", a.func),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_write_wins_and_a_torn_tail_is_ignored() {
        let m = fold("{\"key\": \"a\", \"value\": 1}\n{\"key\": \"b\", \"value\": [1]}\n{\"key\": \"a\", \"value\": 2}\n{\"key\": \"c\", \"va").expect("folds");
        assert_eq!(m.get("a").map(|n| n.text.as_str()), Some("2"));
        assert_eq!(m.keys().cloned().collect::<Vec<_>>(), vec!["a", "b"]);
    }

    #[test]
    fn run_ids_are_file_names() {
        assert!(valid_run_id("20261202-120000-abcdef"));
        assert!(!valid_run_id("../etc"));
        assert!(!valid_run_id("a/b"));
        assert!(!valid_run_id(""));
    }
}
