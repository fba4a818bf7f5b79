//! The stdio transport: a server Kora starts, one JSON-RPC message per line each way.
//!
//! A blocking read on a pipe cannot be given a deadline, so a reader thread owns the server's
//! standard output and routes each line (`router.rs`); a writer thread owns its standard
//! input, so a server that stops reading blocks that thread and never the caller, who waits
//! for its reply with a deadline. A line that is not JSON-RPC breaks the protocol: every
//! request in flight is told, and the server is stopped (the next call starts it again). The
//! server runs in its own process group, so stopping it stops what it started too (`npx` runs
//! the server as its child). Its standard error goes to a log file, not the terminal.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex};

use serde_json::Value as Json;

use crate::config::expand;
use crate::jsonrpc::clip;
use crate::router::Router;

/// The longest line a server may send (a tool result with a large file in it fits).
const MAX_LINE: usize = 64 << 20;

/// A running stdio server.
pub struct StdioServer {
    child: Mutex<Child>,
    pid: u32,
    /// Messages for the writer thread; `None` closes the server's input.
    out: Sender<Option<Json>>,
}

impl StdioServer {
    /// Starts `command args` in `dir` with `env` added (each `${NAME}` read from the
    /// environment), its stderr appended to `log`; replies go to `router`.
    pub fn start(
        name: &str,
        command: &str,
        args: &[String],
        env: &std::collections::BTreeMap<String, String>,
        dir: &std::path::Path,
        log: &std::path::Path,
        router: Arc<Router>,
    ) -> Result<StdioServer, String> {
        let mut cmd = Command::new(command);
        cmd.args(args)
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (k, v) in env {
            cmd.env(k, expand(v, &format!("[mcp.{name}].env.{k}"))?);
        }
        if let Some(parent) = log.parent() {
            let _ = std::fs::create_dir_all(parent);
        }
        match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
        {
            Ok(f) => {
                cmd.stderr(Stdio::from(f));
            }
            Err(_) => {
                cmd.stderr(Stdio::null());
            }
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = cmd.spawn().map_err(|e| {
            format!(
                "cannot start `{command}` for the MCP server `{name}`: {e}; check `[mcp.{name}].command`"
            )
        })?;
        let pid = child.id();
        let stdin = child.stdin.take().ok_or("no stdin pipe")?;
        let stdout = child.stdout.take().ok_or("no stdout pipe")?;
        let (tx, rx) = channel::<Option<Json>>();
        std::thread::Builder::new()
            .name(format!("mcp-{name}-write"))
            .spawn(move || {
                let mut w = std::io::BufWriter::new(stdin);
                // `None` (or every sender gone) closes the server's input: its cue to exit.
                for msg in rx.into_iter().map_while(|m| m) {
                    let mut line = msg.to_string();
                    line.push('\n');
                    if w.write_all(line.as_bytes())
                        .and_then(|_| w.flush())
                        .is_err()
                    {
                        break;
                    }
                }
            })
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        let answer_tx = tx.clone();
        let server = name.to_string();
        std::thread::Builder::new()
            .name(format!("mcp-{name}-read"))
            .spawn(move || read_loop(stdout, &router, &answer_tx, pid, &server))
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        Ok(StdioServer {
            child: Mutex::new(child),
            pid,
            out: tx,
        })
    }

    pub fn send(&self, msg: Json) -> Result<(), String> {
        self.out
            .send(Some(msg))
            .map_err(|_| "the server's input is closed".to_string())
    }

    /// Stops the server as the protocol asks: its input is closed (after anything still queued
    /// for it), it has a moment to exit, and then it and everything it started are killed.
    pub fn stop(&self) {
        let _ = self.out.send(None);
        {
            let mut c = self.child.lock().unwrap_or_else(|p| p.into_inner());
            for _ in 0..50 {
                if matches!(c.try_wait(), Ok(Some(_))) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
        kill_group(self.pid);
        let mut c = self.child.lock().unwrap_or_else(|p| p.into_inner());
        let _ = c.kill();
        let _ = c.wait();
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn kill_group(pid: u32) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill(2) with a negative pid signals the process group the child leads.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

fn read_loop(
    stdout: std::process::ChildStdout,
    router: &Router,
    answer: &Sender<Option<Json>>,
    pid: u32,
    server: &str,
) {
    let mut r = BufReader::with_capacity(1 << 16, stdout);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = match (&mut r)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
        {
            Ok(n) => n,
            Err(e) => {
                router.close(&format!(
                    "reading from the MCP server `{server}` failed: {e}"
                ));
                return;
            }
        };
        if n == 0 {
            router.close(&format!("the MCP server `{server}` exited"));
            return;
        }
        if buf.len() > MAX_LINE {
            router.close(&format!(
                "protocol error: the MCP server `{server}` sent a line longer than {} MiB",
                MAX_LINE >> 20
            ));
            kill_group(pid);
            return;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let routed = match serde_json::from_str::<Json>(line) {
            Ok(msg) => router.route(&msg, &|reply| {
                let _ = answer.send(Some(reply));
            }),
            Err(_) => Err(format!(
                "protocol error: the MCP server `{server}` wrote something that is not JSON-RPC on its standard output: {:?}",
                clip(line)
            )),
        };
        if let Err(why) = routed {
            router.close(&why);
            kill_group(pid);
            return;
        }
    }
}
