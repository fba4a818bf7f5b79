//! How a resume tells whether a local write happened: what its attempt record says to look at, and the look.
//!
//! A write to this machine can be made checkable: a SQLite write commits a row
//! `(run, effect)` in `_kora_effects` in the same transaction, an `fs.write` puts its
//! content in place by rename (so the file holds the old content or all of the new),
//! and an `fs.append` lands at a known offset after every earlier append of the run.
//! The attempt record carries what to look at; a resume looks before it runs
//! anything, so an attempt cut off by a kill is settled rather than a dead end.
//! What is outside the machine (an HTTP POST, a tool) has no check: a person decides.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use sha2::{Digest, Sha256};

/// The table of Kora's own, in a database a durable run writes, that says which writes committed.
pub const EFFECTS_TABLE: &str = "_kora_effects";

/// What an attempt record says to look at.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// A row for this run and slot in `_kora_effects` of the database at `db`.
    Sql { db: String },
    /// The file holds exactly this content (SHA-256, hex).
    File { path: String, sha256: String },
    /// `len` bytes with this digest at offset `at` of the file.
    Append {
        path: String,
        at: u64,
        len: u64,
        sha256: String,
    },
    /// Nothing is at the path any more.
    Removed { path: String },
    /// A folder is at the path.
    Folder { path: String },
    /// Doing it again is harmless (a PRAGMA, VACUUM): it is simply performed again.
    Repeatable,
}

/// What a look found.
#[derive(Clone, Debug, PartialEq)]
pub enum Found {
    /// It happened: this is the outcome to replay.
    Done(Json),
    /// It did not happen: the resume performs it when it gets there.
    NotRun,
    /// An append was cut off part-way: the file is cut back to `at`, then it counts as not run.
    Partial { path: String, at: u64 },
    /// The world does not say (something else changed it): a person decides.
    Unknown(String),
}

impl Check {
    /// Looks at the world (reads only; a partial append is reported, not cut).
    pub fn look(&self, run: &str, slot: &str) -> Found {
        match self {
            Check::Sql { db } => look_sql(db, run, slot),
            Check::File { path, sha256 } => match file_digest(Path::new(path)) {
                Ok(Some(d)) if d == *sha256 => Found::Done(json!({ "ok": null })),
                Ok(_) => Found::NotRun,
                Err(e) => Found::Unknown(format!("cannot read `{path}`: {e}")),
            },
            Check::Append {
                path,
                at,
                len,
                sha256,
            } => look_append(path, *at, *len, sha256),
            Check::Removed { path } => match std::fs::symlink_metadata(path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    Found::Done(json!({ "ok": null }))
                }
                _ => Found::NotRun,
            },
            Check::Folder { path } => match std::fs::metadata(path) {
                Ok(m) if m.is_dir() => Found::Done(json!({ "ok": null })),
                _ => Found::NotRun,
            },
            Check::Repeatable => Found::NotRun,
        }
    }
}

/// SHA-256 of a file's content, `None` when there is no file.
fn file_digest(path: &Path) -> std::io::Result<Option<String>> {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 << 10];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(Some(super::run::hex(&h.finalize())))
}

fn look_append(path: &str, at: u64, len: u64, sha256: &str) -> Found {
    let mut f = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Found::NotRun,
        Err(e) => return Found::Unknown(format!("cannot read `{path}`: {e}")),
    };
    let size = match f.metadata() {
        Ok(m) => m.len(),
        Err(e) => return Found::Unknown(format!("cannot read `{path}`: {e}")),
    };
    if size <= at {
        return Found::NotRun;
    }
    if size < at + len {
        // Appends go out in order, so only the last can be cut off part-way.
        return Found::Partial {
            path: path.to_string(),
            at,
        };
    }
    let mut region = vec![0u8; len as usize];
    let read = f
        .seek(SeekFrom::Start(at))
        .and_then(|_| f.read_exact(&mut region));
    match read {
        Ok(()) if super::run::hex(&Sha256::digest(&region)) == sha256 => {
            Found::Done(json!({ "ok": null }))
        }
        Ok(()) => Found::Unknown(format!(
            "`{path}` does not hold the appended text at byte {at}: something else changed the file"
        )),
        Err(e) => Found::Unknown(format!("cannot read `{path}`: {e}")),
    }
}

fn look_sql(db: &str, run: &str, slot: &str) -> Found {
    use rusqlite::OpenFlags;
    if !Path::new(db).exists() {
        return Found::NotRun;
    }
    // Read-write without create: a reader of a database with a hot journal must roll it back.
    let conn = match rusqlite::Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) {
        Ok(c) => c,
        Err(e) => return Found::Unknown(format!("cannot open `{db}`: {e}")),
    };
    let _ = conn.busy_timeout(std::time::Duration::from_secs(10));
    let q = format!("SELECT changed FROM {EFFECTS_TABLE} WHERE run = ?1 AND effect = ?2");
    match conn.query_row(&q, [run, slot], |r| r.get::<_, i64>(0)) {
        Ok(changed) => Found::Done(json!({ "ok": changed })),
        Err(rusqlite::Error::QueryReturnedNoRows) => Found::NotRun,
        Err(rusqlite::Error::SqliteFailure(_, Some(m))) if m.contains("no such table") => {
            Found::NotRun
        }
        Err(e) => Found::Unknown(format!("cannot read `{db}`: {e}")),
    }
}

