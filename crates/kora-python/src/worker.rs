//! One worker process: started with the worker module, fed one call at a time, and killed
//! (with its whole process group) when a call times out or the process dies.
//!
//! A reader thread owns the worker's output and hands each frame over a channel, so the caller
//! waits for its reply with a deadline; a worker that dies closes the channel and the call
//! learns at once.

use std::io::BufWriter;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::config::PythonConfig;

/// Why a call got no reply. Either way the worker is gone.
#[derive(Debug)]
pub enum Lost {
    Timeout(Duration),
    Died(String),
}

pub struct Worker {
    child: Child,
    pid: u32,
    input: BufWriter<ChildStdin>,
    replies: Receiver<Result<Json, String>>,
    next: u64,
    /// How long starting it took, to its first frame.
    pub start: Duration,
}

impl Worker {
    /// Starts a worker and waits (until `deadline`) for its greeting.
    pub fn start(cfg: &PythonConfig, deadline: Instant) -> Result<Worker, String> {
        let began = Instant::now();
        let script = crate::script::path()?;
        let mut cmd = Command::new(&cfg.interpreter);
        cmd.arg("-u")
            .arg(&script)
            .args(&cfg.path)
            .current_dir(&cfg.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .env("PYTHONDONTWRITEBYTECODE", "1");
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = cmd.spawn().map_err(|e| {
            format!(
                "cannot start the Python worker with `{}`: {e}; install Python 3, or set `[python] interpreter` in kora.toml",
                cfg.interpreter.display()
            )
        })?;
        let pid = child.id();
        let input = BufWriter::new(child.stdin.take().ok_or("no stdin pipe")?);
        let mut output = child.stdout.take().ok_or("no stdout pipe")?;
        let (tx, rx) = channel();
        std::thread::Builder::new()
            .name("python-worker-read".into())
            .spawn(move || loop {
                match crate::frame::read(&mut output) {
                    Ok(Some(j)) => {
                        if tx.send(Ok(j)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => {
                        let _ = tx.send(Err("it exited".to_string()));
                        return;
                    }
                    Err(why) => {
                        let _ = tx.send(Err(format!("its output broke the protocol: {why}")));
                        return;
                    }
                }
            })
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        let mut w = Worker {
            child,
            pid,
            input,
            replies: rx,
            next: 0,
            start: Duration::ZERO,
        };
        match w.wait(deadline) {
            Ok(j) if j.get("hello").is_some() => {
                w.start = began.elapsed();
                Ok(w)
            }
            Ok(other) => {
                w.kill();
                Err(format!("the Python worker greeted with {other}"))
            }
            Err(lost) => Err(format!(
                "the Python worker started with `{}` did not come up: {}",
                cfg.interpreter.display(),
                lost.describe()
            )),
        }
    }

    fn wait(&mut self, deadline: Instant) -> Result<Json, Lost> {
        let left = deadline.saturating_duration_since(Instant::now());
        let asked = Instant::now();
        match self.replies.recv_timeout(left) {
            Ok(Ok(j)) => Ok(j),
            Ok(Err(why)) => {
                let status = self.reap();
                Err(Lost::Died(format!("{why}{status}")))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = self.reap();
                Err(Lost::Died(format!("it exited{status}")))
            }
            Err(RecvTimeoutError::Timeout) => {
                self.kill();
                Err(Lost::Timeout(asked.elapsed()))
            }
        }
    }

    /// One call; on `Err` the worker is dead (killed or exited) and must be dropped.
    pub fn call(
        &mut self,
        module: &str,
        func: &str,
        args: Json,
        kwargs: Json,
        deadline: Instant,
    ) -> Result<Json, Lost> {
        self.next += 1;
        let id = self.next;
        let msg = json!({"id": id, "op": "call", "module": module, "func": func, "args": args, "kwargs": kwargs});
        if let Err(e) = crate::frame::write(&mut self.input, &msg) {
            let status = self.reap();
            return Err(Lost::Died(format!("cannot send it the call: {e}{status}")));
        }
        let reply = self.wait(deadline)?;
        if reply.get("id").and_then(Json::as_u64) != Some(id) {
            self.kill();
            return Err(Lost::Died(
                "it answered another call: the protocol broke".into(),
            ));
        }
        Ok(reply)
    }

    /// Kills the worker and everything it started.
    pub fn kill(&mut self) {
        #[cfg(unix)]
        if let Ok(pid) = i32::try_from(self.pid) {
            // SAFETY: kill(2) with a negative pid signals the process group the worker leads.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The exit status of a worker whose output ended, as text for a message.
    fn reap(&mut self) -> String {
        let status = (0..50).find_map(|_| match self.child.try_wait() {
            Ok(Some(s)) => Some(s),
            _ => {
                std::thread::sleep(Duration::from_millis(10));
                None
            }
        });
        self.kill();
        match status {
            #[cfg(unix)]
            Some(s) if std::os::unix::process::ExitStatusExt::signal(&s).is_some() => {
                format!(
                    " (killed by signal {})",
                    std::os::unix::process::ExitStatusExt::signal(&s).unwrap_or(0)
                )
            }
            Some(s) => match s.code() {
                Some(c) => format!(" (exit status {c})"),
                None => String::new(),
            },
            None => String::new(),
        }
    }
}

impl Lost {
    pub fn describe(&self) -> String {
        match self {
            Lost::Timeout(d) => format!("no answer within {:.1} s", d.as_secs_f64()),
            Lost::Died(why) => why.clone(),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}
