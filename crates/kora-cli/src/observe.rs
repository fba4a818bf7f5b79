//! Wiring the runtime's tracer seam to kora-telemetry for one command: record spans, then write
//! the OTLP JSON trace (on by default, no setup), export them to a collector when one is named
//! (`--otlp`, `OTEL_EXPORTER_OTLP_*`, `[telemetry]`), and print the cost report when asked.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use kora_runtime::config::pricing::Pricing;
use kora_runtime::config::Config;
use kora_runtime::observe::trace::{SpanId, SpanKind, SpanStatus, Tracer};
use kora_telemetry::export::ExportConfig;
use kora_telemetry::Recorder;

/// What the user asked to observe.
#[derive(Clone, Debug, Default)]
pub struct Observe {
    /// Write the trace file (the default; `--no-trace` turns it off).
    pub trace: bool,
    /// Print tokens (and money) per model and per agent on stderr (`--report cost`).
    pub cost: bool,
    /// `--otlp URL`: export the spans to this collector.
    pub otlp: Option<String>,
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
        let export = export_config(&observe, config);
        if !observe.trace && !observe.cost && export.is_none() {
            return None;
        }
        let root = project_root(config, program_dir);
        // With a trace to keep, spans go to its file as they close; the end of the run names it.
        let rec = match (observe.trace, observe.cost) {
            (true, _) => Recorder::streaming_to(
                &kora_telemetry::store::trace_dir(&root),
                program,
                observe.cost,
            ),
            (false, true) => Recorder::streaming(),
            (false, false) => Recorder::discarding(),
        };
        let rec = match export {
            Some(cfg) => rec.exporting(cfg, program),
            None => rec,
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
        let mut saved = None;
        if self.observe.trace {
            match kora_telemetry::store::write(&self.root, &rec, &self.program) {
                Ok(path) => saved = Some(path),
                Err(e) => eprintln!("warning: the trace was not saved: {e}"),
            }
        }
        if let Some(w) = rec
            .export
            .as_ref()
            .and_then(|r| r.warning(saved.as_deref()))
        {
            eprintln!("{w}");
        }
    }
}

/// Where the spans are exported, if anywhere: `--otlp`, then the `OTEL_EXPORTER_OTLP_*`
/// variables, then `[telemetry]`. A setting that cannot be used is one warning, and the
/// run goes on with its local trace.
fn export_config(observe: &Observe, config: &Config) -> Option<ExportConfig> {
    let env = |name: &str| std::env::var(name).ok();
    match ExportConfig::resolve(
        observe.otlp.as_deref(),
        config.telemetry.endpoint.as_deref(),
        config.telemetry.protocol.as_deref(),
        &env,
    ) {
        Ok(cfg) => cfg,
        Err(why) => {
            eprintln!("warning: the run's spans are not exported: {why}");
            None
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
