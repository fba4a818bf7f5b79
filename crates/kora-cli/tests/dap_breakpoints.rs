//! `kora dap` end to end: conditional breakpoints (judged in the stopped frame), hit counts,
//! logpoints, `setVariable` on locals and globals, and breakpoints in functions that `parallel for`
//! branches run (refused when only branches run them, verified with the caveat otherwise).

mod protocol;

use protocol::{scratch, Peer};
use serde_json::{json, Value};

const PROGRAM: &str = r#"def work(n: int) -> int:
    doubled = n * 2
    return doubled

def branch_only(x: int) -> int:
    y = x + 1
    return y

def both(x: int) -> int:
    return x - 1

total = 0
for i in range(6):
    total += i
print(f"total {total}")
w = work(4)
print(f"work {w}")
ys = parallel for x in [1, 2]:
    return branch_only(x) + both(x)
print(f"ys {ys} {both(5)}")
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

fn top_line(p: &mut Peer) -> i64 {
    ok(p, "stackTrace", json!({"threadId": 1}))["stackFrames"][0]["line"]
        .as_i64()
        .unwrap_or(0)
}

/// The scope of frame 0 named `name`: its reference and its variables.
fn scope(p: &mut Peer, name: &str) -> (Value, Vec<Value>) {
    let scopes = ok(p, "scopes", json!({"frameId": 0}));
    let r = scopes["scopes"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == name))
        .map(|s| s["variablesReference"].clone())
        .unwrap_or_else(|| panic!("no {name} scope in {scopes}"));
    let vars = ok(p, "variables", json!({"variablesReference": r}))["variables"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    (r, vars)
}

fn value_of(vars: &[Value], name: &str) -> String {
    vars.iter()
        .find(|v| v["name"] == name)
        .and_then(|v| v["value"].as_str())
        .unwrap_or_else(|| panic!("no variable {name} in {vars:?}"))
        .to_string()
}

fn outputs(p: &Peer, category: &str) -> Vec<String> {
    p.seen
        .iter()
        .filter(|m| m["event"] == "output" && m["body"]["category"] == category)
        .filter_map(|m| m["body"]["output"].as_str().map(str::to_string))
        .collect()
}

fn start(name: &str) -> (Peer, String, Value) {
    let dir = scratch(name);
    let main = dir.join("main.ko");
    std::fs::write(&main, PROGRAM).expect("write program");
    let mut p = Peer::spawn("dap");
    let caps = ok(&mut p, "initialize", json!({"adapterID": "kora"}));
    event(&mut p, "initialized");
    let path = main.to_str().expect("utf-8 path").to_string();
    ok(&mut p, "launch", json!({"program": path}));
    (p, path, caps)
}

