//! End to end: what Kora cannot observe (an HTTP POST) stops a resume up front, names every such effect, and a person settles each in place.
//!
//! Three branches POST to a loopback server that never answers and a fourth appends a
//! line and asks a model; the run is SIGKILLed once all three POSTs are in flight. The
//! resume must refuse before doing anything (no request reaches either server, the log
//! is unchanged), naming the three POSTs and the commands that settle them; `kora runs`
//! shows the same. A person marks one done and retries one (journaled even though the
//! third still stops the resume), then marks the third done: the run finishes, the
//! retried POST carries the same `Idempotency-Key` as its first attempt, the ones marked
//! done are not sent again.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use kora_testkit::{Behaviour, FakeProvider};
use support::{kora, text};

const PROGRAM: &str = r#"use http
use fs

def main() -> None:
    codes: list[int] = parallel for i in range(4):
        if i < 3:
            r: http.Response = http.post(f"HOOK/hook/{i}", {"item": i}) else (why, kind):
                return -1
            return r.status
        wrote: None = fs.append("log.txt", f"{i}\n") else (why, kind):
            return -2
        v: Result[str] = analyze(f"[item {i}]", "Say fine.")
        return 200
    print(codes)

main()
"#;

/// The slots of the POSTs the journal holds as sent and not done, in journal order.
fn open_posts(d: &Path) -> Vec<String> {
    let journal = std::fs::read_to_string(d.join(".kora/runs/x/journal.jsonl")).unwrap_or_default();
    let slot = |l: &str| -> Option<String> {
        let rest = l.split("\"slot\":\"").nth(1)?;
        Some(rest.split('"').next()?.to_string())
    };
    let sent: Vec<String> = journal
        .lines()
        .filter(|l| l.contains("\"t\":\"sent\"") && l.contains("http.post"))
        .filter_map(slot)
        .collect();
    sent.into_iter()
        .filter(|s| {
            !journal
                .lines()
                .any(|l| l.contains("\"t\":\"done\"") && slot(l).as_deref() == Some(s))
        })
        .collect()
}

#[test]
fn posts_cut_off_by_a_kill_stop_the_resume_up_front_until_a_person_settles_each() {
    let model = FakeProvider::with_default(Behaviour::Answer("fine".into()));
    let hooks = FakeProvider::with_default(Behaviour::Stall(Duration::from_secs(60)));
    let d = support::temp_dir("kora-durable-resolve", "posts");
    support::write_fake_config(&d, &model.openai_endpoint());
    std::fs::write(d.join("prog.ko"), PROGRAM.replace("HOOK", &hooks.url())).expect("program");

    let mut child = Command::new(env!("CARGO_BIN_EXE_kora"))
        .args(["run", "--durable", "--run-id", "x", "prog.ko"])
        .current_dir(&d)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("kora starts");
    let mut in_flight = false;
    for _ in 0..400 {
        if open_posts(&d).len() == 3 && hooks.count() == 3 {
            in_flight = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(in_flight, "the three POSTs never were in flight together");
    let posts = open_posts(&d);
    let keys: Vec<String> = hooks
        .requests()
        .iter()
        .map(|r| r.header("idempotency-key").unwrap_or("").to_string())
        .collect();
    assert!(
        keys.iter().all(|k| k.starts_with("kora-")),
        "every POST carries a key: {keys:?}"
    );
    let mut distinct = keys.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "one key per effect: {keys:?}");

    // The resume refuses before anything runs: no request, no write.
    let (models_before, hooks_before) = (model.count(), hooks.count());
    let log_before = std::fs::read_to_string(d.join("log.txt")).unwrap_or_default();
    let out = kora(&d, &["run", "--resume", "x"], None);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("error[E1361]"), "{err}");
    for slot in &posts {
        assert!(
            err.contains(&format!("kora run --resume x --mark-done '{slot}'")),
            "{err}"
        );
        assert!(
            err.contains(&format!("kora run --resume x --retry '{slot}'")),
            "{err}"
        );
    }
    assert!(err.contains("`http.post` to http://127.0.0.1:"), "{err}");
    assert_eq!(
        (model.count(), hooks.count()),
        (models_before, hooks_before),
        "a refused resume sent a request"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("log.txt")).unwrap_or_default(),
        log_before,
        "a refused resume wrote"
    );

    let list = text(&kora(&d, &["runs"], None).stdout);
    assert!(list.contains("x  stopped"), "{list}");
    for slot in &posts {
        assert!(list.contains(&format!("--mark-done '{slot}'")), "{list}");
    }

    // A decision naming nothing pending is refused with the ones that are.
    let wrong = kora(&d, &["run", "--resume", "x", "--retry", "nope/0"], None);
    assert_eq!(wrong.status.code(), Some(2));
    assert!(
        text(&wrong.stderr).contains(&format!("'{}'", posts[0])),
        "{}",
        text(&wrong.stderr)
    );

    // Two settled, one left: the decisions are journaled, the resume still stops on the third.
    hooks.set_default(Behaviour::Answer("{}".into()));
    let partial = kora(
        &d,
        &[
            "run",
            "--resume",
            "x",
            "--mark-done",
            &posts[0],
            "--retry",
            &posts[1],
        ],
        None,
    );
    let err = text(&partial.stderr);
    assert_eq!(partial.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&posts[2]) && !err.contains(&format!("'{}'", posts[0])),
        "{err}"
    );
    assert_eq!(hooks.count(), hooks_before, "nothing ran yet");
    let journal = std::fs::read_to_string(d.join(".kora/runs/x/journal.jsonl")).expect("journal");
    assert_eq!(
        journal.matches("\"by\":\"person\"").count(),
        2,
        "the person's decisions are journaled"
    );

    let done = kora(
        &d,
        &["run", "--resume", "x", "--mark-done", &posts[2]],
        None,
    );
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    let sent = hooks.requests();
    assert_eq!(
        sent.len(),
        hooks_before + 1,
        "only the retried POST is sent again"
    );
    let retried = sent.last().expect("the retry");
    let index = |s: &str| -> usize {
        let path = s.split("hook/").nth(1).unwrap_or("");
        path.parse().unwrap_or(usize::MAX)
    };
    let first_attempt = sent[..hooks_before]
        .iter()
        .find(|r| index(&r.path) == index(&retried.path))
        .expect("the first attempt of the retried POST");
    assert_eq!(
        retried.header("idempotency-key"),
        first_attempt.header("idempotency-key"),
        "a retry repeats the key, so a server that honours it does the work once"
    );
    // Marked done: the program went on as if each had succeeded, with no response seen.
    let shown = text(&done.stdout);
    let codes: Vec<&str> = shown
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .split(", ")
        .collect();
    assert_eq!(codes.iter().filter(|c| **c == "0").count(), 2, "{shown}");
    assert_eq!(codes.len(), 4, "{shown}");
    assert_eq!(
        std::fs::read_to_string(d.join("log.txt"))
            .unwrap_or_default()
            .matches("3\n")
            .count(),
        1
    );
    let list = text(&kora(&d, &["runs"], None).stdout);
    assert!(list.contains("x  finished"), "{list}");
}
