//! `[python]` of kora.toml, read strictly: the interpreter, how many workers, the timeout of a
//! call and extra `sys.path` entries.
//!
//! ```toml
//! [python]
//! interpreter = ".venv"        # a venv folder, a path to python, or a name on PATH (python3)
//! workers = 4                  # at most this many processes (default: the parallel-for width)
//! timeout_secs = 60            # a call's deadline; zero or less is clamped with a warning
//! path = ["lib"]               # searched for modules, relative to the project
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use kora_runtime::config::section::seconds;
use kora_runtime::config::{Config, ConfigError};

pub const DEFAULT_TIMEOUT_SECS: f64 = 60.0;
const KEYS: &[&str] = &["interpreter", "workers", "timeout_secs", "path"];

#[derive(Clone, Debug)]
pub struct PythonConfig {
    /// The program to start: a path, or a name looked up on PATH.
    pub interpreter: PathBuf,
    pub workers: usize,
    pub timeout: Duration,
    /// `sys.path` entries before the standard ones: the program's folder, then `path`.
    pub path: Vec<PathBuf>,
    /// Where workers run: the project folder.
    pub dir: PathBuf,
    pub warnings: Vec<String>,
}

impl PythonConfig {
    /// Reads `[python]`; `project` is the folder holding kora.toml, `program_dir` the entry
    /// file's folder (on `sys.path` first, as Python puts a script's folder), `width` the
    /// default worker count.
    pub fn from_config(
        cfg: &Config,
        project: &Path,
        program_dir: &Path,
        width: usize,
    ) -> Result<PythonConfig, ConfigError> {
        let mut out = PythonConfig {
            interpreter: PathBuf::from("python3"),
            workers: width.max(1),
            timeout: Duration::from_secs_f64(DEFAULT_TIMEOUT_SECS),
            path: vec![program_dir.to_path_buf()],
            dir: project.to_path_buf(),
            warnings: Vec::new(),
        };
        let Some(py) = cfg.section("python") else {
            return Ok(out);
        };
        let err = |key: &str, message: String| py.error(key, message);
        for (k, v) in py.table {
            match k.as_str() {
                "interpreter" => {
                    let s = v.as_str().filter(|s| !s.trim().is_empty()).ok_or_else(|| {
                        err(k, "`[python].interpreter` must be a path or a program name, e.g. \".venv\" or \"python3.12\"".into())
                    })?;
                    out.interpreter = interpreter(project, s);
                }
                "workers" => {
                    let n = v
                        .as_integer()
                        .filter(|n| (1..=256).contains(n))
                        .ok_or_else(|| {
                            err(
                                k,
                                "`[python].workers` must be a whole number from 1 to 256".into(),
                            )
                        })?;
                    out.workers = n as usize;
                }
                "timeout_secs" => {
                    let secs = seconds(v).ok_or_else(|| {
                        err(
                            k,
                            "`[python].timeout_secs` must be a number of seconds".into(),
                        )
                    })?;
                    if secs <= 0.0 {
                        out.warnings.push(format!("`[python].timeout_secs = {secs}` is not a deadline: a call needs one, so {DEFAULT_TIMEOUT_SECS} s is used"));
                    } else {
                        out.timeout = Duration::from_secs_f64(secs.min(86_400.0));
                    }
                }
                "path" => {
                    let items = v
                        .as_array()
                        .and_then(|a| {
                            a.iter()
                                .map(|x| x.as_str().map(str::to_string))
                                .collect::<Option<Vec<_>>>()
                        })
                        .ok_or_else(|| {
                            err(
                                k,
                                "`[python].path` must be a list of folders, e.g. [\"lib\"]".into(),
                            )
                        })?;
                    out.path.extend(items.iter().map(|p| project.join(p)));
                }
                _ => return Err(py.unknown(k, KEYS)),
            }
        }
        Ok(out)
    }
}

/// A venv folder means its `bin/python`; a path with a slash is relative to the project; a
/// bare name is looked up on PATH when started.
fn interpreter(project: &Path, s: &str) -> PathBuf {
    if !s.contains('/') {
        return PathBuf::from(s);
    }
    let p = project.join(s);
    if p.is_dir() {
        for name in ["bin/python3", "bin/python", "Scripts/python.exe"] {
            if p.join(name).exists() {
                return p.join(name);
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PythonConfig, ConfigError> {
        let cfg = Config::parse(Path::new("kora.toml"), text).expect("valid toml");
        PythonConfig::from_config(&cfg, Path::new("/p"), Path::new("/p/app"), 16)
    }

    #[test]
    fn settings_read_and_mistakes_name_their_line() {
        let c = parse("[python]\nworkers = 3\ntimeout_secs = 2\npath = [\"lib\"]\n").expect("ok");
        assert_eq!((c.workers, c.timeout), (3, Duration::from_secs(2)));
        assert_eq!(
            c.path,
            vec![PathBuf::from("/p/app"), PathBuf::from("/p/lib")]
        );
        let e = parse("[python]\n\nworkerz = 3\n").expect_err("unknown");
        assert_eq!(e.line, Some(3));
        assert!(e.message.contains("workerz"), "{}", e.message);
        let e = parse("[python]\nworkers = 0\n").expect_err("zero");
        assert!(e.message.contains("1 to 256"), "{}", e.message);
        let c = parse("[python]\ntimeout_secs = 0\n").expect("clamped");
        assert_eq!((c.timeout, c.warnings.len()), (Duration::from_secs(60), 1));
        assert_eq!(parse("").expect("none").workers, 16);
    }
}