fn set(p: &mut Peer, path: &str, bps: Value) -> Vec<Value> {
    ok(
        p,
        "setBreakpoints",
        json!({"source": {"path": path}, "breakpoints": bps}),
    )["breakpoints"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn a_condition_is_judged_in_the_stopped_frame_and_variables_can_be_changed() {
    let (mut p, path, caps) = start("dap-cond");
    for c in [
        "supportsConditionalBreakpoints",
        "supportsHitConditionalBreakpoints",
        "supportsLogPoints",
        "supportsSetVariable",
    ] {
        assert_eq!(caps[c], true, "{c} not advertised: {caps}");
    }
    let bps = set(
        &mut p,
        &path,
        json!([
            {"line": 14, "condition": "i == 3"},
            {"line": 2, "condition": "n > 3 and total == 112"},
            {"line": 15, "condition": "save(total)"},
        ]),
    );
    assert_eq!(bps[0]["verified"], true, "{bps:?}");
    assert_eq!(bps[1]["verified"], true, "{bps:?}");
    // A condition that could act on the world is refused when set, with the reason.
    assert_eq!(bps[2]["verified"], false);
    assert!(bps[2]["message"]
        .as_str()
        .unwrap_or("")
        .contains("cannot be used here"));
    ok(&mut p, "configurationDone", json!({}));

    // Not at i == 0: the first stop is the iteration the condition names.
    assert_eq!(event(&mut p, "stopped")["reason"], "breakpoint");
    assert_eq!(top_line(&mut p), 14);
    let (globals, vars) = scope(&mut p, "Globals");
    assert_eq!(value_of(&vars, "i"), "3");
    assert_eq!(value_of(&vars, "total"), "3");

    // A global changed while stopped: 100 + 3 + 4 + 5 is what the program prints.
    let changed = ok(
        &mut p,
        "setVariable",
        json!({"variablesReference": globals, "name": "total", "value": "total + 97"}),
    );
    assert_eq!(changed["value"], "100");
    let (_, vars) = scope(&mut p, "Globals");
    assert_eq!(value_of(&vars, "total"), "100");
    // A value of another type, or one only a call could make, is refused with the reason.
    let wrong = request(
        &mut p,
        "setVariable",
        json!({"variablesReference": globals, "name": "total", "value": "\"many\""}),
    );
    assert_eq!(wrong["success"], false);
    assert!(wrong["message"]
        .as_str()
        .unwrap_or("")
        .contains("of type int"));
    let call = request(
        &mut p,
        "setVariable",
        json!({"variablesReference": globals, "name": "total", "value": "len(ys)"}),
    );
    assert_eq!(call["success"], false);

    // The function breakpoint's condition reads a local and a global of its own frame.
    ok(&mut p, "continue", json!({"threadId": 1}));
    assert_eq!(event(&mut p, "stopped")["reason"], "breakpoint");
    assert_eq!(top_line(&mut p), 2);
    let (locals, vars) = scope(&mut p, "Locals");
    assert_eq!(value_of(&vars, "n"), "4");
    ok(
        &mut p,
        "setVariable",
        json!({"variablesReference": locals, "name": "n", "value": "10"}),
    );
    ok(&mut p, "continue", json!({"threadId": 1}));
    assert_eq!(event(&mut p, "exited")["exitCode"], 0);
    let out = outputs(&p, "stdout").concat();
    assert!(out.contains("total 112\n"), "{out}");
    assert!(out.contains("work 20\n"), "{out}");
    // The loop breakpoint stopped once: no other iteration's stop was passed over on the way.
    assert!(!p.seen.iter().any(|m| m["event"] == "stopped"));
    ok(&mut p, "disconnect", json!({}));
}

#[test]
fn hit_counts_logpoints_and_unreadable_conditions() {
    let (mut p, path, _) = start("dap-hits");
    let bps = set(
        &mut p,
        &path,
        json!([
            {"line": 14, "hitCondition": "% 2", "logMessage": "i={i} total={total} {{braces}}"},
            {"line": 15, "hitCondition": "often"},
            {"line": 17, "condition": "missing == 1"},
        ]),
    );
    assert_eq!(bps[0]["verified"], true);
    assert_eq!(bps[1]["verified"], false);
    assert!(bps[1]["message"]
        .as_str()
        .unwrap_or("")
        .contains("hit count"));
    assert_eq!(bps[2]["verified"], true);
    ok(&mut p, "configurationDone", json!({}));

    // A condition naming nothing stops and says why, rather than being skipped silently.
    let stop = event(&mut p, "stopped");
    assert_eq!(stop["reason"], "breakpoint");
    assert!(
        stop["text"].as_str().unwrap_or("").contains("`missing`"),
        "{stop}"
    );
    assert_eq!(top_line(&mut p), 17);
    // The logpoint never stopped; it logged every second arrival, fields read in the frame.
    let logs = outputs(&p, "console");
    let logged: Vec<&String> = logs.iter().filter(|l| l.starts_with("i=")).collect();
    assert_eq!(
        logged,
        vec![
            "i=1 total=0 {braces}\n",
            "i=3 total=3 {braces}\n",
            "i=5 total=10 {braces}\n"
        ]
    );
    ok(&mut p, "continue", json!({"threadId": 1}));
    assert_eq!(event(&mut p, "exited")["exitCode"], 0);
    ok(&mut p, "disconnect", json!({}));
}

#[test]
fn breakpoints_in_functions_parallel_branches_run_are_refused_or_qualified() {
    let (mut p, path, _) = start("dap-branches");
    let bps = set(
        &mut p,
        &path,
        json!([{"line": 6}, {"line": 10}, {"line": 19}]),
    );
    // Only branches run `branch_only`: refused, naming the function and the reason.
    assert_eq!(bps[0]["verified"], false, "{bps:?}");
    let why = bps[0]["message"].as_str().unwrap_or("");
    assert!(
        why.contains("branch_only") && why.contains("parallel for"),
        "{why}"
    );
    // `both` also runs outside the loop: verified, and the caveat is said.
    assert_eq!(bps[1]["verified"], true, "{bps:?}");
    assert!(bps[1]["message"]
        .as_str()
        .unwrap_or("")
        .contains("outside a `parallel for`"));
    // The loop's own body, as before.
    assert_eq!(bps[2]["verified"], false);
    ok(&mut p, "configurationDone", json!({}));
    // `both(5)` on the last line is the one call that stops.
    assert_eq!(event(&mut p, "stopped")["reason"], "breakpoint");
    assert_eq!(top_line(&mut p), 10);
    let (_, vars) = scope(&mut p, "Locals");
    assert_eq!(value_of(&vars, "x"), "5");
    ok(&mut p, "continue", json!({"threadId": 1}));
    assert_eq!(event(&mut p, "exited")["exitCode"], 0);
    let out = outputs(&p, "stdout").concat();
    assert!(out.contains("ys [2, 4] 4\n"), "{out}");
    ok(&mut p, "disconnect", json!({}));
}

/// A program using a package is debugged as `kora run` runs it: the package resolves, a
/// breakpoint in its `lib.ko` is verified and hit with the package's file on the stack, and its
/// grants still hold (an `fs` read it was not granted is refused, naming the package).
#[test]
fn a_breakpoint_inside_a_package_is_hit_and_its_grants_hold() {
    let root = scratch("dap-package");
    let lib = "use fs\n\n\ndef hello(name: str) -> str:\n    greeting = \"hello\"\n    return f\"{greeting}, {name}\"\n\n\ndef peek(p: str) -> str:\n    text: str = fs.read(p) else (why, kind):\n        return why\n    return text\n";
    std::fs::create_dir_all(root.join("greet")).expect("mkdir greet");
    std::fs::create_dir_all(root.join("app")).expect("mkdir app");
    std::fs::write(
        root.join("greet/kora.toml"),
        "[package]\nname = \"greet\"\nversion = \"0.1.0\"\n",
    )
    .expect("write manifest");
    std::fs::write(root.join("greet/lib.ko"), lib).expect("write lib");
    std::fs::write(
        root.join("app/kora.toml"),
        "[dependencies]\ngreet = { path = \"../greet\" }\n",
    )
    .expect("write app manifest");
    std::fs::write(root.join("app/secret.txt"), "password").expect("write secret");
    let main = root.join("app/main.ko");
    std::fs::write(
        &main,
        "use greet\n\nprint(greet.hello(\"ana\"))\nprint(greet.peek(\"secret.txt\"))\n",
    )
    .expect("write main");
    let lib_path = std::fs::canonicalize(root.join("greet/lib.ko")).expect("canonical lib");
    let lib_path = lib_path.to_str().expect("utf-8 path").to_string();

    let mut p = Peer::spawn("dap");
    ok(&mut p, "initialize", json!({"adapterID": "kora"}));
    event(&mut p, "initialized");
    let path = main.to_str().expect("utf-8 path").to_string();
    ok(&mut p, "launch", json!({"program": path}));
    let bps = set(&mut p, &lib_path, json!([{"line": 6}]));
    assert_eq!(bps[0]["verified"], true, "{bps:?}");
    ok(&mut p, "configurationDone", json!({}));

    assert_eq!(event(&mut p, "stopped")["reason"], "breakpoint");
    let frames = ok(&mut p, "stackTrace", json!({"threadId": 1}))["stackFrames"].clone();
    assert_eq!(frames[0]["line"], 6, "{frames}");
    assert!(
        frames[0]["source"]["path"]
            .as_str()
            .is_some_and(|s| s.ends_with("greet/lib.ko")),
        "{frames}"
    );
    let (_, vars) = scope(&mut p, "Locals");
    assert_eq!(value_of(&vars, "greeting"), "'hello'");
    ok(&mut p, "continue", json!({"threadId": 1}));
    event(&mut p, "terminated");
    let out = outputs(&p, "stdout").concat();
    assert!(out.contains("hello, ana"), "{out}");
    assert!(!out.contains("password"), "{out}");
    let err = outputs(&p, "stderr").concat();
    assert!(err.contains("package `greet`"), "{err}");
}
