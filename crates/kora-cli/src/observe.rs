//! Wiring the runtime's tracer seam to kora-telemetry for one command: record spans, then write
//! the OTLP JSON trace (on by default, no setup) and print the cost report when asked.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use kora_runtime::config::pricing::Pricing;
use kora_runtime::config::Config;
use kora_runtime::observe::trace::{SpanId, SpanKind, SpanStatus, Tracer};
use kora_telemetry::Recorder;

/// What the user asked to observe.
#[derive(Clone, Copy, Debug, Default)]
pub struct Observe {
    /// Write the trace file (the default; `--no-trace` turns it off).
    pub trace: bool,
    /// Print tokens (and money) per model and per agent on stderr (`--report cost`).
    pub cost: bool,
}

/// One command's recording.
pub struct Session {
    pub rec: Recorder,
    root: PathBuf,
    program: String,
    observe: Observe,
    pricing: Option<Pricing>,
}

impl Session {
    /// `None` when nothing is observed: then no tracer is attached at all.
    pub fn start(
        observe: Observe,
        config: &Config,
        program_dir: &Path,
        program: &str,
    ) -> Option<Session> {
        if !observe.trace && !observe.cost {
            return None;
        }
        let root = project_root(config, program_dir);
        // With a trace to keep, spans go to its file as they close; the end of the run names it.
        let rec = match observe.trace {
            true => Recorder::streaming_to(
                &kora_telemetry::store::trace_dir(&root),
                program,
                observe.cost,
            ),
            false => Recorder::streaming(),
        };
        Some(Session {
            rec,
            root,
            program: program.to_string(),
            observe,
            pricing: config.pricing.clone(),
        })
    }

    pub fn open(&mut self, kind: SpanKind, name: &str, parent: Option<SpanId>) -> SpanId {
        self.rec.open(kind, name, parent, SystemTime::now())
    }

    pub fn close(&mut self, span: SpanId, failed: Option<&str>) {
        let status = if failed.is_some() {
            SpanStatus::Error
        } else {
            SpanStatus::Ok
        };
        self.rec.close(span, SystemTime::now(), status, failed);
    }

    /// Writes the trace and prints the cost report; problems are warnings, never the run's failure.
    pub fn finish(self) {
        let rec = self.rec.finish(SystemTime::now());
        if self.observe.cost {
            eprint!(
                "{}",
                kora_telemetry::cost::report(&rec.spans, self.pricing.as_ref())
            );
        }
        if self.observe.trace {
            if let Err(e) = kora_telemetry::store::write(&self.root, &rec, &self.program) {
                eprintln!("warning: the trace was not saved: {e}");
            }
        }
    }
}

/// The folder traces belong to: where `kora.toml` is, else the program's folder.
pub fn project_root(config: &Config, program_dir: &Path) -> PathBuf {
    config
        .path
        .as_deref()
        .and_then(Path::parent)
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .unwrap_or(program_dir)
        .to_path_buf()
}
