//! `kora repl` end to end: definitions that persist, values echoed with `repr` (None not),
//! errors with their codes and the session going on, `:type`, effects never repeated,
//! model calls through `kora.toml` and from a cassette, and a session typed through a
//! pseudo-terminal (line editing, history).

mod support;

use std::path::Path;

use kora_testkit::{Behaviour, FakeProvider};
use support::{collect, kora_cmd, temp_dir, Run};

fn repl(dir: &Path, args: &[&str], input: &str) -> Run {
    collect(
        kora_cmd()
            .arg("repl")
            .args(args)
            .env("KORA_HISTORY", "")
            .current_dir(dir),
        Some(input),
    )
}

#[test]
fn entries_build_on_each_other_and_errors_do_not_end_the_session() {
    let d = temp_dir("kora-repl", "basics");
    std::fs::write(
        d.join("lib.ko"),
        "print(\"lib loaded\")\ndef triple(n: int) -> int:\n    return n * 3\n",
    )
    .expect("lib");
    let input = "\
x = 20
x + 1
def double(n: int) -> int:
    d = n * 2
    return d

double(x)
print(\"printed once\")
None
'text'
type Point:
    x: int
    y: int = 0

Point(1)
y: int = \"not an int\"
print(\"after a compile error\", x)
double(x) / 0
print(\"after a run-time error\")
undefined_name
:type double(1) * 0.5
:type [Point(1)]
use \"./lib.ko\" as lib
lib.triple(x)
lib.triple(2)
[n * n for n in range(4)]
:bogus
:help
";
    let r = repl(&d, &[], input);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let expected = "\
21
40
printed once
'text'
Point(x=1, y=0)
after a compile error 20
after a run-time error
float
list[Point]
lib loaded
60
6
[0, 1, 4, 9]
";
    assert!(
        r.stdout.starts_with(expected),
        "stdout:\n{}\nstderr:\n{}",
        r.stdout,
        r.stderr
    );
    assert!(
        r.stdout.contains(":type EXPR"),
        "the help text: {}",
        r.stdout
    );
    assert_eq!(
        r.stdout.matches("printed once").count(),
        1,
        "no entry runs twice"
    );
    assert_eq!(
        r.stdout.matches("lib loaded").count(),
        1,
        "a module's top level runs once"
    );
    for code in ["E0204", "E1005", "E0101"] {
        assert!(r.stderr.contains(code), "{code} in:\n{}", r.stderr);
    }
    assert!(
        r.stderr.contains("unknown command `:bogus`"),
        "{}",
        r.stderr
    );
    // The compile error changed nothing: `y` was never defined.
    let r = repl(&d, &[], "y: int = \"s\"\ny = 5\ny\n");
    assert!(r.stdout.ends_with("5\n"), "{}{}", r.stdout, r.stderr);
}

#[test]
fn model_calls_use_kora_toml_and_replay_from_a_cassette() {
    let d = temp_dir("kora-repl", "models");
    let fake = FakeProvider::start();
    fake.set_default(Behaviour::Answer("a short headline".into()));
    support::write_fake_config(&d, &fake.openai_endpoint());
    let input = "\
r: Result[str] = analyze(\"a long ticket\", \"Give it a headline.\")
r
";
    let cassette = d.join("session.cassette.json");
    let cassette_arg = cassette.display().to_string();
    let live = repl(&d, &["--record", &cassette_arg], input);
    assert_eq!(live.code, 0, "{}", live.stderr);
    assert!(
        live.stdout.contains("Ok('a short headline')"),
        "{}{}",
        live.stdout,
        live.stderr
    );
    assert_eq!(fake.count(), 1);
    assert!(cassette.is_file(), "--record wrote the cassette");

    drop(fake);
    let replayed = repl(&d, &["--replay", &cassette_arg], input);
    assert_eq!(replayed.code, 0, "{}", replayed.stderr);
    assert!(
        replayed.stdout.contains("Ok('a short headline')"),
        "{}{}",
        replayed.stdout,
        replayed.stderr
    );
    // A call the cassette lacks is refused, not sent; the session goes on.
    let r = repl(
        &d,
        &["--replay", &cassette_arg],
        "s: Result[str] = analyze(\"other\", \"Other prompt.\")\nprint(\"still here\")\n",
    );
    assert!(r.stdout.contains("still here"), "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("error["), "{}", r.stderr);

    let missing = repl(&d, &["--replay", "nope.json"], "1\n");
    assert_eq!(missing.code, 2);
    assert!(missing.stderr.contains("nope.json"), "{}", missing.stderr);
    std::fs::write(d.join("kora.toml"), "[models]\ntimeout_secs = -1\n").expect("toml");
    let bad = repl(&d, &[], "1\n");
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("kora.toml:2"), "{}", bad.stderr);
}

#[cfg(unix)]
mod terminal {
    use std::io::{Read, Write};
    use std::os::fd::OwnedFd;
    use std::process::{Command, Stdio};
    use std::sync::mpsc::{channel, Receiver};
    use std::time::{Duration, Instant};

    use nix::pty::{openpty, Winsize};

    /// Not a timing assertion: how long a hung session may stall the test before it fails.
    const WATCHDOG: Duration = Duration::from_secs(60);

    struct Terminal {
        master: std::fs::File,
        output: Receiver<Vec<u8>>,
        seen: String,
        /// Where the next `expect` starts looking: each one consumes what it matched.
        from: usize,
        child: std::process::Child,
    }

    impl Terminal {
        fn start(dir: &std::path::Path, history: &std::path::Path) -> Terminal {
            let size = Winsize {
                ws_row: 40,
                ws_col: 120,
                ws_xpixel: 0,
                ws_ypixel: 0,
            };
            let pty = openpty(&size, None).expect("a pseudo-terminal");
            let slave: OwnedFd = pty.slave;
            let child = Command::new(env!("CARGO_BIN_EXE_kora"))
                .arg("repl")
                .current_dir(dir)
                .env("KORA_HISTORY", history)
                .env("NO_COLOR", "1")
                .env("TERM", "xterm")
                .stdin(Stdio::from(slave.try_clone().expect("dup")))
                .stdout(Stdio::from(slave.try_clone().expect("dup")))
                .stderr(Stdio::from(slave))
                .spawn()
                .expect("kora repl starts");
            let master = std::fs::File::from(pty.master);
            let mut reader = master.try_clone().expect("dup master");
            let (tx, rx) = channel();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                // The read fails (EIO) once the session ends and the terminal closes.
                while let Ok(n) = reader.read(&mut buf) {
                    if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            });
            Terminal {
                master,
                output: rx,
                seen: String::new(),
                from: 0,
                child,
            }
        }

        /// Waits until the output after the previous match contains `text`.
        fn expect(&mut self, text: &str) {
            let start = Instant::now();
            loop {
                if let Some(i) = self.seen[self.from..].find(text) {
                    self.from += i + text.len();
                    return;
                }
                let left = WATCHDOG.saturating_sub(start.elapsed());
                match self.output.recv_timeout(left) {
                    Ok(bytes) => self.seen.push_str(&String::from_utf8_lossy(&bytes)),
                    Err(_) => panic!(
                        "`{text}` never appeared; the terminal showed:\n{}",
                        self.seen
                    ),
                }
            }
        }

        /// Sends SIGINT (what Ctrl-C sends) until the output shows `text`: the entry may
        /// not have started running when the first one arrives.
        fn interrupt_until(&mut self, text: &str) {
            let start = Instant::now();
            loop {
                let _ = Command::new("kill")
                    .args(["-INT", &self.child.id().to_string()])
                    .status();
                if let Ok(bytes) = self.output.recv_timeout(Duration::from_millis(200)) {
                    self.seen.push_str(&String::from_utf8_lossy(&bytes));
                }
                if self.seen[self.from..].contains(text) {
                    return self.expect(text);
                }
                assert!(
                    start.elapsed() < WATCHDOG,
                    "Ctrl-C never stopped the entry:\n{}",
                    self.seen
                );
            }
        }

        fn type_line(&mut self, line: &str) {
            self.master
                .write_all(format!("{line}\r").as_bytes())
                .expect("type");
        }
    }

    #[test]
    fn a_session_typed_through_a_terminal() {
        let d = support::temp_dir("kora-repl", "pty");
        let history = d.join("history");
        let mut t = Terminal::start(&d, &history);
        t.expect(":help for help");
        t.expect(">>> ");
        // Each line is typed once its prompt is shown, as a person would.
        t.type_line("def area(w: int, h: int) -> int:");
        t.expect("... ");
        t.type_line("    a = w * h");
        t.expect("... ");
        t.type_line("    return a");
        t.expect("... ");
        t.type_line("");
        t.expect(">>> ");
        t.type_line("area(6, 7)");
        t.expect("42");
        t.expect(">>> ");
        t.type_line("area(\"six\", 7)");
        t.expect("E0204");
        t.expect(">>> ");
        t.type_line("missing_name + 1");
        t.expect("E0101");
        t.expect(">>> ");
        t.type_line("area(2, 3) + 1");
        t.expect("7");
        t.expect(">>> ");
        // The history holds what was typed: the up arrow brings the last entry back.
        t.type_line("\x1b[A");
        t.expect("area(2, 3) + 1");
        t.expect("7");
        t.expect(">>> ");
        // Ctrl-C stops a running entry, not the session.
        t.type_line("while True:");
        t.expect("... ");
        t.type_line("    pass");
        t.expect("... ");
        t.type_line("");
        t.interrupt_until("E1021");
        t.expect(">>> ");
        t.type_line("area(1, 1)");
        t.expect("1");
        t.expect(">>> ");
        t.type_line(":quit");
        let status = t.child.wait().expect("the session ends");
        assert!(status.success(), "{status:?}\n{}", t.seen);
        let saved = std::fs::read_to_string(&history).expect("history written");
        assert!(saved.contains("area(6, 7)"), "{saved}");
    }

    mod support {
        pub fn temp_dir(prefix: &str, name: &str) -> std::path::PathBuf {
            super::super::support::temp_dir(prefix, name)
        }
    }
}
