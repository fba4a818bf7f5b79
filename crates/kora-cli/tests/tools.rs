//! End to end: tool loops (`analyze(..., tools=[...])`), their handlers and the context fence,
//! through the `kora` binary against the loopback fake provider.

mod support;

use std::path::{Path, PathBuf};

use support::Run;

use kora_testkit::{Behaviour, FakeProvider};
use serde_json::{json, Value};

fn setup(name: &str, fake: &FakeProvider, api: &str, extra: &str, program: &str) -> PathBuf {
    let d = support::temp_dir("kora-tools", name);
    let endpoint = if api == "ollama" {
        fake.url()
    } else {
        fake.openai_endpoint()
    };
    support::write_config(
        &d,
        &endpoint,
        Some(api),
        &format!("timeout_secs = 2\nmax_retries = 0\n{extra}"),
    );
    std::fs::write(d.join("main.ko"), program).expect("program");
    d
}

fn kora(d: &Path, args: &[&str]) -> Run {
    support::collect(support::kora_cmd().args(args).arg(d.join("main.ko")), None)
}

const HEAD: &str = r#"type Weather:
    city: str
    celsius: int

tool temperature(city: str) -> int:
    "The current temperature in a city, in degrees Celsius."
    print("tool ran for", city)
    return 21

"#;

const SHOW: &str = r#"
match w:
    case Ok(x):
        print(x.city, x.celsius)
    case Failed(why):
        print("failed:", why)
    case other:
        print("other:", other)
"#;

fn program(call: &str) -> String {
    format!("{HEAD}{call}\n{SHOW}")
}

const FINAL: &str = r#"{"ok": {"city": "Paris", "celsius": 21}, "uncertain": null}"#;

fn tool_call(name: &str, args: Value) -> Behaviour {
    Behaviour::ToolCalls(vec![(name.to_string(), args)])
}

/// The arguments of the tool calls in the assistant turns a request carried back.
fn sent_arguments(req: &kora_testkit::Recorded) -> Vec<Value> {
    req.messages()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| match &c["function"]["arguments"] {
            Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Null),
            other => other.clone(),
        })
        .collect()
}

#[test]
fn a_tool_loop_in_both_wire_formats() {
    for api in ["openai", "ollama"] {
        let fake = FakeProvider::start();
        fake.push(tool_call("temperature", json!({"city": "Paris"})));
        fake.push(Behaviour::Answer(FINAL.into()));
        let d = setup(
            &format!("loop-{api}"),
            &fake,
            api,
            "",
            &program(
                r#"w: Result[Weather] = analyze("Paris", "What is the weather?", tools=[temperature])"#,
            ),
        );
        let r = kora(&d, &["run"]);
        assert_eq!(r.code, 0, "{api}: {}", r.stderr);
        assert_eq!(r.stdout, "tool ran for Paris\nParis 21\n", "{api}");
        let reqs = fake.requests();
        assert_eq!(reqs.len(), 2, "{api}");
        assert_eq!(reqs[0].tool_names(), vec!["temperature"]);
        let f = &reqs[0].body["tools"][0]["function"];
        assert_eq!(
            f["description"],
            "The current temperature in a city, in degrees Celsius."
        );
        assert_eq!(f["parameters"]["required"], json!(["city"]));
        assert_eq!(f["parameters"]["properties"]["city"]["type"], "string");
        assert!(reqs[0].tool_results().is_empty());
        assert_eq!(
            reqs[1].tool_results(),
            vec![json!({"tool": "temperature", "untrusted_result": 21})],
            "{api}"
        );
    }
}

#[test]
fn on_tool_call_rewrites_the_arguments_and_the_history_says_so() {
    let fake = FakeProvider::start();
    fake.push(tool_call("temperature", json!({"city": "Paris"})));
    fake.push(Behaviour::Answer(FINAL.into()));
    let call = r#"w: Result[Weather] = analyze("Paris", "What is the weather?", tools=[temperature])
    on tool_call(name, args):
        print("calling", name, args)
        args["city"] = "Lyon""#;
    let d = setup("rewrite", &fake, "openai", "", &program(call));
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "calling temperature {'city': 'Paris'}\ntool ran for Lyon\nParis 21\n"
    );
    let reqs = fake.requests();
    assert_eq!(sent_arguments(&reqs[1]), vec![json!({"city": "Lyon"})]);
}

#[test]
fn return_text_in_on_tool_call_skips_the_tool() {
    let fake = FakeProvider::start();
    fake.push(tool_call("temperature", json!({"city": "Paris"})));
    fake.push(Behaviour::Answer(FINAL.into()));
    let call = r#"w: Result[Weather] = analyze("Paris", "What is the weather?", tools=[temperature])
    on tool_call(name, args):
        if name == "temperature":
            return "the sensor is offline""#;
    let d = setup("skip", &fake, "ollama", "", &program(call));
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "Paris 21\n", "the tool must not run");
    assert_eq!(
        fake.requests()[1].tool_results(),
        vec![json!({"tool": "temperature", "untrusted_result": "the sensor is offline"})]
    );
}

