//! End to end: the threads `parallel for` branches run on: how many wait at once, whatever
//! the core count, and how deep a branch may recurse.
//!
//! A local HTTP server holds every request until `MEET` requests have arrived, and only
//! then answers "together"; nothing is answered before that, so eight "together" answers
//! mean eight branches were waiting at the same time. A pool of one thread per core keeps
//! two branches in flight on a 2-core machine, and its first requests are answered "alone"
//! once the server gives up waiting. Nothing here is timed: the give-up exists only so a
//! failing build ends instead of hanging.

mod support;

use std::net::TcpListener;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use kora_testkit::http::{read_request, write_plain};

const MEET: usize = 8;

/// Starts the server; returns its port.
fn meeting_point() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let port = listener.local_addr().expect("addr").port();
    let arrived = Arc::new((Mutex::new(0usize), Condvar::new()));
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let arrived = Arc::clone(&arrived);
            std::thread::spawn(move || {
                if read_request(&mut conn).is_none() {
                    return;
                }
                let (count, cv) = &*arrived;
                let mut n = count.lock().expect("count");
                *n += 1;
                cv.notify_all();
                let (n, _) = cv
                    .wait_timeout_while(n, Duration::from_secs(20), |n| *n < MEET)
                    .expect("wait");
                let body: &[u8] = if *n >= MEET { b"together" } else { b"alone" };
                drop(n);
                let _ = write_plain(&mut conn, 200, "text/plain", &[], body);
            });
        }
    });
    port
}

fn program(port: u16) -> String {
    format!(
        r#"use http

got: list[str] = parallel for i in range({MEET}):
    r: http.Response = http.get("http://127.0.0.1:{port}/meet", timeout=60.0) else (why, kind):
        return why
    return r.body
print(got)
"#
    )
}

fn expected() -> String {
    format!("[{}]\n", ["'together'"; MEET].join(", "))
}

#[test]
fn branches_that_wait_are_in_flight_together_even_on_few_cores() {
    let d = support::temp_dir("kora-parallel-pool", "meet");
    std::fs::write(d.join("main.ko"), program(meeting_point())).expect("program");
    let r = support::run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, expected(), "{}", r.stderr);
}

#[test]
fn a_durable_run_keeps_them_in_flight_together_too() {
    let d = support::temp_dir("kora-parallel-pool", "meet-durable");
    std::fs::write(d.join("main.ko"), program(meeting_point())).expect("program");
    let r = support::run_in(&d, &["run", "--durable", "main.ko"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, expected(), "{}", r.stderr);
}

#[test]
fn a_branch_recurses_as_deep_as_the_main_program() {
    let d = support::temp_dir("kora-parallel-pool", "deep");
    let program = r#"def down(n: int) -> int:
    if n == 0:
        return 0
    return 1 + down(n - 1)

got: list[int] = parallel for i in range(3):
    return down(950 + i)
print(got)
"#;
    std::fs::write(d.join("main.ko"), program).expect("program");
    let r = support::run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "[950, 951, 952]\n");
}

#[test]
fn a_bad_width_setting_stops_the_run_naming_the_variable() {
    let d = support::temp_dir("kora-parallel-pool", "bad-width");
    std::fs::write(d.join("main.ko"), "print(\"ran\")\n").expect("program");
    for bad in ["0", "many"] {
        let out = support::kora_env(
            &d,
            &["run", "main.ko"],
            None,
            &[("KORA_PARALLEL_WIDTH", bad)],
        );
        assert_eq!(out.status.code(), Some(2), "KORA_PARALLEL_WIDTH={bad}");
        assert!(support::text(&out.stdout).is_empty(), "nothing ran");
        let err = support::text(&out.stderr);
        assert!(err.contains("KORA_PARALLEL_WIDTH"), "{err}");
        assert!(err.contains("from 1 to"), "{err}");
    }
    let ok = support::kora_env(
        &d,
        &["run", "main.ko"],
        None,
        &[("KORA_PARALLEL_WIDTH", "3")],
    );
    assert_eq!(support::text(&ok.stdout), "ran\n");
}
