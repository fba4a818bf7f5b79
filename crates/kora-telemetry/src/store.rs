//! Where traces live: `.kora/traces/RUN_ID.json` under the project's root, with no setup.
//!
//! The root is the folder holding `kora.toml` when there is one, else the
//! program's own folder, so every run of a project lands in one place and
//! `kora trace` with no argument finds the newest.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::otlp;
use crate::recorder::{Recording, Streamed};
use crate::recycle;

pub const TRACE_DIR: &str = ".kora/traces";

/// The trace folder of the project whose root is `root`.
pub fn trace_dir(root: &Path) -> PathBuf {
    root.join(TRACE_DIR)
}

/// Writes a run's spans as OTLP JSON; returns the file written.
pub fn write(root: &Path, rec: &Recording, program: &str) -> Result<PathBuf, String> {
    let dir = trace_dir(root);
    let path = dir.join(format!("{}.json", rec.ids.run_id));
    let tmp = path.with_extension("json.tmp");
    // Written during the run as spans closed (`trace_out.rs`), in this folder: it only needs its name.
    match &rec.streamed {
        Some(Streamed::File(done)) => {
            let named = std::fs::rename(done, &path);
            if named.is_err() {
                let _ = std::fs::remove_file(done);
            }
            return named
                .map(|()| {
                    prune(&dir, &rec.ids.run_id);
                    path.clone()
                })
                .map_err(|e| format!("cannot write {}: {e}", path.display()));
        }
        Some(Streamed::Broken(part, kept)) => {
            let _ = std::fs::remove_file(part);
            if !kept {
                return Err(format!("cannot write {}", part.display()));
            }
        }
        _ => {}
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    std::fs::File::create(&tmp)
        .and_then(|f| {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, f);
            otlp::write_recording(rec, program, &mut w)?;
            std::io::Write::write_all(&mut w, b"\n")?;
            std::io::Write::flush(&mut w)
        })
        .and_then(|()| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    prune(&dir, &rec.ids.run_id);
    Ok(path)
}

/// How many traces a project keeps; older ones are deleted as new ones are written.
pub const KEEP: usize = 200;

/// One run in this many prunes the folder. Listing a folder of `KEEP` traces costs about
/// a tenth of a millisecond here, which every run would otherwise pay: more than the rest
/// of writing its trace. So the folder holds `KEEP` traces and the few written since the
/// last prune.
const PRUNE_EVERY: u64 = 16;

/// Whether the run `run_id` prunes: its id ends in random hex digits, so runs take turns.
fn prunes(run_id: &str) -> bool {
    let tail = run_id.rsplit('-').next().unwrap_or("");
    u64::from_str_radix(tail, 16).map_or(true, |n| n % PRUNE_EVERY == 0)
}

fn prune(dir: &Path, run_id: &str) {
    if !prunes(run_id) {
        return;
    }
    let all = list(dir);
    if all.len() > KEEP {
        // Kept as spares for later runs to write over: cheaper than deleting them (`recycle.rs`).
        let mut room = recycle::room(dir);
        for old in &all[..all.len() - KEEP] {
            recycle::retire(dir, old, &mut room);
        }
    }
}

/// Finds a trace: a file path, a run id in the project's trace folder, or (with none) the newest.
pub fn find(root: &Path, run: Option<&str>) -> Result<PathBuf, String> {
    let dir = trace_dir(root);
    if let Some(r) = run {
        let as_path = Path::new(r);
        if as_path.is_file() {
            return Ok(as_path.to_path_buf());
        }
        let candidate = dir.join(format!("{r}.json"));
        if candidate.is_file() {
            return Ok(candidate);
        }
        let matches: Vec<PathBuf> = list(&dir)
            .into_iter()
            .filter(|p| stem(p).starts_with(r))
            .collect();
        return match matches.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(format!(
                "no run `{r}` in {}; `kora trace` with no argument shows the newest",
                dir.display()
            )),
            many => Err(format!(
                "`{r}` names {} runs in {}; give more of the run id",
                many.len(),
                dir.display()
            )),
        };
    }
    list(&dir).pop().ok_or_else(|| {
        format!(
            "no traces in {}; `kora run FILE` writes one for every run",
            dir.display()
        )
    })
}

