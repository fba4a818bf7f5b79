//! A test client for the `Content-Length`-framed protocols `kora lsp` and `kora dap` speak on stdio.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use serde_json::Value;

/// Not a timing assertion: only how long a broken server may hang a test before it fails.
const WATCHDOG: Duration = Duration::from_secs(120);

pub struct Peer {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    /// Messages read while waiting for another one.
    pub seen: Vec<Value>,
    seq: i64,
}

impl Peer {
    /// Starts `kora <command>` with its stdio connected to this client.
    pub fn spawn(command: &str) -> Peer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kora"))
            .arg(command)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start kora");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim();
                    if line.is_empty() {
                        // A blank line ends the header, or trails the previous body.
                        if len.is_some() {
                            break;
                        }
                        continue;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length:") {
                        len = n.trim().parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; len.unwrap_or(0)];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                let v: Value = serde_json::from_slice(&body).expect("a JSON message");
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        Peer {
            child,
            stdin,
            incoming: rx,
            seen: Vec::new(),
            seq: 0,
        }
    }

    pub fn write(&mut self, msg: &Value) {
        let body = serde_json::to_vec(msg).expect("serialize");
        write!(self.stdin, "Content-Length: {}\r\n\r\n", body.len()).expect("write header");
        self.stdin.write_all(&body).expect("write body");
        self.stdin.flush().expect("flush");
    }

    pub fn next_seq(&mut self) -> i64 {
        self.seq += 1;
        self.seq
    }

    /// Reads messages until one satisfies `want`; the others are kept in `seen`.
    pub fn wait(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        loop {
            let m = self
                .incoming
                .recv_timeout(WATCHDOG)
                .unwrap_or_else(|_| panic!("no {what} arrived; got: {:#?}", self.seen));
            if want(&m) {
                return m;
            }
            self.seen.push(m);
        }
    }

    /// Waits for the process to end and returns its exit code.
    pub fn exit_code(mut self) -> Option<i32> {
        drop(self.stdin);
        self.child.wait().ok().and_then(|s| s.code())
    }
}

/// A scratch folder for one test's files.
pub fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("kora-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    std::fs::canonicalize(&dir).expect("canonical scratch dir")
}