#[test]
fn on_tool_result_replaces_the_result() {
    let fake = FakeProvider::start();
    fake.push(tool_call("temperature", json!({"city": "Paris"})));
    fake.push(Behaviour::Answer(FINAL.into()));
    let call = r#"w: Result[Weather] = analyze("Paris", "What is the weather?", tools=[temperature])
    on tool_call(name, args):
        print("before", name)
    on tool_result(name, args, result):
        print("after", name, args["city"], result)
        return result + 100"#;
    let d = setup("replace", &fake, "openai", "", &program(call));
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "before temperature\ntool ran for Paris\nafter temperature Paris 21\nParis 21\n"
    );
    assert_eq!(
        fake.requests()[1].tool_results(),
        vec![json!({"tool": "temperature", "untrusted_result": 121})]
    );
}

#[test]
fn a_replacement_of_the_wrong_type_is_a_runtime_error() {
    let fake = FakeProvider::start();
    fake.push(tool_call("temperature", json!({"city": "Paris"})));
    let call = r#"w: Result[Weather] = analyze("Paris", "What is the weather?", tools=[temperature])
    on tool_result(name, args, result):
        return "warm""#;
    let d = setup("badreplace", &fake, "openai", "", &program(call));
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(
        r.stderr.contains("`on tool_result` gave `temperature`"),
        "{}",
        r.stderr
    );
}

#[test]
fn bad_arguments_from_the_model_go_back_as_a_tool_error() {
    for args in [
        json!({"city": 5}),
        json!({}),
        json!({"city": "Paris", "units": "F"}),
    ] {
        let fake = FakeProvider::start();
        fake.push(tool_call("temperature", args.clone()));
        fake.push(tool_call("thermometer", json!({"city": "Paris"})));
        fake.push(Behaviour::Answer(FINAL.into()));
        let d = setup(
            "badargs",
            &fake,
            "openai",
            "",
            &program(
                r#"w: Result[Weather] = analyze("Paris", "What is the weather?", tools=[temperature])"#,
            ),
        );
        let r = kora(&d, &["run"]);
        assert_eq!(r.code, 0, "{args}: {}", r.stderr);
        assert_eq!(r.stdout, "Paris 21\n", "{args}: the tool must not run");
        let reqs = fake.requests();
        let first = &reqs[1].tool_results()[0];
        assert_eq!(first["tool"], "temperature");
        let why = first["untrusted_result"]["error"].as_str().unwrap_or("");
        assert!(why.starts_with("bad arguments for `temperature`"), "{why}");
        // The model's own arguments are what it is shown, since nothing ran.
        assert_eq!(sent_arguments(&reqs[1]), vec![args.clone()]);
        let unknown = &reqs[2].tool_results()[1];
        assert!(
            unknown["untrusted_result"]["error"]
                .as_str()
                .unwrap_or("")
                .contains("there is no tool `thermometer`"),
            "{unknown}"
        );
    }
}

#[test]
fn the_turn_limit_ends_the_loop_failed() {
    let fake = FakeProvider::with_default(tool_call("temperature", json!({"city": "Paris"})));
    let d = setup(
        "limit",
        &fake,
        "openai",
        "max_tool_turns = 3\n",
        &program(
            r#"w: Result[Weather] = analyze("Paris", "What is the weather?", tools=[temperature])"#,
        ),
    );
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(fake.count(), 3);
    assert!(
        r.stdout
            .ends_with("failed: tools: the model still asked for tools after 3 turns, the limit (`[models] max_tool_turns`); make the task smaller or raise the limit\n"),
        "{}",
        r.stdout
    );
}

#[test]
fn an_agent_is_a_tool_and_runs_in_the_callers_heap() {
    let fake = FakeProvider::start();
    fake.push(tool_call("specialist", json!({"question": "why"})));
    fake.push(Behaviour::Answer(FINAL.into()));
    let prog = program(
        r#"asked: list[str] = []

agent specialist(question: str) -> str:
    "Answers one narrow question about the weather."
    asked.append(question)
    return "because of the " + question

w: Result[Weather] = analyze("Paris", "What is the weather?", tools=[temperature, specialist])
print("asked:", asked)"#,
    );
    let d = setup("agent", &fake, "openai", "", &prog);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "asked: ['why']\nParis 21\n");
    let reqs = fake.requests();
    assert_eq!(reqs[0].tool_names(), vec!["temperature", "specialist"]);
    assert_eq!(
        reqs[1].tool_results(),
        vec![json!({"tool": "specialist", "untrusted_result": "because of the why"})]
    );
}

