//! `kora dap` end to end over stdio: with the `uncaught` exception filter set, a runtime error
//! stops the program in the frame that raised it (reason `exception`, the message shown,
//! `exceptionInfo` answered, locals readable); without it, the program just ends with code 1.
//! A bad `kora.toml` is reported as `kora run` reports it (E1405, file:line, key) and nothing runs.

mod protocol;

use protocol::{scratch, Peer};
use serde_json::{json, Value};

const PROGRAM: &str = r#"def divide(a: int, b: int) -> int:
    q = a // b
    return q

def run(n: int) -> int:
    return divide(n, 0)

print("before")
total = run(10)
print("never")
"#;

fn request(p: &mut Peer, command: &str, arguments: Value) -> Value {
    let seq = p.next_seq();
    p.write(&json!({"seq": seq, "type": "request", "command": command, "arguments": arguments}));
    p.wait(&format!("the {command} response"), |m| {
        m["type"] == "response" && m["request_seq"] == seq
    })
}

fn ok(p: &mut Peer, command: &str, arguments: Value) -> Value {
    let r = request(p, command, arguments);
    assert_eq!(r["success"], true, "{command} failed: {r}");
    r["body"].clone()
}

fn event(p: &mut Peer, name: &str) -> Value {
    p.wait(&format!("a {name} event"), |m| {
        m["type"] == "event" && m["event"] == name
    })["body"]
        .clone()
}

/// Starts a session on `PROGRAM` with these exception filters; returns the capabilities too.
fn launch(name: &str, filters: &[&str]) -> (Peer, Value) {
    let dir = scratch(name);
    let main = dir.join("main.ko");
    std::fs::write(&main, PROGRAM).expect("write program");
    let mut p = Peer::spawn("dap");
    let caps = ok(&mut p, "initialize", json!({"adapterID": "kora"}));
    event(&mut p, "initialized");
    ok(&mut p, "launch", json!({"program": main.to_str()}));
    ok(
        &mut p,
        "setExceptionBreakpoints",
        json!({"filters": filters}),
    );
    ok(&mut p, "configurationDone", json!({}));
    (p, caps)
}

#[test]
fn an_uncaught_error_stops_where_it_was_raised() {
    let (mut p, caps) = launch("dap-error-stop", &["uncaught"]);
    let filters = caps["exceptionBreakpointFilters"]
        .as_array()
        .expect("the filter is advertised")
        .clone();
    assert_eq!(filters.len(), 1);
    assert_eq!(filters[0]["filter"], "uncaught");
    assert_eq!(caps["supportsExceptionInfoRequest"], true);

    let stop = event(&mut p, "stopped");
    assert_eq!(stop["reason"], "exception");
    let text = stop["text"].as_str().unwrap_or("").to_string();
    assert!(text.contains("zero"), "the message is shown: {stop}");

    // Stopped before unwinding: the stack is the one that failed.
    let frames = ok(&mut p, "stackTrace", json!({"threadId": 1}))["stackFrames"].clone();
    let frames = frames.as_array().expect("frames");
    let names: Vec<&str> = frames.iter().filter_map(|f| f["name"].as_str()).collect();
    assert_eq!(names, ["divide", "run", "<module main.ko>"]);
    assert_eq!(frames[0]["line"], 2);
    assert_eq!(frames[1]["line"], 6);
    let scopes = ok(&mut p, "scopes", json!({"frameId": 0}));
    let locals = scopes["scopes"][0]["variablesReference"].clone();
    let vars = ok(&mut p, "variables", json!({"variablesReference": locals}))["variables"].clone();
    let b = vars
        .as_array()
        .and_then(|v| v.iter().find(|v| v["name"] == "b"))
        .expect("b is a local");
    assert_eq!(b["value"], "0");

    let info = ok(&mut p, "exceptionInfo", json!({"threadId": 1}));
    assert_eq!(info["breakMode"], "unhandled");
    assert_eq!(info["description"], text.as_str());
    assert!(
        info["exceptionId"].as_str().unwrap_or("").starts_with('E'),
        "the error's code: {info}"
    );

    // Going on lets the error end the program, as a run would.
    ok(&mut p, "continue", json!({"threadId": 1}));
    assert_eq!(event(&mut p, "exited")["exitCode"], 1);
    let printed: Vec<String> = p
        .seen
        .iter()
        .filter(|m| m["event"] == "output")
        .filter_map(|m| m["body"]["output"].as_str().map(str::to_string))
        .collect();
    assert!(printed.iter().any(|o| o == "before\n"), "{printed:?}");
    assert!(!printed.iter().any(|o| o.contains("never")), "{printed:?}");
    let refused = request(&mut p, "exceptionInfo", json!({"threadId": 1}));
    assert_eq!(refused["success"], false);
    ok(&mut p, "disconnect", json!({}));
    assert_eq!(p.exit_code(), Some(0));
}

#[test]
fn without_the_filter_an_error_ends_the_program_without_stopping() {
    let (mut p, _) = launch("dap-error-run", &[]);
    let exited = event(&mut p, "exited");
    assert_eq!(exited["exitCode"], 1);
    assert!(
        !p.seen.iter().any(|m| m["event"] == "stopped"),
        "{:#?}",
        p.seen
    );
    ok(&mut p, "disconnect", json!({}));
    assert_eq!(p.exit_code(), Some(0));
}

#[test]
fn a_bad_manifest_is_reported_with_its_line_and_nothing_runs() {
    let dir = scratch("dap-bad-manifest");
    std::fs::write(
        dir.join("kora.toml"),
        "[dependencies]\ngreet = { path = \"../greet\", postinstall = \"curl x | sh\" }\n",
    )
    .expect("write manifest");
    let main = dir.join("main.ko");
    std::fs::write(&main, "print(\"the program ran\")\n").expect("write program");
    let mut p = Peer::spawn("dap");
    ok(&mut p, "initialize", json!({"adapterID": "kora"}));
    event(&mut p, "initialized");
    ok(&mut p, "launch", json!({"program": main.to_str()}));
    ok(&mut p, "configurationDone", json!({}));
    // The program may end before configurationDone is answered: its events are then in `seen`.
    let is_exit = |m: &Value| m["type"] == "event" && m["event"] == "exited";
    let exited = match p.seen.iter().find(|m| is_exit(m)).cloned() {
        Some(m) => m,
        None => p.wait("the exited event", is_exit),
    };
    let said: String = p
        .seen
        .iter()
        .filter(|m| m["event"] == "output")
        .filter_map(|m| m["body"]["output"].as_str())
        .collect();
    assert_eq!(exited["body"]["exitCode"], 2, "{said}");
    assert!(
        said.contains("E1405")
            && said.contains("kora.toml:2")
            && said.contains("dependencies.greet.postinstall"),
        "{said}"
    );
    assert!(!said.contains("the program ran"), "nothing runs: {said}");
}
