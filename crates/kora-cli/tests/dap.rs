//! `kora dap` end to end over stdio: launch, breakpoints (one moved off a blank line, one refused in a
//! `parallel for`), stops, the stack, scopes and variables, stepping, watches, output and the end.

mod protocol;

use protocol::{scratch, Peer};
use serde_json::{json, Value};

const PROGRAM: &str = r#"type Order:
    total: int
    tags: list[str]

def price(o: Order) -> int:
    base = o.total * 2

    return base + 1

def outer(n: int) -> int:
    r = price(Order(n, ["x"]))
    return r

print("start")
limit = 10
result = outer(limit)
print(f"result {result}")
"#;

struct Session {
    peer: Peer,
}

impl Session {
    fn request(&mut self, command: &str, arguments: Value) -> Value {
        let seq = self.peer.next_seq();
        self.peer.write(&json!({
            "seq": seq, "type": "request", "command": command, "arguments": arguments
        }));
        self.peer.wait(&format!("the {command} response"), |m| {
            m["type"] == "response" && m["request_seq"] == seq
        })
    }

    fn ok(&mut self, command: &str, arguments: Value) -> Value {
        let r = self.request(command, arguments);
        assert_eq!(r["success"], true, "{command} failed: {r}");
        r["body"].clone()
    }

    fn event(&mut self, name: &str) -> Value {
        self.peer.wait(&format!("a {name} event"), |m| {
            m["type"] == "event" && m["event"] == name
        })["body"]
            .clone()
    }

    /// (frame name, line) innermost first.
    fn stack(&mut self) -> Vec<(String, i64)> {
        let body = self.ok("stackTrace", json!({"threadId": 1}));
        body["stackFrames"]
            .as_array()
            .expect("frames")
            .iter()
            .map(|f| {
                (
                    f["name"].as_str().unwrap_or("").to_string(),
                    f["line"].as_i64().unwrap_or(0),
                )
            })
            .collect()
    }

    fn variables(&mut self, reference: &Value) -> Vec<Value> {
        let body = self.ok("variables", json!({"variablesReference": reference}));
        body["variables"].as_array().cloned().unwrap_or_default()
    }

    fn scope(&mut self, frame: i64, name: &str) -> Vec<Value> {
        let body = self.ok("scopes", json!({"frameId": frame}));
        let scope = body["scopes"]
            .as_array()
            .and_then(|s| s.iter().find(|s| s["name"] == name).cloned())
            .unwrap_or_else(|| panic!("no {name} scope in {body}"));
        self.variables(&scope["variablesReference"])
    }

    fn step(&mut self, how: &str) -> Value {
        self.ok(how, json!({"threadId": 1}));
        self.event("stopped")
    }
}

fn named<'a>(vars: &'a [Value], name: &str) -> &'a Value {
    vars.iter()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no variable {name} in {vars:?}"))
}