const PAGES: &str = r#"type Summary:
    text: str

tool page(n: int) -> str:
    "Reads one page of the report."
    return f"page {n}: " + "x" * 2000

with context(max_input_tokens=1500, reserve_output_tokens=50):
    s: Result[Summary] = analyze("report", "Summarize the report.", tools=[page])
match s:
    case Ok(x):
        print("summary:", x.text)
    case other:
        print(other)
"#;

#[test]
fn the_context_fence_drops_the_oldest_exchange_first() {
    let fake = FakeProvider::start();
    for n in 1..=3 {
        fake.push(tool_call("page", json!({"n": n})));
    }
    fake.push(Behaviour::Answer(
        r#"{"ok": {"text": "done"}, "uncertain": null}"#.into(),
    ));
    let d = setup("fence", &fake, "openai", "", PAGES);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "summary: done\n");
    let pages = |req: &kora_testkit::Recorded| -> Vec<String> {
        req.tool_results()
            .iter()
            .map(|t| t["untrusted_result"].as_str().unwrap_or("")[..6].to_string())
            .collect()
    };
    let reqs = fake.requests();
    assert_eq!(reqs.len(), 4);
    assert_eq!(pages(&reqs[1]), vec!["page 1"]);
    assert_eq!(pages(&reqs[2]), vec!["page 1", "page 2"]);
    // Three exchanges do not fit: the oldest goes, whole; the prompt and data stay.
    assert_eq!(pages(&reqs[3]), vec!["page 2", "page 3"]);
    assert_eq!(
        sent_arguments(&reqs[3]),
        vec![json!({"n": 2}), json!({"n": 3})]
    );
    let user = &reqs[3].messages()[1];
    assert!(user["content"]
        .as_str()
        .unwrap_or("")
        .contains("Summarize the report."));
}

#[test]
fn a_newest_exchange_too_big_for_the_fence_is_exhausted_context() {
    let fake = FakeProvider::start();
    fake.push(tool_call("page", json!({"n": 1})));
    let prog = PAGES.replace("\"x\" * 2000", "\"x\" * 9000");
    let d = setup("newest", &fake, "openai", "", &prog);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "Exhausted('context')\n");
    assert_eq!(fake.count(), 1);
}

#[test]
fn a_base_too_big_for_the_fence_is_failed_and_sends_nothing() {
    let fake = FakeProvider::start();
    let prog = r#"with context(max_input_tokens=100, reserve_output_tokens=20):
    t = analyze("x" * 1000, "Summarize.")
match t:
    case Failed(why):
        print(why)
    case other:
        print("other:", other)
"#;
    let d = setup("base", &fake, "openai", "", prog);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .starts_with("context: the prompt, data and tool definitions need about "),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("leaves 80 for input"), "{}", r.stdout);
    assert_eq!(fake.count(), 0);
}

