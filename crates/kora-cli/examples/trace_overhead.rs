//! Measures what tracing costs a realistic run: CALLS model calls to the loopback fake provider, traced and untraced.
//!
//! Run it through `python3 scripts/bench_trace.py --live` (which builds the release binary
//! first), or `cargo run --release -p kora-cli --example trace_overhead -- [CALLS] [ROUNDS]`.
//! It prints numbers and asserts nothing: timings belong in a note, not in a test.
//!
//! The program makes CALLS typed `analyze` calls from an agent against `kora-testkit`'s fake
//! provider, each a real HTTP exchange on the loopback interface (three spans a call: the
//! agent, the chat, the attempt). It runs ROUNDS times with the default trace file and ROUNDS
//! times with `--no-trace`, in a shuffled order each round, so both variants see the same
//! machine load; the medians are compared, for wall time and for CPU time (user + system,
//! every thread of the `kora` process). A zero-call program is timed too, so start-up can
//! be subtracted from the program's own run time.

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

agent triage(i: int) -> int:
    v: Result[Verdict] = analyze({{"ticket": i, "text": "charged twice"}}, "Label this ticket.")
    match v:
        case Ok(x):
            return 1
        case _:
            return 0

ok = 0
for i in range({calls}):
    ok += triage(i)
print(ok)
"#
    )
}

fn kora_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target profile folder");
    dir.join(if cfg!(windows) { "kora.exe" } else { "kora" })
}

fn folder(fake: &FakeProvider, name: &str, calls: usize) -> PathBuf {
    let d = std::env::temp_dir().join(format!("kora-trace-cost-{}-{name}", std::process::id()));
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

/// CPU time (user + system) of every child that has ended so far.
fn children_cpu() -> Duration {
    // SAFETY: getrusage writes one `rusage` into the zeroed value it is given.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut u);
        u
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(u.ru_utime) + tv(u.ru_stime)
}

/// One run's (wall, CPU) time.
fn once(d: &Path, traced: bool, expect: &str) -> (Duration, Duration) {
    let mut c = Command::new(kora_binary());
    c.arg("run");
    if !traced {
        c.arg("--no-trace");
    }
    let cpu = children_cpu();
    let start = Instant::now();
    let out = c.arg(d.join("main.ko")).output().expect("kora runs");
    let took = start.elapsed();
    let cpu = children_cpu().saturating_sub(cpu);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        expect,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (took, cpu)
}

fn median(mut v: Vec<Duration>) -> Duration {
    assert!(!v.is_empty(), "at least one round");
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    // `serve CALLS`: set up the folder and keep the fake answering until killed, so the
    // run can be taken under `valgrind --tool=callgrind` by hand (exact instruction counts
    // where wall time is too noisy to tell the variants apart).
    if std::env::args().nth(1).as_deref() == Some("serve") {
        let calls: usize = std::env::args()
            .nth(2)
            .and_then(|a| a.parse().ok())
            .unwrap_or(200);
        let fake = FakeProvider::with_default(Behaviour::AnswerWithUsage(ANSWER.into(), 40, 12));
        let d = folder(&fake, "serve", calls);
        println!("{}", d.join("main.ko").display());
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    let mut args = std::env::args().skip(1);
    let calls: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(11);
    assert!(
        kora_binary().exists(),
        "build the binary first: cargo build --release -p kora-cli"
    );
    let fake = FakeProvider::with_default(Behaviour::AnswerWithUsage(ANSWER.into(), 40, 12));
    let many = folder(&fake, "many", calls);
    let none = folder(&fake, "none", 0);
    let expect = calls.to_string();
    // Warm the page cache and the trace folder.
    once(&many, true, &expect);
    let mut runs: [Vec<(Duration, Duration)>; 3] = Default::default();
    // Each round runs the three variants in a shuffled order, so no variant always follows
    // another (a run that warms the machine for the next would otherwise bias the pair).
    let mut seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64 | 1);
    for _ in 0..rounds {
        let mut order = [0usize, 1, 2];
        for i in (1..3).rev() {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            order.swap(i, (seed % (i as u64 + 1)) as usize);
        }
        for v in order {
            runs[v].push(match v {
                0 => once(&many, true, &expect),
                1 => once(&many, false, &expect),
                _ => once(&none, false, "0"),
            });
        }
    }
    println!("calls per run: {calls} to the loopback fake (median of {rounds} alternating rounds)");
    for (what, pick) in [
        (
            "wall",
            (|r: &(Duration, Duration)| r.0) as fn(&(Duration, Duration)) -> Duration,
        ),
        ("cpu ", |r: &(Duration, Duration)| r.1),
    ] {
        let [on, off, base] = [0, 1, 2].map(|i| median(runs[i].iter().map(pick).collect()));
        let run_off = off.saturating_sub(base);
        let extra = on.as_secs_f64() - off.as_secs_f64();
        println!(
            "{what}: traced {:.1} ms, untraced {:.1} ms, start-up {:.1} ms; tracing {:+.2} ms = {:+.2}% of the untraced run ({:+.2}% without start-up), {:+.1} us per call",
            ms(on),
            ms(off),
            ms(base),
            extra * 1e3,
            100.0 * extra / off.as_secs_f64(),
            100.0 * extra / run_off.as_secs_f64().max(1e-9),
            extra * 1e6 / calls as f64
        );
    }
    for d in [many, none] {
        let _ = std::fs::remove_dir_all(d);
    }
}
