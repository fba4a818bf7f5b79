//! End to end: which `[models]` entry a call uses — call site > block > agent > `kora run --model` > `kora.toml`.
//!
//! Every entry points at the same loopback fake under a different model name,
//! so the `model` field of each request the fake received says which level won.

mod support;

use std::path::PathBuf;

use support::{kora_main as kora, temp_dir};

use kora_testkit::FakeProvider;

fn setup(name: &str, fake: &FakeProvider, program: &str) -> PathBuf {
    let d = temp_dir("kora-choice", name);
    let ep = fake.openai_endpoint();
    let mut toml = String::from("[models]\n");
    for key in ["default", "main", "agent", "block", "site"] {
        toml.push_str(&format!(
            "{key} = {{ name = \"{key}-model\", endpoint = \"{ep}\" }}\n"
        ));
    }
    std::fs::write(d.join("kora.toml"), toml).expect("kora.toml");
    std::fs::write(d.join("main.ko"), program).expect("program");
    d
}

fn models_asked(fake: &FakeProvider) -> Vec<String> {
    fake.requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap_or("?").to_string())
        .collect()
}

/// One call per level, each nested inside the ones below it, plus the call site on top.
const LEVELS: &str = r#"def ask(tag: str) -> None:
    a: Result[str] = analyze(tag, "Say ok.")
    match a:
        case Ok(text):
            print(tag, text)
        case Uncertain(why) | Failed(why) | Exhausted(why):
            print(tag, "failed:", why)

agent helper() -> None: model("agent")
    ask("agent")
    with model("block"):
        ask("block inside agent")
        r: Result[str] = analyze("site", "Say ok.", model="site")
        print("site", r)

def outer_block() -> None:
    with model("block"):
        ask("block")
        helper()
        ask("block again")

ask("top")
outer_block()
"#;

#[test]
fn each_level_wins_over_the_next() {
    let fake = FakeProvider::start();
    let d = setup("levels", &fake, LEVELS);
    let r = kora(&d, &["run", "--model", "main"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("top ok\n"), "{}", r.stdout);
    assert_eq!(
        models_asked(&fake),
        [
            "main-model",  // `--model` over kora.toml's default
            "block-model", // a block over `--model`
            "agent-model", // an agent called inside a block: its own choice holds for its calls
            "block-model", // a block inside the agent over the agent
            "site-model",  // `model=` at the call over everything
            "block-model", // leaving the agent restores the block around it
        ]
    );

    // Without `--model`, kora.toml's default answers the calls nothing else chose.
    fake.reset();
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(models_asked(&fake)[0], "default-model");
}

#[test]
fn a_parallel_branch_keeps_the_block_around_it() {
    let fake = FakeProvider::start();
    let program = "with model(\"block\"):\n    rs = parallel for t in [\"a\", \"b\"]:\n        r: Result[str] = analyze(t, \"Say ok.\")\n        return r\n    print(len(rs))\n";
    let d = setup("parallel", &fake, program);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(models_asked(&fake), ["block-model", "block-model"]);
}

#[test]
fn unknown_names_and_misplaced_choices_are_reported() {
    let fake = FakeProvider::start();
    let d = setup("unknown", &fake, "print(1)\n");
    let r = kora(&d, &["run", "--model", "vison"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--model vison"), "{}", r.stderr);
    assert!(r.stderr.contains("no model entry `vison`"), "{}", r.stderr);

    let program =
        "def f() -> None: model(\"block\")\n    pass\n\nagent g() -> None: model(1)\n    pass\n";
    std::fs::write(d.join("main.ko"), program).expect("program");
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("E0840"), "{}", r.stderr);
    assert!(
        r.stderr.contains("only an `agent` chooses its model"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("string literal"), "{}", r.stderr);

    let program = "with model(\"nope\"):\n    a: Result[str] = analyze(\"x\", \"p\")\n";
    std::fs::write(d.join("main.ko"), program).expect("program");
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stderr.contains("no model entry `nope`"), "{}", r.stderr);
    assert_eq!(fake.count(), 0);
}

#[test]
fn kora_test_model_records_and_replays_that_models_answers() {
    let fake = FakeProvider::with_default(kora_testkit::Behaviour::Answer("fine".into()));
    let program = "def ask() -> str:\n    r: Result[str] = analyze(\"x\", \"Say fine.\")\n    match r:\n        case Ok(t):\n            return t\n        case _:\n            return \"no\"\n\ntest \"answers\":\n    assert ask() == \"fine\"\n";
    let d = setup("kora_test", &fake, program);
    let run = |args: &[&str]| support::kora(&d, args, None);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let live = run(&["test", "--live", "--model", "block", "main.ko"]);
    assert_eq!(live.status.code(), Some(0), "{}", text(&live.stdout));
    assert_eq!(models_asked(&fake), ["block-model"]);
    fake.reset();
    // Replays answer for the model they were recorded with, and only for it.
    let again = run(&["test", "--model", "block", "main.ko"]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stdout));
    assert_eq!(fake.count(), 0, "replayed from the cassette");
    let other = run(&["test", "main.ko"]);
    assert_eq!(other.status.code(), Some(1), "{}", text(&other.stdout));
    assert!(
        text(&other.stdout).contains("0 passed, 1 failed"),
        "{}",
        text(&other.stdout)
    );
    let unknown = run(&["test", "--model", "nope", "main.ko"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        text(&unknown.stderr).contains("--model nope"),
        "{}",
        text(&unknown.stderr)
    );
}