#[test]
fn a_tool_loop_records_and_replays_turn_by_turn() {
    let fake = FakeProvider::start();
    fake.push(tool_call("temperature", json!({"city": "Paris"})));
    fake.push(Behaviour::Answer(FINAL.into()));
    let call =
        r#"w: Result[Weather] = analyze("Paris", "What is the weather?", tools=[temperature])"#;
    let d = setup("cassette", &fake, "openai", "", &program(call));
    let r = kora(&d, &["run", "--record"]);
    assert_eq!(r.stdout, "tool ran for Paris\nParis 21\n", "{}", r.stderr);
    let cassette: Value = serde_json::from_str(
        &std::fs::read_to_string(d.join("main.cassette.json")).expect("cassette written"),
    )
    .expect("json");
    assert_eq!(cassette["entries"].as_array().map(Vec::len), Some(2));
    drop(fake);
    let r = kora(&d, &["run", "--replay"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "tool ran for Paris\nParis 21\n");
    // A tool that now answers differently makes the next turn miss, naming what differs.
    let changed = program(call).replace("return 21", "return 22");
    std::fs::write(d.join("main.ko"), changed).expect("program");
    let r = kora(&d, &["run", "--replay"]);
    assert_eq!(r.code, 1);
    assert!(r.stderr.contains("turn 2 of the tool loop"), "{}", r.stderr);
    assert!(
        r.stderr.contains("tool results so far differ"),
        "{}",
        r.stderr
    );
}

#[test]
fn the_checker_refuses_what_a_tool_loop_cannot_run() {
    let fake = FakeProvider::start();
    let cases = [
        (
            "def plain(x: int) -> int:\n    return x\n\nw: Result[Weather] = analyze(1, \"q\", tools=[plain])\n",
            "E0820",
        ),
        (
            "w = analyze(1, \"q\", tools=[temperature])\n",
            "E0821",
        ),
        (
            "w: Result[Weather] = analyze(1, \"q\", tools=[temperature])\n    on tool_call(name):\n        pass\n",
            "E0822",
        ),
        ("print(1)\n    on tool_call(name, args):\n        pass\n", "E0823"),
        (
            "with context(max_tokens=5):\n    pass\n",
            "E0824",
        ),
    ];
    for (src, code) in cases {
        let d = setup("check", &fake, "openai", "", &format!("{HEAD}{src}"));
        let r = kora(&d, &["check"]);
        assert_eq!(r.code, 2, "{src}");
        assert!(r.stderr.contains(code), "{code}: {}", r.stderr);
    }
}

/// Re-records `examples/10_tools.cassette.json` against the fake provider, scripted turn by
/// turn. Run by hand after changing the example: `cargo test -p kora-cli --test tools -- --ignored`.
#[test]
#[ignore]
fn record_example_10_cassette() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let fake = FakeProvider::start();
    let answer = |v: Value| {
        Behaviour::AnswerWithUsage(json!({"ok": v, "uncertain": null}).to_string(), 420, 60)
    };
    fake.push(tool_call("lookup_order", json!({"order_id": "a-100 "})));
    fake.push(tool_call(
        "refund_policy",
        json!({"days_since_delivery": 12}),
    ));
    fake.push(answer(
        json!({"order_id": "A-100", "amount": 39.5, "approve": true,
        "reason": "delivered 12 days ago, within the 30-day full refund window"}),
    ));
    fake.push(tool_call("lookup_order", json!({"order_id": "A-200"})));
    fake.push(tool_call(
        "refund_policy",
        json!({"days_since_delivery": 45}),
    ));
    fake.push(answer(
        json!({"order_id": "A-200", "amount": 0.0, "approve": false,
        "reason": "delivered 45 days ago: store credit only, with a 10% voucher"}),
    ));
    let src = std::fs::read_to_string(root.join("10_tools.ko")).expect("example");
    let d = support::temp_dir("kora-tools", "record10");
    // The cassette's key names the model, so this one is `gpt-4o-mini`, not the usual fake name.
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[models]\ndefault = {{ name = \"gpt-4o-mini\", endpoint = \"{}\" }}\n",
            fake.openai_endpoint()
        ),
    )
    .expect("kora.toml");
    std::fs::write(d.join("10_tools.ko"), src).expect("program");
    let out = support::collect(
        support::kora_cmd()
            .args(["run", "--record"])
            .arg(d.join("10_tools.ko")),
        None,
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    std::fs::copy(
        d.join("10_tools.cassette.json"),
        root.join("10_tools.cassette.json"),
    )
    .expect("cassette copied");
}

#[test]
fn the_trace_has_a_span_per_tool_call_saying_what_ran() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::ToolCalls(vec![
        ("temperature".into(), json!({"city": "Paris"})),
        ("temperature".into(), json!({"city": "Oslo"})),
        ("temperature".into(), json!({"city": 3})),
    ]));
    fake.push(Behaviour::Answer(FINAL.into()));
    let call = r#"w: Result[Weather] = analyze("Paris", "What is the weather?", tools=[temperature])
    on tool_call(name, args):
        if args["city"] == "Oslo":
            return "no sensor there"
        args["city"] = "Lyon""#;
    let d = setup("trace", &fake, "openai", "", &program(call));
    let out = support::run_in(&d, &["run", "main.ko"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let dir = d.join(".kora/traces");
    let file = std::fs::read_dir(&dir)
        .expect("traces written")
        .filter_map(Result::ok)
        .next()
        .expect("one trace")
        .path();
    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string(file).expect("trace")).expect("json");
    let mut tools = Vec::new();
    for rs in trace["resourceSpans"].as_array().into_iter().flatten() {
        for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
            for s in ss["spans"].as_array().into_iter().flatten() {
                if s["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("execute_tool"))
                {
                    let attrs: Vec<String> = s["attributes"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|a| format!("{}={}", a["key"].as_str().unwrap_or(""), a["value"]))
                        .collect();
                    tools.push(attrs.join(" "));
                }
            }
        }
    }
    assert_eq!(tools.len(), 3, "{tools:?}");
    assert!(
        tools[0].contains("kora.tool.outcome={\"stringValue\":\"ran\"}"),
        "{}",
        tools[0]
    );
    assert!(
        tools[0].contains("kora.tool.args_rewritten"),
        "{}",
        tools[0]
    );
    assert!(tools[1].contains("\"skipped\""), "{}", tools[1]);
    assert!(tools[2].contains("\"bad_arguments\""), "{}", tools[2]);
}
