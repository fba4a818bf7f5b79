//! `use python`: end-to-end through the `kora` binary with the system `python3` (skipped with a
//! message when there is none): conversions both ways, exceptions and unconvertible results as
//! `Err`, a worker killed mid-call or hanging as `Failed` and replaced, `parallel for` across
//! workers, and no Python at all for a program that does not ask for it.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::{run_in, temp_dir, Run};

fn python() -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", "pass"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: no python3 on PATH");
    }
    ok
}

/// A project with `helpers.py` beside `main.ko`, and `[python]` settings.
fn project(name: &str, settings: &str, program: &str) -> PathBuf {
    let d = temp_dir("kora-py", name);
    let helpers = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/helpers.py");
    std::fs::copy(helpers, d.join("helpers.py")).expect("helpers");
    std::fs::write(d.join("kora.toml"), format!("[python]\n{settings}")).expect("toml");
    std::fs::write(d.join("main.ko"), program).expect("program");
    d
}

fn run(d: &Path) -> Run {
    let r = run_in(d, &["run", "main.ko"]);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

#[test]
fn statistics_mean_reads_into_a_typed_binding() {
    if !python() {
        return;
    }
    let d = project(
        "mean",
        "",
        "use python statistics as stats\n\ndef mean_of(xs: list[float]) -> str:\n    m: float = stats.mean(xs) else (why, kind):\n        return f\"{kind}: {why}\"\n    return f\"{m:.2f}\"\n\ndef as_text(xs: list[int]) -> str:\n    s: str = stats.mean(xs) else (why, kind):\n        return why\n    return s\n\nprint(mean_of([1.0, 2.0, 4.5]))\nprint(mean_of([]))\nprint(as_text([1, 2]))\n",
    );
    let r = run(&d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "2.50");
    assert!(
        lines[1].starts_with("err: StatisticsError: mean requires at least one data point"),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].contains("does not fit `str`") && lines[2].contains("$: expected a string"),
        "{}",
        lines[2]
    );
    // Each call is a span of its own in the run's trace.
    let trace = std::fs::read_dir(d.join(".kora/traces"))
        .expect("traces written")
        .filter_map(Result::ok)
        .next()
        .expect("one trace")
        .path();
    let trace = std::fs::read_to_string(trace).expect("trace");
    assert_eq!(
        trace.matches("\"execute_tool statistics.mean\"").count(),
        3,
        "{trace}"
    );
    assert!(
        trace.contains("\"kora.tool.source\",\"value\":{\"stringValue\":\"python\"}"),
        "{trace}"
    );
}

