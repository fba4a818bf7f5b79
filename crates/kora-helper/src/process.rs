//! One helper: at most one live process, one request at a time, a deadline per call that kills
//! the process group, and a fresh process for the call after a crash or a kill.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::frame::{Frame, FrameError};
use crate::needs::Needs;

/// How a helper is started.
#[derive(Clone, Debug)]
pub struct HelperSpec {
    /// The name people see in messages (the package's name).
    pub name: String,
    pub program: PathBuf,
    pub args: Vec<String>,
    pub needs: Needs,
    /// The longest one call may take, start included.
    pub timeout: Duration,
}

/// How one call ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The helper answered: its header and payload.
    Ok(Json, Vec<u8>),
    /// The helper answered with an error of its own (a malformed PDF).
    Err(String),
    /// No answer: it could not start, timed out, crashed or broke the protocol.
    Failed(String),
}

/// How much of a helper's stderr a failure quotes.
const STDERR_TAIL: usize = 2048;

struct Live {
    child: Child,
    to_helper: Sender<Vec<u8>>,
    from_helper: Receiver<Result<Frame, FrameError>>,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Live {
    fn kill(&mut self) {
        // The helper leads its own group (process_group(0)): a negative pid reaches every
        // process it started.
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: kill has no memory effects.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    fn stderr_tail(&self) -> String {
        let buf = self.stderr.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8_lossy(&buf).trim().to_string()
    }
}

/// A helper and its (lazily started) process.
pub struct Helper {
    spec: HelperSpec,
    live: Mutex<Option<Live>>,
    warned: std::sync::Once,
}

impl Helper {
    pub fn new(spec: HelperSpec) -> Helper {
        Helper {
            spec,
            live: Mutex::new(None),
            warned: std::sync::Once::new(),
        }
    }

    pub fn spec(&self) -> &HelperSpec {
        &self.spec
    }

    /// Sends `op` with `header` and `payload`, waiting until `deadline` (or the helper's own
    /// timeout, whichever is sooner).
    pub fn call(
        &self,
        op: &str,
        header: Json,
        payload: Vec<u8>,
        deadline: Option<Instant>,
    ) -> Outcome {
        let own = Instant::now() + self.spec.timeout;
        let deadline = deadline.map_or(own, |d| d.min(own));
        // One request at a time: the lock is held until the reply (or the kill).
        let mut slot = match self.live.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if slot.is_none() {
            match self.start() {
                Ok(l) => *slot = Some(l),
                Err(why) => return Outcome::Failed(why),
            }
        }
        let Some(live) = slot.as_mut() else {
            return Outcome::Failed("the helper did not start".into());
        };
        let request = Frame::new(json!({"op": op, "header": header}), payload);
        let bytes = match request.encode() {
            Ok(b) => b,
            Err(e) => return Outcome::Err(e.to_string()),
        };
        let name = &self.spec.name;
        if live.to_helper.send(bytes).is_err() {
            return self.fail(&mut slot, "stopped reading its requests");
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match live.from_helper.recv_timeout(wait) {
            Ok(Ok(frame)) => reply(frame),
            Ok(Err(FrameError::Eof)) | Err(RecvTimeoutError::Disconnected) => {
                self.fail(&mut slot, "exited before answering")
            }
            Ok(Err(e)) => self.fail(&mut slot, &format!("sent {e}")),
            Err(RecvTimeoutError::Timeout) => {
                if let Some(mut l) = slot.take() {
                    l.kill();
                }
                Outcome::Failed(format!(
                    "helper `{name}` did not answer `{op}` within {:.1} s and was killed",
                    self.spec.timeout.as_secs_f64().min(wait.as_secs_f64())
                ))
            }
        }
    }

    /// Ends the process; the next call starts a fresh one, and its failure names what happened.
    fn fail(&self, slot: &mut Option<Live>, what: &str) -> Outcome {
        let Some(mut l) = slot.take() else {
            return Outcome::Failed(format!("helper `{}` {what}", self.spec.name));
        };
        let status = match l.child.try_wait() {
            Ok(Some(s)) => Some(s),
            _ => {
                // Give a dying process a moment to be reaped before it is killed, so the
                // message names the signal that ended it.
                std::thread::sleep(Duration::from_millis(20));
                l.child.try_wait().ok().flatten()
            }
        };
        l.kill();
        let status = status.or_else(|| l.child.try_wait().ok().flatten());
        // The stderr reader ends with the process; give it a moment to take the last bytes.
        std::thread::sleep(Duration::from_millis(20));
        let tail = l.stderr_tail();
        let mut msg = format!("helper `{}` {what}", self.spec.name);
        if let Some(s) = status {
            msg.push_str(&format!(" ({})", describe(s)));
        }
        if !tail.is_empty() {
            msg.push_str(&format!(": {tail}"));
        }
        Outcome::Failed(msg)
    }

    fn start(&self) -> Result<Live, String> {
        let spec = &self.spec;
        let mut cmd = Command::new(&spec.program);
        cmd.args(&spec.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if crate::confine::CONFINED {
            crate::confine::confine(&mut cmd, spec.needs)?;
        } else {
            self.warned
                .call_once(|| eprintln!("{}", crate::confine::unconfined_warning(&spec.name)));
        }
        let mut child = cmd.spawn().map_err(|e| {
            format!(
                "helper `{}` could not start `{}`: {e}",
                spec.name,
                spec.program.display()
            )
        })?;
        let (Some(stdin), Some(mut stdout), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("helper `{}` started without pipes", spec.name));
        };
        let (to_helper, requests) = mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || write_loop(stdin, requests));
        let (replies, from_helper) = mpsc::channel();
        std::thread::spawn(move || loop {
            let r = Frame::read_from(&mut stdout);
            let end = r.is_err();
            if replies.send(r).is_err() || end {
                break;
            }
        });
        let tail = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&tail);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                if let Ok(mut t) = sink.lock() {
                    t.extend_from_slice(&chunk[..n]);
                    let over = t.len().saturating_sub(STDERR_TAIL);
                    t.drain(..over);
                }
            }
        });
        Ok(Live {
            child,
            to_helper,
            from_helper,
            stderr: tail,
        })
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        if let Ok(mut slot) = self.live.lock() {
            if let Some(mut l) = slot.take() {
                l.kill();
            }
        }
    }
}

fn write_loop(mut stdin: ChildStdin, requests: Receiver<Vec<u8>>) {
    use std::io::Write;
    for bytes in requests {
        if stdin.write_all(&bytes).and_then(|_| stdin.flush()).is_err() {
            break;
        }
    }
}

/// A reply frame as an outcome: `{"ok": header}` or `{"err": message}`.
fn reply(frame: Frame) -> Outcome {
    if let Some(h) = frame.header.get("ok") {
        return Outcome::Ok(h.clone(), frame.payload);
    }
    if let Some(e) = frame.header.get("err") {
        let msg = e.as_str().map_or_else(|| e.to_string(), str::to_string);
        return Outcome::Err(msg);
    }
    Outcome::Failed(format!(
        "the helper answered with neither `ok` nor `err`: {}",
        frame.header
    ))
}

fn describe(s: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exit status {c}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        _ => "ended".into(),
    }
}
