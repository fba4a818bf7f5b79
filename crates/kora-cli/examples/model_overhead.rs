//! Measures what `analyze` costs beyond the HTTP exchange itself, and what a replayed cassette call costs.
//!
//! Run it through `scripts/bench_models.py` (which builds the release binary first), or
//! `cargo run --release -p kora-cli --example model_overhead -- [CALLS]`. It prints numbers
//! and asserts nothing: timings belong in a note, not in a test.
//!
//! 1. Raw: the exact request body one `analyze` sent, POSTed over a fresh loopback TCP
//!    connection to the fake provider and read to the end, CALLS times.
//! 2. `analyze`: a program making CALLS typed calls against the same fake, timed through the
//!    `kora` binary, minus the same program making none (start-up, checking, the loop).
//!    The difference per call is the overhead: request building, schema, transport, decoding
//!    the outcome, the effect pipeline and the cassette lookup.
//! 3. Replay: CALLS distinct calls recorded to a cassette, then run with `--replay` (no
//!    provider), minus the zero-call run.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use kora_testkit::{Behaviour, FakeProvider};

const ANSWER: &str = r#"{"ok": {"label": "billing", "score": 0.9}, "uncertain": null}"#;

fn program(calls: usize) -> String {
    format!(
        r#"type Verdict:
    label: str
    score: float

ok = 0
for i in range({calls}):
    v: Result[Verdict] = analyze({{"ticket": i, "text": "charged twice"}}, "Label this ticket.")
    match v:
        case Ok(x):
            ok += 1
        case _:
            pass
print(ok)
"#
    )
}

fn kora_binary() -> PathBuf {
    // examples/model_overhead lives in target/<profile>/examples; the binary one folder up.
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target profile folder");
    dir.join(if cfg!(windows) { "kora.exe" } else { "kora" })
}

fn folder(fake: &FakeProvider, name: &str, calls: usize) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kora-overhead-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[models]\ndefault = {{ name = \"bench-model\", endpoint = \"{}\" }}\n",
            fake.openai_endpoint()
        ),
    )
    .expect("kora.toml");
    std::fs::write(d.join("main.ko"), program(calls)).expect("program");
    d
}

/// Best wall time of `reps` runs of `kora run ARGS main.ko`; checks what it printed.
fn time_kora(d: &Path, args: &[&str], expect: &str, reps: usize) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..reps {
        let start = Instant::now();
        let out = Command::new(kora_binary())
            .arg("run")
            .arg("--no-trace")
            .args(args)
            .arg(d.join("main.ko"))
            .output()
            .expect("kora runs");
        let took = start.elapsed();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            stdout.trim(),
            expect,
            "kora printed something else: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        best = best.min(took);
    }
    best
}

/// One raw POST of `body` to the fake and the whole response read back.
fn raw_exchange(addr: &str, body: &[u8]) -> usize {
    let mut s = TcpStream::connect(addr).expect("connect");
    let _ = s.set_nodelay(true);
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("write head");
    s.write_all(body).expect("write body");
    let mut out = Vec::new();
    s.read_to_end(&mut out).expect("read response");
    out.len()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let calls: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let reps = 3;
    let fake = FakeProvider::with_default(Behaviour::Answer(ANSWER.into()));
    assert!(
        kora_binary().exists(),
        "build the binary first: cargo build --release -p kora-cli"
    );

    // The body analyze really sends, captured from one call.
    let one = folder(&fake, "one", 1);
    time_kora(&one, &[], "1", 1);
    let body = fake.requests()[0].raw_body.clone();
    let addr = fake.url().trim_start_matches("http://").to_string();

    let mut raw_best = Duration::MAX;
    for _ in 0..reps {
        let start = Instant::now();
        for _ in 0..calls {
            raw_exchange(&addr, &body);
        }
        raw_best = raw_best.min(start.elapsed());
    }

    let none = folder(&fake, "none", 0);
    let base = time_kora(&none, &[], "0", reps);
    let many = folder(&fake, "many", calls);
    let expect = calls.to_string();
    let live = time_kora(&many, &[], &expect, reps);

    // Replay: record every call once, then answer all of them from the cassette.
    time_kora(&many, &["--record"], &expect, 1);
    drop(fake);
    let replay = time_kora(&many, &["--replay"], &expect, reps);

    let raw_per = ms(raw_best) / calls as f64;
    let analyze_per = ms(live.saturating_sub(base)) / calls as f64;
    println!("calls per measurement:         {calls} (best of {reps})");
    println!("request body:                  {} bytes", body.len());
    println!("raw HTTP exchange:             {raw_per:.3} ms per call");
    println!("analyze against the same fake: {analyze_per:.3} ms per call");
    println!(
        "overhead analyze adds:         {:.3} ms per call",
        analyze_per - raw_per
    );
    println!(
        "{calls} replayed cassette calls:   {:.1} ms (program start-up excluded: {:.1} ms)",
        ms(replay.saturating_sub(base)),
        ms(base)
    );
    for d in [one, none, many] {
        let _ = std::fs::remove_dir_all(d);
    }
}