/// Files a committed write under `(run, effect)`: called inside the write's own transaction.
pub fn record_sql(
    conn: &rusqlite::Connection,
    run: &str,
    effect: &str,
    changed: u64,
) -> rusqlite::Result<()> {
    conn.prepare_cached(&format!(
        "CREATE TABLE IF NOT EXISTS {EFFECTS_TABLE} (run TEXT NOT NULL, effect TEXT NOT NULL, changed INTEGER NOT NULL, PRIMARY KEY (run, effect)) WITHOUT ROWID"
    ))?
    .execute([])?;
    // A person's `--retry` of a write that had committed runs it again: the row says so anew.
    conn.prepare_cached(&format!(
        "INSERT OR REPLACE INTO {EFFECTS_TABLE} (run, effect, changed) VALUES (?1, ?2, ?3)"
    ))?
    .execute(rusqlite::params![run, effect, changed as i64])?;
    Ok(())
}

/// Cuts a partial append back to where it began.
pub fn cut_back(path: &str, at: u64) -> std::io::Result<()> {
    let f = std::fs::OpenOptions::new().write(true).open(path)?;
    if f.metadata()?.len() > at {
        f.set_len(at)?;
        f.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("kora-check-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    }

    fn sha(b: &[u8]) -> String {
        super::super::run::hex(&Sha256::digest(b))
    }

    #[test]
    fn an_append_is_done_missing_or_partial_by_its_region() {
        let d = temp("append");
        let p = d.join("log.txt");
        std::fs::write(&p, "head\nline\n").expect("file");
        let path = p.to_string_lossy().into_owned();
        let check = |at, text: &str| Check::Append {
            path: path.clone(),
            at,
            len: text.len() as u64,
            sha256: sha(text.as_bytes()),
        };
        assert_eq!(
            check(5, "line\n").look("r", "s"),
            Found::Done(json!({"ok": null}))
        );
        assert_eq!(check(10, "more\n").look("r", "s"), Found::NotRun);
        assert_eq!(
            check(7, "line\n").look("r", "s"),
            Found::Partial {
                path: path.clone(),
                at: 7
            }
        );
        assert!(matches!(
            check(0, "xxxx\n").look("r", "s"),
            Found::Unknown(_)
        ));
        cut_back(&path, 7).expect("cut");
        assert_eq!(std::fs::read_to_string(&p).expect("file"), "head\nli");
    }

    #[test]
    fn a_sql_write_is_done_exactly_when_its_row_committed() {
        let d = temp("sql");
        let db = d.join("x.db");
        let dbs = db.to_string_lossy().into_owned();
        let check = Check::Sql { db: dbs.clone() };
        assert_eq!(check.look("r", "a/0"), Found::NotRun, "no database yet");
        let mut conn = rusqlite::Connection::open(&db).expect("open");
        conn.execute("CREATE TABLE t (n INTEGER)", [])
            .expect("table");
        assert_eq!(check.look("r", "a/0"), Found::NotRun, "no table yet");
        {
            let tx = conn.transaction().expect("tx");
            tx.execute("INSERT INTO t VALUES (1)", []).expect("insert");
            record_sql(&tx, "r", "a/0", 1).expect("record");
            // Rolled back: neither the row nor its record.
        }
        assert_eq!(check.look("r", "a/0"), Found::NotRun);
        let tx = conn.transaction().expect("tx");
        tx.execute("INSERT INTO t VALUES (1)", []).expect("insert");
        record_sql(&tx, "r", "a/0", 1).expect("record");
        tx.commit().expect("commit");
        assert_eq!(check.look("r", "a/0"), Found::Done(json!({"ok": 1})));
        assert_eq!(check.look("other", "a/0"), Found::NotRun);
    }

    #[test]
    fn a_file_write_is_done_when_the_file_holds_the_intended_content() {
        let d = temp("file");
        let p = d.join("out.txt");
        let path = p.to_string_lossy().into_owned();
        let check = Check::File {
            path: path.clone(),
            sha256: sha(b"new"),
        };
        assert_eq!(check.look("r", "s"), Found::NotRun);
        std::fs::write(&p, "old").expect("file");
        assert_eq!(check.look("r", "s"), Found::NotRun);
        std::fs::write(&p, "new").expect("file");
        assert_eq!(check.look("r", "s"), Found::Done(json!({"ok": null})));
    }
}
