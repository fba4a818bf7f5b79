//! `use mcp`: end-to-end through the `kora` binary against an adversarial loopback server
//! (`tests/mcp/adversary.py`, run by the system `python3`): a server that never answers, one
//! that answers late, one that writes garbage, one that dies mid-call.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::{run_in, temp_dir, Run};

fn python() -> Option<&'static str> {
    let ok = std::process::Command::new("python3")
        .arg("-c")
        .arg("pass")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: no python3 to run the adversarial MCP server");
    }
    ok.then_some("python3")
}

fn adversary() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/adversary.py")
}

/// A project whose `[mcp.adv]` runs the adversary in `mode`, and a program using it.
fn project(name: &str, mode: &str, timeout: &str, program: &str) -> (PathBuf, PathBuf) {
    let d = temp_dir("kora-mcp", name);
    let state = d.join("state");
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[mcp.adv]\ncommand = \"python3\"\nargs = [{:?}, {mode:?}, {:?}]\ntimeout_secs = {timeout}\n",
            adversary().display().to_string(),
            state.display().to_string()
        ),
    )
    .expect("kora.toml");
    std::fs::write(d.join("main.ko"), program).expect("program");
    (d, state)
}

fn calls(state: &Path) -> u32 {
    std::fs::read_to_string(state.join("calls"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

fn lives(state: &Path) -> u32 {
    std::fs::read_to_string(state.join("lives"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_server_that_never_answers_is_failed_within_the_timeout_after_one_request() {
    if python().is_none() {
        return;
    }
    let (d, state) = project(
        "silent",
        "silent",
        "2",
        "use mcp adv as adv\nr = adv.ping(x=\"a\")\nprint(r)\nprint(\"went on\")\n",
    );
    let t = Instant::now();
    let r = run_in(&d, &["run", "main.ko"]);
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("Failed('no answer from the MCP server `adv`"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("not called again") && r.stdout.contains("went on"),
        "{}",
        r.stdout
    );
    assert_eq!(calls(&state), 1, "a tool call is never retried");
    let cancelled = std::fs::read_to_string(state.join("cancelled")).unwrap_or_default();
    assert_eq!(
        cancelled.lines().count(),
        1,
        "the timed-out request was cancelled: {cancelled:?}"
    );
}

#[test]
fn a_late_reply_is_ignored_and_the_next_call_gets_its_own_answer() {
    if python().is_none() {
        return;
    }
    let (d, state) = project(
        "late",
        "late",
        "2",
        "use mcp adv as adv\nuse time\nprint(adv.ping(x=\"first\"))\ntime.sleep(2.5)\nprint(adv.ping(x=\"second\"))\nprint(adv.ping(x=\"third\"))\n",
    );
    let r = run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].starts_with("Failed("), "{}", r.stdout);
    assert_eq!(lines[1], "Ok('pong second #2')", "{}", r.stdout);
    assert_eq!(lines[2], "Ok('pong third #3')", "{}", r.stdout);
    assert_eq!(calls(&state), 3);
}

#[test]
fn garbage_on_stdout_is_failed_without_a_panic_and_the_next_call_restarts() {
    if python().is_none() {
        return;
    }
    let (d, state) = project(
        "garbage",
        "garbage",
        "5",
        "use mcp adv as adv\nprint(adv.ping(x=\"a\"))\nprint(adv.ping(x=\"b\"))\n",
    );
    let t = Instant::now();
    let r = run_in(&d, &["run", "main.ko"]);
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "waited for the timeout: {:?}",
        t.elapsed()
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].starts_with("Failed('protocol error") && lines[0].contains("not JSON-RPC"),
        "{}",
        r.stdout
    );
    assert!(
        lines[1].starts_with("Failed('protocol error"),
        "{}",
        r.stdout
    );
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    assert_eq!(
        lives(&state),
        2,
        "the broken server is replaced at the next call"
    );
}

#[test]
fn a_server_that_dies_mid_call_is_failed_and_the_next_call_restarts_it() {
    if python().is_none() {
        return;
    }
    let (d, state) = project(
        "die",
        "die",
        "5",
        "use mcp adv as adv\nprint(adv.ping(x=\"a\"))\nprint(adv.ping(x=\"b\"))\n",
    );
    let t = Instant::now();
    let r: Run = run_in(&d, &["run", "main.ko"]);
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(
        lines[0].starts_with("Failed('the MCP server `adv` exited"),
        "{}",
        r.stdout
    );
    assert_eq!(lines[1], "Ok('pong b #2')", "{}", r.stdout);
    assert_eq!((calls(&state), lives(&state)), (2, 2));
}

#[test]
fn a_missing_server_table_is_an_error_naming_the_use_before_anything_runs() {
    let d = temp_dir("kora-mcp", "missing");
    std::fs::write(d.join("kora.toml"), "[mcp.other]\ncommand = \"x\"\n").expect("toml");
    std::fs::write(
        d.join("main.ko"),
        "print(\"ran\")\nuse mcp github as gh\nprint(gh.x(a=1))\n",
    )
    .expect("ko");
    let r = run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.contains("main.ko:2:1")
            && r.stderr.contains("no `[mcp.github]`")
            && r.stderr.contains("other"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_bad_mcp_table_names_its_key_and_line_and_a_zero_timeout_warns() {
    let d = temp_dir("kora-mcp", "badcfg");
    std::fs::write(d.join("main.ko"), "use mcp adv as adv\nprint(1)\n").expect("ko");
    std::fs::write(
        d.join("kora.toml"),
        "[mcp.adv]\ncommand = \"python3\"\nargz = []\n",
    )
    .expect("toml");
    let r = run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("kora.toml:3") && r.stderr.contains("argz"),
        "{}",
        r.stderr
    );
    std::fs::write(
        d.join("kora.toml"),
        "[mcp.adv]\ncommand = \"python3\"\ntimeout_secs = 0\n",
    )
    .expect("toml");
    let r = run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("warning") && r.stderr.contains("timeout_secs = 0"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_cached_tool_list_lets_the_checker_refuse_bad_calls() {
    if python().is_none() {
        return;
    }
    let (d, _) = project(
        "check",
        "ok",
        "5",
        "use mcp adv as adv\nprint(adv.pong(x=\"a\"))\nprint(adv.ping(y=1))\nprint(adv.ping(x=3))\nprint(adv.ping(\"pos\"))\n",
    );
    // No cache yet: calls are checked at run time; only the positional argument is known wrong.
    let r = run_in(&d, &["check", "main.ko"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("E0853") && r.stderr.contains("1 error found"),
        "{}",
        r.stderr
    );
    let r = run_in(&d, &["check", "--mcp", "main.ko"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(d.join(".kora/mcp/adv.json").is_file());
    for want in [
        "E0852",
        "did you mean `ping`",
        "E0207",
        "E0204",
        "E0853",
        "main.ko:3",
    ] {
        assert!(r.stderr.contains(want), "missing {want}: {}", r.stderr);
    }
    let r = run_in(&d, &["mcp", "list", "adv"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("ping")
            && r.stdout.contains("Answers pong.")
            && r.stdout.contains("shout")
            && r.stdout.contains("\"required\""),
        "{}",
        r.stdout
    );
}

#[test]
fn a_paged_tool_list_is_read_whole_and_each_call_is_a_traced_unverified_sink() {
    if python().is_none() {
        return;
    }
    let (d, _) = project(
        "paged",
        "ok",
        "5",
        "use mcp adv as adv\nprint(len(adv.tools))\nprint(adv.shout(x=\"hi\"))\n",
    );
    let r = run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "2\nOk('HI')\n", "{}", r.stderr);
    let trace = std::fs::read_dir(d.join(".kora/traces"))
        .expect("traces written")
        .filter_map(Result::ok)
        .next()
        .expect("one trace")
        .path();
    let trace = std::fs::read_to_string(trace).expect("trace");
    assert!(
        trace.contains("\"execute_tool adv.shout\"") && trace.contains("gen_ai.tool.name"),
        "{trace}"
    );
    // A tool's answer is unverified: it cannot name a file to write until narrowed.
    std::fs::write(
        d.join("main.ko"),
        "use mcp adv as adv\nuse fs\nmatch adv.shout(x=\"out.txt\"):\n    case Ok(name):\n        fs.write(name, \"x\")\n    case _:\n        pass\n",
    )
    .expect("program");
    let r = run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stderr.contains("E1343"), "{}", r.stderr);
    assert!(!d.join("OUT.TXT").exists());
    // The server is a sink of its own name: a secret reaches it only through a release,
    // and `kora audit` lists that release.
    std::fs::write(
        d.join("main.ko"),
        "use mcp adv as adv\nsecret = classified(\"s3cret\")\ndeclassify secret for adv:\n    print(adv.shout(x=secret))\nprint(adv.shout(x=secret))\n",
    )
    .expect("program");
    let r = run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout, "Ok('S3CRET')\n", "{}", r.stderr);
    assert!(r.stderr.contains("declassify NAME for adv"), "{}", r.stderr);
    let r = run_in(&d, &["audit", "main.ko"]);
    assert!(
        r.stdout.contains("main.ko:3:1: declassify secret for adv"),
        "{}\n{}",
        r.stdout,
        r.stderr
    );
}

#[test]
fn a_mocked_tool_answers_in_a_test_without_starting_the_server() {
    let d = temp_dir("kora-mcp", "mock");
    std::fs::write(
        d.join("kora.toml"),
        "[mcp.adv]\ncommand = \"/nonexistent/server\"\n",
    )
    .expect("toml");
    std::fs::write(
        d.join("main.ko"),
        "use mcp adv as adv\n\ndef shout(x: str) -> str:\n    r: str = adv.ping(x=x) else:\n        return \"no\"\n    return r.upper()\n\ntest \"mocked\":\n    with mock adv.ping -> Ok(\"pong\"):\n        assert shout(\"a\") == \"PONG\"\n    with mock adv.ping -> Err(\"down\"):\n        assert shout(\"a\") == \"no\"\n",
    )
    .expect("ko");
    let r = run_in(&d, &["test", "main.ko"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("PASS"), "{}", r.stdout);
}

#[test]
fn a_tool_call_sent_but_never_recorded_stops_the_resume_naming_it() {
    if python().is_none() {
        return;
    }
    let (d, state) = project(
        "durable",
        "ok",
        "5",
        "use mcp adv as adv\nprint(adv.ping(x=\"once\"))\n",
    );
    // Kill the run at each journal append in turn until one lands between the call's mark and its outcome.
    for n in 1..8 {
        let _ = std::fs::remove_dir_all(d.join(".kora/runs"));
        let id = format!("m{n}");
        let out = support::kora(
            &d,
            &["run", "--durable", "--run-id", &id, "main.ko"],
            Some(&n.to_string()),
        );
        let journal = std::fs::read_to_string(d.join(format!(".kora/runs/{id}/journal.jsonl")))
            .unwrap_or_default();
        let sent = journal.contains("\"t\":\"sent\"") && journal.contains("\"kind\":\"mcp\"");
        let done = journal
            .lines()
            .any(|l| l.contains("\"t\":\"done\"") && l.contains("\"kind\":\"mcp\""));
        if !sent || done || out.status.success() {
            continue;
        }
        let before = calls(&state);
        let resumed = support::kora(&d, &["run", "--resume", &id], None);
        assert!(
            support::stopped_on_unknown_write(
                &resumed,
                "mcp adv.ping",
                "an MCP call cut off after its mark"
            ),
            "{}",
            support::text(&resumed.stderr)
        );
        assert_eq!(
            calls(&state),
            before,
            "the resume did not call the tool again"
        );
        return;
    }
    panic!("no kill point fell between the MCP call's mark and its outcome");
}

#[test]
fn a_budget_counts_direct_tool_calls_and_bounds_their_time() {
    if python().is_none() {
        return;
    }
    let (d, state) = project(
        "budget",
        "ok",
        "5",
        "use mcp adv as adv\nbudget(max_calls=1):\n    print(adv.ping(x=\"1\"))\n    print(adv.ping(x=\"2\"))\n",
    );
    let r = run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "Ok('pong 1 #1')\nExhausted('calls')\n");
    assert_eq!(calls(&state), 1, "the refused call was never sent");
    let (d, _) = project(
        "budget_time",
        "silent",
        "30",
        "use mcp adv as adv\nbudget(max_seconds=1):\n    print(adv.ping(x=\"1\"))\n    print(adv.ping(x=\"2\"))\n",
    );
    let t = Instant::now();
    let r = run_in(&d, &["run", "main.ko"]);
    assert!(
        t.elapsed() < Duration::from_secs(15),
        "the budget's time did not bound the call: {:?}",
        t.elapsed()
    );
    assert_eq!(
        r.stdout, "Exhausted('time')\nExhausted('time')\n",
        "{}",
        r.stderr
    );
}