#[test]
fn every_convertible_value_crosses_both_ways() {
    if !python() {
        return;
    }
    let d = project(
        "kinds",
        "",
        r#"use python helpers as h
use python json as pyjson

type Item:
    name: str
    qty: int

print(h.every_kind())
print(h.echo(None, True, 3, 2.5, "s", [1, 2], (1, "t"), {"k": [1]}, {5}, {1: "int key"}, Item("pen", 2), range(3), k=(None,)))
print(pyjson.dumps({"a": [1, 2.5, None, True, "é"]}, sort_keys=True))
print(pyjson.loads("{\"x\": [1, {\"y\": null}]}"))
print(h.echo(2 ** 100, -(2 ** 70)))
"#,
    );
    let r = run(&d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    // In Python's own order: a dict's keys keep their order across the boundary.
    assert_eq!(
        lines[0],
        "Ok({'none': None, 'yes': True, 'int': -7, 'float': 2.5, 'str': 'héllo', 'bytes': b'\\x00\\xff', 'list': [1, [2]], 'tuple': (1, 'a'), 'set': {3}, 'int_keys': {1: 'one'}, 'dataclass': {'x': 1, 'label': 'p'}, 'namedtuple': {'left': 1, 'right': 2}})"
    );
    assert_eq!(
        lines[1],
        "Ok([[None, True, 3, 2.5, 's', [1, 2], (1, 't'), {'k': [1]}, {5}, {1: 'int key'}, {'name': 'pen', 'qty': 2}, [0, 1, 2]], {'k': (None,)}])"
    );
    assert_eq!(
        lines[2],
        "Ok('{\"a\": [1, 2.5, null, true, \"\\\\u00e9\"]}')"
    );
    assert_eq!(lines[3], "Ok({'x': [1, {'y': None}]})");
    assert_eq!(
        lines[4],
        "Ok([[1267650600228229401496703205376, -1180591620717411303424], {}])"
    );
}

#[test]
fn exceptions_and_unconvertible_results_are_err() {
    if !python() {
        return;
    }
    let d = project(
        "errs",
        "",
        "use python helpers as h\nprint(h.divide(1, 0))\nprint(h.unconvertible())\nprint(h.huge())\nprint(h.missing())\nprint(h.divide(6, 3))\nuse python not_a_module_anywhere as nm\nprint(nm.f())\nprint(nm.f())\nprint(h.echo(print))\n",
    );
    let r = run(&d);
    assert_eq!(
        r.code, 1,
        "passing a function to Python is a program error: {}",
        r.stderr
    );
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].starts_with("Err('ZeroDivisionError: division by zero (at ")
            && lines[0].contains("helpers.py:")
            && lines[0].contains("in divide)"),
        "{}",
        lines[0]
    );
    assert!(lines[1].contains("type `object`"), "{}", lines[1]);
    // An int past 64 bits is an ordinary (big) int on this side.
    assert_eq!(lines[2], "Ok(1180591620717411303424)");
    assert!(
        lines[3].starts_with("Err(\"AttributeError: module 'helpers' has no attribute 'missing'"),
        "{}",
        lines[3]
    );
    assert_eq!(lines[4], "Ok(2.0)");
    assert!(
        lines[5]
            .starts_with("Failed(\"cannot import the Python module `not_a_module_anywhere` with /"),
        "{}",
        lines[5]
    );
    assert_eq!(lines[5], lines[6]);
    assert_eq!(
        r.stderr.matches("cannot import the Python module").count(),
        1,
        "reported once: {}",
        r.stderr
    );
    assert!(
        r.stderr.contains("cannot cross to another process"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_worker_killed_mid_call_is_failed_and_the_next_call_works() {
    if !python() {
        return;
    }
    let d = project(
        "die",
        "",
        "use python helpers as h\nprint(h.die())\nprint(h.divide(1, 4))\n",
    );
    let r = run(&d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0]
            .starts_with("Failed('the Python worker running `helpers.die` died during the call"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1], "Ok(0.25)");
}

#[test]
fn a_hanging_call_is_failed_within_the_timeout_and_its_worker_replaced() {
    if !python() {
        return;
    }
    let d = project(
        "hang",
        "timeout_secs = 1\n",
        "use python helpers as h\nprint(h.hang())\nprint(h.divide(1, 2))\n",
    );
    let t = Instant::now();
    let r = run(&d);
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].starts_with("Failed(") && lines[0].contains("no answer within"),
        "{}",
        lines[0]
    );
    assert_eq!(lines[1], "Ok(0.5)");
}

/// The load average over the last minute, when the system reports it.
fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

#[test]
fn a_parallel_for_of_python_calls_runs_on_separate_workers() {
    if !python() {
        return;
    }
    let n = std::env::var("KORA_PY_SPIN")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3_000_000u64);
    let d = project(
        "parallel",
        "workers = 8\n",
        &format!(
            r#"use python helpers as h
use time

h.noop()
t0 = time.now()
for i in range(8):
    r = h.spin({n})
seq = time.now().since(t0)
t1 = time.now()
outs = parallel for i in range(8):
    return h.timed_spin({n})
par = time.now().since(t1)
pids: set[int] = set()
spans: list[tuple[float, float]] = []
for o in outs:
    match o:
        case Ok(run):
            pids.add(int(run[0]))
            spans.append((float(run[1]), float(run[2])))
        case _:
            print("call failed", o)
overlap = False
for i in range(len(spans)):
    for j in range(i + 1, len(spans)):
        if spans[i][0] < spans[j][1] and spans[j][0] < spans[i][1]:
            overlap = True
print(len(outs), len(pids), overlap, par < seq)
print(f"sequential {{seq:.2f}} s, parallel {{par:.2f}} s")
"#
        ),
    );
    let r = run(&d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    eprintln!("{}", r.stdout);
    let first: Vec<&str> = r.stdout.lines().next().unwrap_or("").split(' ').collect();
    // Eight calls on eight workers, some of them running at the same moment: Python work in
    // parallel across processes, whatever else the machine is doing (on a loaded machine the
    // scheduler may start the last worker only after the first has finished, so not all eight).
    assert_eq!(first[..3], ["8", "8", "True"], "{}", r.stdout);
    // Faster in wall-clock time only where there are cores to spare: on a machine already
    // busier than its cores the scheduler, not the pool, decides the time.
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    match load_average() {
        Some(load) if cores >= 2 && load < cores as f64 - 1.0 => {
            assert_eq!(first[3], "True", "{}", r.stdout)
        }
        load => eprintln!("the speedup is not asserted: load average {load:?} on {cores} cores"),
    }
}

