//! `[pdf]` of kora.toml, read strictly: which helper program answers `pdf` calls and how long
//! one call may take.
//!
//! ```toml
//! [pdf]
//! helper = "bin/kora-pdf"   # default: `kora-pdf` beside the kora binary, else on PATH
//! timeout_secs = 30         # a call's deadline, the helper's start included
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use kora_runtime::config::section::deadline_secs;
use kora_runtime::config::{Config, ConfigError};

pub const DEFAULT_TIMEOUT_SECS: f64 = 30.0;
const KEYS: &[&str] = &["helper", "timeout_secs"];
/// The pdf helper's file name, installed beside `kora`.
pub const PDF_HELPER: &str = "kora-pdf";

#[derive(Clone, Debug)]
pub struct PdfConfig {
    pub helper: PathBuf,
    pub timeout: Duration,
}

impl PdfConfig {
    pub fn from_config(cfg: &Config, project: &Path) -> Result<PdfConfig, ConfigError> {
        let mut out = PdfConfig {
            helper: default_helper(),
            timeout: Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS),
        };
        let Some(pdf) = cfg.section("pdf") else {
            return Ok(out);
        };
        for (k, v) in pdf.table {
            match k.as_str() {
                "helper" => {
                    let s = v.as_str().filter(|s| !s.trim().is_empty()).ok_or_else(|| {
                        pdf.error(k, "`[pdf].helper` must be the path of a helper program")
                    })?;
                    out.helper = project.join(s);
                }
                "timeout_secs" => {
                    let secs = deadline_secs(v).ok_or_else(|| {
                        pdf.error(
                            k,
                            "`[pdf].timeout_secs` must be a positive number of seconds",
                        )
                    })?;
                    out.timeout = Duration::from_secs_f64(secs);
                }
                _ => return Err(pdf.unknown(k, KEYS)),
            }
        }
        Ok(out)
    }
}

/// `kora-pdf` beside the running `kora` (how a release and `cargo build` lay them out), else
/// the name, looked up on PATH when started.
fn default_helper() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(PDF_HELPER)))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from(PDF_HELPER))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PdfConfig, ConfigError> {
        let cfg = Config::parse(Path::new("kora.toml"), text).expect("valid toml");
        PdfConfig::from_config(&cfg, Path::new("/p"))
    }

    #[test]
    fn settings_read_and_mistakes_name_their_line() {
        let c = parse("[pdf]\nhelper = \"bin/h\"\ntimeout_secs = 2\n").expect("ok");
        assert_eq!(
            (c.helper, c.timeout),
            (PathBuf::from("/p/bin/h"), Duration::from_secs(2))
        );
        let e = parse("[pdf]\n\nhelpr = \"x\"\n").expect_err("unknown");
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("helpr"), "{}", e.message);
        assert!(parse("[pdf]\ntimeout_secs = 0\n").is_err());
    }
}
