//! E0830 through `kora check`: each direct flow of a classified value into `analyze` is refused, and its mirror inside `declassify NAME for SINK:` is not.
//!
//! The refusals' exact renderings are conformance goldens
//! (`tests/conformance/errors/classified_*.ko`); these pairs pin the rule's two sides.
//! A mirror may still meet other errors of a feature that is not finished (E0901), never E0830.

mod support;

use support::{kora, temp_dir, text};

/// Every `[E....]` code `kora check` reports for `src`.
fn codes(name: &str, src: &str) -> (Vec<String>, String) {
    let d = temp_dir("kora-label-flow", name);
    std::fs::write(d.join("main.ko"), src).expect("write");
    let out = kora(&d, &["check", "main.ko"], None);
    let stderr = text(&out.stderr);
    let _ = std::fs::remove_dir_all(&d);
    let found = stderr
        .split("[E")
        .skip(1)
        .filter_map(|rest| rest.get(..4))
        .map(|n| format!("E{n}"))
        .collect();
    (found, stderr)
}

fn pair(name: &str, refused: &str, accepted: &str, flows: usize) {
    let (got, stderr) = codes(&format!("{name}-refused"), refused);
    assert_eq!(
        got.iter().filter(|c| *c == "E0830").count(),
        flows,
        "{name}: expected {flows} E0830:\n{stderr}"
    );
    assert!(
        stderr.contains("main.ko:"),
        "{name}: no position:\n{stderr}"
    );
    let (got, stderr) = codes(&format!("{name}-accepted"), accepted);
    assert!(
        got.iter().all(|c| c == "E0901"),
        "{name}: the mirror inside `declassify` was refused:\n{stderr}"
    );
}

#[test]
fn an_env_value_in_the_prompt() {
    pair(
        "env",
        "use env\n\ndef ask(q: str) -> None:\n    token: str = env.get(\"T\") else:\n        return\n    a = analyze(q, f\"as {token}\", model=\"fast\")\n    print(a)\n\nask(\"x\")\n",
        "use env\n\ndef ask(q: str) -> None:\n    token: str = env.get(\"T\") else:\n        return\n    declassify token for fast:\n        a = analyze(q, f\"as {token}\", model=\"fast\")\n        print(a)\n\nask(\"x\")\n",
        1,
    );
}

#[test]
fn a_classified_name_as_data() {
    pair(
        "name",
        "def s(r: str) -> None:\n    p = classified(r)\n    a = analyze(p, \"Summarise\")\n    print(a)\n\ns(\"x\")\n",
        "def s(r: str) -> None:\n    p = classified(r)\n    declassify p for local_model:\n        a = analyze(p, \"Summarise\")\n        print(a)\n\ns(\"x\")\n",
        1,
    );
}

#[test]
fn inside_a_list_and_an_operator() {
    pair(
        "display",
        "def s(r: str) -> None:\n    p = classified(r)\n    a = analyze([r, \"name: \" + p], \"Compare\")\n    print(a)\n\ns(\"x\")\n",
        "def s(r: str) -> None:\n    p = classified(r)\n    declassify p for local_model:\n        a = analyze([r, \"name: \" + p], \"Compare\")\n        print(a)\n\ns(\"x\")\n",
        1,
    );
}

#[test]
fn a_classified_expression_in_the_call() {
    pair(
        "literal",
        "def s(r: str) -> None:\n    a = analyze(classified(r), \"Summarise\")\n    print(a)\n\ns(\"x\")\n",
        "def s(r: str) -> None:\n    p = classified(r)\n    declassify p for local_model:\n        a = analyze(p, \"Summarise\")\n        print(a)\n\ns(\"x\")\n",
        1,
    );
}

#[test]
fn the_message_says_what_to_write() {
    let (_, stderr) = codes(
        "help",
        "def s(r: str) -> None:\n    p = classified(r)\n    a = analyze(p, \"Summarise\", model=\"fast\")\n    print(a)\n\ns(\"x\")\n",
    );
    assert!(
        stderr.contains("declassify p for fast:"),
        "no remedy:\n{stderr}"
    );
    assert!(
        stderr.contains("classified at line 2"),
        "no source:\n{stderr}"
    );
    assert!(stderr.contains("model=\"fast\""), "no sink:\n{stderr}");
}
