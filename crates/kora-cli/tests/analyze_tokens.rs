//! End to end: `on token(piece):` on a streamed `analyze`, through the `kora` binary against the loopback fake.
//!
//! The handler receives each piece instead of the screen; the call still ends
//! as one outcome; a stream that handed a piece to the handler is never retried.

mod support;

use std::path::PathBuf;

use support::{kora_main as kora, temp_dir};

use kora_testkit::{Behaviour, FakeProvider, StreamOpts};

fn setup(name: &str, fake: &FakeProvider, api: &str, program: &str) -> PathBuf {
    let d = temp_dir("kora-tokens", name);
    let endpoint = if api == "ollama" {
        fake.url()
    } else {
        fake.openai_endpoint()
    };
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[models]\ndefault = {{ name = \"fake-model\", endpoint = \"{endpoint}\", api = \"{api}\" }}\ntimeout_secs = 2\nmax_retries = 2\n"
        ),
    )
    .expect("kora.toml");
    std::fs::write(d.join("main.ko"), program).expect("program");
    d
}

const COLLECT: &str = r#"pieces: list[str] = []
answer: Result[str] = analyze("", "Say hello")
    on token(piece):
        pieces.append(piece.upper())
match answer:
    case Ok(text):
        print("text:", text)
    case Uncertain(why) | Failed(why) | Exhausted(why):
        print("no answer:", why)
print(pieces)
"#;

#[test]
fn the_handler_gets_each_piece_instead_of_the_screen_in_both_formats() {
    for api in ["openai", "ollama"] {
        let fake = FakeProvider::start();
        fake.push(Behaviour::Stream(
            vec!["Hel".into(), "lo ".into(), "there".into()],
            StreamOpts {
                keep_alives: true,
                role_delta: true,
                usage: Some((3, 4)),
                ..StreamOpts::default()
            },
        ));
        let d = setup(&format!("collect-{api}"), &fake, api, COLLECT);
        let r = kora(&d, &["run"]);
        assert_eq!(r.code, 0, "{api}: {}", r.stderr);
        assert_eq!(
            r.stdout, "text: Hello there\n['HEL', 'LO ', 'THERE']\n",
            "{api}"
        );
        let reqs = fake.requests();
        assert_eq!(reqs.len(), 1, "{api}");
        assert_eq!(reqs[0].body["stream"], true, "{api}: the call streams");
    }
}

#[test]
fn a_stream_that_handed_over_a_piece_is_not_retried() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::StreamThenDrop(vec!["partial ".into()]));
    fake.push(Behaviour::Answer("never sent".into()));
    let d = setup("shown", &fake, "openai", COLLECT);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("was not retried"),
        "the failure says why: {}",
        r.stdout
    );
    assert!(r.stdout.ends_with("['PARTIAL ']\n"), "{}", r.stdout);
    assert_eq!(
        fake.count(),
        1,
        "no second request after a piece was handed over"
    );
}

#[test]
fn a_stream_that_showed_nothing_is_retried() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::StreamThenDrop(Vec::new()));
    fake.push(Behaviour::Stream(
        vec!["second ".into(), "try".into()],
        StreamOpts::default(),
    ));
    let d = setup("unshown", &fake, "openai", COLLECT);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "text: second try\n['SECOND ', 'TRY']\n");
    assert_eq!(fake.count(), 2);
}

#[test]
fn a_replayed_call_hands_its_text_over_once() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Stream(
        vec!["a".into(), "b".into()],
        StreamOpts::default(),
    ));
    let d = setup("replay", &fake, "openai", COLLECT);
    let r = kora(&d, &["run", "--record"]);
    assert_eq!(r.stdout, "text: ab\n['A', 'B']\n", "{}", r.stderr);
    drop(fake);
    let r = kora(&d, &["run", "--replay"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "text: ab\n['AB']\n");
}

#[test]
fn a_raising_handler_stops_the_run() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Stream(
        vec!["ok".into(), "boom".into()],
        StreamOpts::default(),
    ));
    let program = "answer: Result[str] = analyze(\"\", \"Say it\")\n    on token(piece):\n        print(\"piece\", piece)\n        assert piece != \"boom\", \"the model said boom\"\nprint(\"not reached\")\n";
    let d = setup("raise", &fake, "openai", program);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert_eq!(r.stdout, "piece ok\npiece boom\n");
    assert!(r.stderr.contains("the model said boom"), "{}", r.stderr);
}

#[test]
fn the_checker_refuses_return_and_tools_in_a_token_handler() {
    let fake = FakeProvider::start();
    let program = "def f() -> str:\n    a: Result[str] = analyze(\"\", \"p\")\n        on token(piece):\n            return piece\n    return \"x\"\n";
    let d = setup("return", &fake, "openai", program);
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("E0822"), "{}", r.stderr);
    assert!(
        r.stderr.contains("`return` inside `on token`"),
        "{}",
        r.stderr
    );

    let program = "type T:\n    x: int\n\ntool t() -> int:\n    \"\"\"A tool.\"\"\"\n    return 1\n\nr: Result[T] = analyze(\"\", \"p\", tools=[t])\n    on token(piece):\n        print(piece)\n";
    std::fs::write(d.join("main.ko"), program).expect("program");
    let r = kora(&d, &["run"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("E0821"), "{}", r.stderr);
    assert_eq!(fake.count(), 0);
}