#[test]
fn a_debug_session_from_launch_to_exit() {
    let dir = scratch("dap");
    let main = dir.join("main.ko");
    std::fs::write(&main, PROGRAM).expect("write program");
    let par = dir.join("par.ko");
    std::fs::write(
        &par,
        "xs = [1, 2]\nparallel for x in xs:\n    y = x * 2\nprint(xs)\n",
    )
    .expect("write parallel program");
    let mut s = Session {
        peer: Peer::spawn("dap"),
    };

    let caps = s.ok(
        "initialize",
        json!({"adapterID": "kora", "linesStartAt1": true}),
    );
    assert_eq!(caps["supportsConfigurationDoneRequest"], true);
    s.event("initialized");
    s.ok("launch", json!({"program": main.to_str()}));

    // Line 7 is blank inside `price`: the breakpoint moves to line 8 and says so.
    let bps = s.ok(
        "setBreakpoints",
        json!({"source": {"path": main.to_str()}, "breakpoints": [{"line": 7}, {"line": 15}]}),
    );
    let bps = bps["breakpoints"].as_array().expect("breakpoints").clone();
    assert_eq!(bps[0]["verified"], true);
    assert_eq!(bps[0]["line"], 8);
    assert!(bps[0]["message"].as_str().unwrap_or("").contains("moved"));
    assert_eq!(bps[1]["line"], 15);

    // A `parallel for` body is refused with the reason, not silently accepted.
    let refused = s.ok(
        "setBreakpoints",
        json!({"source": {"path": par.to_str()}, "breakpoints": [{"line": 3}]}),
    );
    assert_eq!(refused["breakpoints"][0]["verified"], false);
    assert!(refused["breakpoints"][0]["message"]
        .as_str()
        .unwrap_or("")
        .contains("parallel for"));

    s.ok("configurationDone", json!({}));
    let stop = s.event("stopped");
    assert_eq!(stop["reason"], "breakpoint");
    // Output printed before the stop arrived first, as an output event.
    assert!(s
        .peer
        .seen
        .iter()
        .any(|m| m["event"] == "output" && m["body"]["output"] == "start\n"));
    let threads = s.ok("threads", json!({}));
    assert_eq!(threads["threads"][0]["id"], 1);
    assert_eq!(s.stack(), vec![("<module main.ko>".to_string(), 15)]);
    let globals = s.scope(0, "Globals");
    assert_eq!(named(&globals, "limit")["value"], "None");

    // Step over line 15, then into `outer`, then into `price`.
    s.step("next");
    assert_eq!(s.stack()[0].1, 16);
    assert_eq!(named(&s.scope(0, "Globals"), "limit")["value"], "10");
    s.step("stepIn");
    assert_eq!(s.stack()[0], ("outer".to_string(), 11));
    s.step("stepIn");
    let stack = s.stack();
    assert_eq!(stack[0], ("price".to_string(), 6));
    assert_eq!(stack.len(), 3);

    // Continue to the moved breakpoint, inside `price`.
    s.ok("continue", json!({"threadId": 1}));
    assert_eq!(s.event("stopped")["reason"], "breakpoint");
    assert_eq!(s.stack()[0], ("price".to_string(), 8));
    let locals = s.scope(0, "Locals");
    assert_eq!(named(&locals, "base")["value"], "20");
    let order = named(&locals, "o").clone();
    assert_eq!(order["type"], "Order");
    let fields = s.variables(&order["variablesReference"]);
    assert_eq!(named(&fields, "total")["value"], "10");
    let tags = s.variables(&named(&fields, "tags")["variablesReference"]);
    assert_eq!(tags[0]["name"], "[0]");
    assert_eq!(tags[0]["value"], "'x'");
    // The caller's frame still shows its names as they stood at the call.
    assert_eq!(named(&s.scope(1, "Locals"), "n")["value"], "10");

    // Watches are lookups: a field path is read, anything else is refused with the reason.
    let w = s.ok(
        "evaluate",
        json!({"expression": "o.total", "frameId": 0, "context": "watch"}),
    );
    assert_eq!(w["result"], "10");
    let refused = s.request(
        "evaluate",
        json!({"expression": "price(o)", "frameId": 0, "context": "watch"}),
    );
    assert_eq!(refused["success"], false);
    assert!(refused["message"]
        .as_str()
        .unwrap_or("")
        .contains("not a lookup"));

    // Out of `price` back into `outer`, then over the rest of `outer`.
    s.step("stepOut");
    assert_eq!(s.stack()[0], ("outer".to_string(), 12));
    assert_eq!(named(&s.scope(0, "Locals"), "r")["value"], "21");
    s.step("next");
    let stack = s.stack();
    assert_eq!(stack.len(), 1);
    assert_eq!(stack[0].1, 17);

    s.ok("continue", json!({"threadId": 1}));
    let exited = s.event("exited");
    assert_eq!(exited["exitCode"], 0);
    s.event("terminated");
    assert!(s
        .peer
        .seen
        .iter()
        .any(|m| m["event"] == "output" && m["body"]["output"] == "result 21\n"));
    s.ok("disconnect", json!({}));
    assert_eq!(s.peer.exit_code(), Some(0));
}

#[test]
fn terminate_holds_a_paused_program_and_ends_the_session() {
    let dir = scratch("dap-terminate");
    let main = dir.join("loop.ko");
    std::fs::write(&main, "n = 0\nwhile n < 3:\n    n += 1\nprint(\"never\")\n")
        .expect("write program");
    let mut s = Session {
        peer: Peer::spawn("dap"),
    };
    s.ok("initialize", json!({"adapterID": "kora"}));
    s.ok(
        "launch",
        json!({"program": main.to_str(), "stopOnEntry": true}),
    );
    s.ok("configurationDone", json!({}));
    assert_eq!(s.event("stopped")["reason"], "entry");
    assert_eq!(s.stack()[0].1, 1);
    s.step("next");
    s.step("next");
    assert_eq!(s.stack()[0].1, 3);
    s.ok("terminate", json!({}));
    s.event("terminated");
    // Held at its next statement: the rest of the program never ran.
    assert!(!s.peer.seen.iter().any(|m| m["event"] == "output"));
    s.ok("disconnect", json!({}));
    assert_eq!(s.peer.exit_code(), Some(0));
}