#[test]
fn a_program_without_use_python_needs_no_python_and_one_that_calls_nothing_starts_none() {
    let d = temp_dir("kora-py", "none");
    std::fs::write(
        d.join("kora.toml"),
        "[python]\ninterpreter = \"/nonexistent/python\"\n",
    )
    .expect("toml");
    std::fs::write(d.join("main.ko"), "print(\"no python here\")\n").expect("program");
    let r = run(&d);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "no python here\n"),
        "{}",
        r.stderr
    );
    std::fs::write(
        d.join("main.ko"),
        "use python statistics as stats\nprint(\"never called\")\n",
    )
    .expect("program");
    let r = run(&d);
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "never called\n"),
        "{}",
        r.stderr
    );
    std::fs::write(
        d.join("main.ko"),
        "use python statistics as stats\nprint(stats.mean([1]))\n",
    )
    .expect("program");
    let r = run(&d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("Failed('cannot start the Python worker with `/nonexistent/python`"),
        "{}",
        r.stdout
    );
}

#[test]
fn a_python_call_is_mocked_in_a_test_and_a_classified_argument_needs_a_release() {
    if !python() {
        return;
    }
    let d = project(
        "mock",
        "",
        "use python helpers as h\n\ndef half(x: float) -> float:\n    r: float = h.divide(x, 2) else:\n        return -1.0\n    return r\n\ntest \"mocked\":\n    with mock h.divide -> Ok(21.0):\n        assert half(4.0) == 21.0\n    with mock h.divide -> Err(\"ZeroDivisionError\"):\n        assert half(4.0) == -1.0\n\ntest \"live\":\n    assert half(5.0) == 2.5\n",
    );
    let r = run_in(&d, &["test", "main.ko"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("2 passed"), "{}", r.stdout);
    std::fs::write(
        d.join("main.ko"),
        "use python helpers as h\nsecret = classified(\"s3cret\")\ndeclassify secret for python:\n    print(h.echo(secret))\nprint(h.echo(secret))\n",
    )
    .expect("program");
    let r = run(&d);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.starts_with("Ok([['"), "{}", r.stdout);
    assert!(
        r.stderr.contains("declassify NAME for python"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_durable_run_replays_python_results_instead_of_calling_again() {
    if !python() {
        return;
    }
    let d = project(
        "durable",
        "",
        "use python helpers as h\nprint(h.record(\"log.txt\", \"before\"))\nanswer = ask_human(\"go on?\")\nprint(h.record(\"log.txt\", \"after \" + answer))\n",
    );
    let started = run_in(&d, &["run", "--durable", "--run-id", "py1", "main.ko"]);
    assert_eq!(
        started.code, 3,
        "suspended on the question: {}",
        started.stderr
    );
    let answered = run_in(&d, &["answer", "py1", "yes"]);
    assert_eq!(answered.code, 0, "{}", answered.stderr);
    let resumed = run_in(&d, &["run", "--resume", "py1"]);
    assert_eq!(resumed.code, 0, "{}", resumed.stderr);
    let log = std::fs::read_to_string(d.join("log.txt")).expect("log");
    assert_eq!(
        log, "before\nafter yes\n",
        "the first call was replayed, not made again"
    );
    let journal = std::fs::read_to_string(d.join(".kora/runs/py1/journal.jsonl")).expect("journal");
    assert!(journal.contains("\"kind\":\"python\""), "{journal}");
}
