//! `kora trace [RUN]`: prints a recorded run's span tree with durations and tokens.

use std::path::Path;

use kora_runtime::config::Config;

pub fn trace(run: Option<&str>) -> u8 {
    let cwd = Path::new(".");
    let config = match Config::discover(cwd) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let root = crate::observe::project_root(&config, cwd);
    let path = match kora_telemetry::store::find(&root, run) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return 2;
        }
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", path.display());
            return 2;
        }
    };
    match kora_telemetry::otlp::from_json(&text) {
        Ok(req) => {
            print!("{}", kora_telemetry::tree::render(&req));
            0
        }
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            2
        }
    }
}