/// Trace files in a folder, oldest first (run ids sort by time).
fn list(dir: &Path) -> Vec<PathBuf> {
    // Sorted by name as bytes: a `PathBuf` compares component by component, which for a
    // folder of single-component names is the same order at several times the cost.
    let mut names: Vec<std::ffi::OsString> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name())
                .filter(|n| n.as_encoded_bytes().ends_with(b".json"))
                .collect()
        })
        .unwrap_or_default();
    names.sort_unstable();
    names.into_iter().map(|n| dir.join(n)).collect()
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `YYYYMMDD-HHMMSS-mmm` in UTC.
pub fn timestamp(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let (y, m, day) = civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "{y:04}{m:02}{day:02}-{:02}{:02}{:02}-{:03}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Year, month, day of a day count since 1970-01-01 (proleptic Gregorian).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_trace_streamed_to_its_file_is_named_when_the_run_ends() {
        use kora_runtime::observe::trace::{AttrValue, SpanKind, SpanStatus, Tracer};
        let root = std::env::temp_dir().join(format!("kora-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let t0 = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut rec = crate::Recorder::streaming_to(&trace_dir(&root), "main.ko", true);
        let run = rec.open(SpanKind::Run, "run main.ko", None, t0);
        // More than one batch reaches the writer, and one span is still open at the end.
        for i in 0..300 {
            let c = rec.open(SpanKind::ModelCall, "chat m", Some(run), t0);
            rec.attr(c, "kora.i", AttrValue::Int(i));
            rec.close(c, t0 + Duration::from_millis(1), SpanStatus::Ok, None);
        }
        let end = t0 + Duration::from_secs(2);
        let recording = rec.finish(end);
        let path = write(&root, &recording, "main.ko").expect("written");
        let names: Vec<String> = std::fs::read_dir(trace_dir(&root))
            .expect("folder")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [format!("{}.json", recording.ids.run_id)]);
        let text = std::fs::read_to_string(&path).expect("trace");
        let req = otlp::from_json(&text).expect("official OTLP JSON");
        let spans = &req.resource_spans[0].scope_spans[0].spans;
        assert_eq!(spans.len(), 301);
        assert_eq!(req, otlp::to_request(&recording, "main.ko"));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn one_run_in_sixteen_prunes_the_folder_back_to_the_newest_traces() {
        let root = std::env::temp_dir().join(format!("kora-prune-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = trace_dir(&root);
        std::fs::create_dir_all(&dir).expect("folder");
        let name = |i: usize| format!("20260101-000000-{i:03}-0001");
        for i in 0..KEEP + 5 {
            std::fs::write(dir.join(format!("{}.json", name(i))), "{}").expect("trace");
        }
        let count = || std::fs::read_dir(&dir).expect("folder").count();
        let mut rec = crate::Recorder::new().finish(UNIX_EPOCH);
        rec.ids.run_id = "20260102-000000-000-0001".into();
        write(&root, &rec, "main.ko").expect("written");
        assert_eq!(
            count(),
            KEEP + 6,
            "a run whose id ends in 1 leaves the folder alone"
        );
        rec.ids.run_id = "20260102-000000-000-00f0".into();
        write(&root, &rec, "main.ko").expect("written");
        assert_eq!(list(&dir).len(), KEEP);
        let spares = std::fs::read_dir(dir.join("spare"))
            .expect("spares")
            .count();
        assert_eq!(spares, 7, "the pruned traces are kept to be written over");
        for i in 0..7 {
            assert!(!dir.join(format!("{}.json", name(i))).exists(), "{i}");
        }
        assert!(dir.join(format!("{}.json", name(7))).exists());
        assert!(dir.join("20260102-000000-000-00f0.json").exists());
        assert!(prunes("20260102-000000-000-a000") && !prunes("20260102-000000-000-a00f"));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn a_run_writes_its_trace_over_a_longer_spare_and_cuts_it_to_its_own_length() {
        use kora_runtime::observe::trace::{SpanKind, SpanStatus, Tracer};
        let root = std::env::temp_dir().join(format!("kora-spare-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let dir = trace_dir(&root);
        std::fs::create_dir_all(dir.join("spare")).expect("folder");
        let old = vec![b'x'; 1 << 20];
        std::fs::write(dir.join("spare/20260101-000000-000-0001.json"), &old).expect("spare");
        let t0 = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let mut rec = crate::Recorder::streaming_to(&dir, "main.ko", true);
        let run = rec.open(SpanKind::Run, "run main.ko", None, t0);
        for _ in 0..300 {
            let c = rec.open(SpanKind::ModelCall, "chat m", Some(run), t0);
            rec.close(c, t0 + Duration::from_millis(1), SpanStatus::Ok, None);
        }
        let recording = rec.finish(t0 + Duration::from_secs(1));
        let path = write(&root, &recording, "main.ko").expect("written");
        assert_eq!(
            std::fs::read_dir(dir.join("spare"))
                .expect("folder")
                .count(),
            0
        );
        let text = std::fs::read_to_string(&path).expect("trace");
        assert!(
            text.len() < old.len() && text.ends_with("}\n"),
            "cut to its own length"
        );
        let req = otlp::from_json(&text).expect("official OTLP JSON");
        assert_eq!(req, otlp::to_request(&recording, "main.ko"));
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn timestamps_are_utc_calendar_dates() {
        let t = UNIX_EPOCH + Duration::from_millis(951_782_400_123); // 2000-02-29
        assert_eq!(timestamp(t), "20000229-000000-123");
        assert_eq!(timestamp(UNIX_EPOCH), "19700101-000000-000");
    }
}
