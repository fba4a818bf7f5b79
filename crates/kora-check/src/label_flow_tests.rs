//! Unit tests of the label-flow pass: each refused flow beside its mirror inside a `declassify` block.

use super::check;
use crate::codes;

/// The E0830 messages the pass reports for `src`, which must parse cleanly.
fn flows(src: &str) -> Vec<String> {
    let parsed = kora_syntax::parse(src);
    assert!(
        parsed.diagnostics.iter().all(|d| !d.is_error()),
        "test program does not parse: {:?}",
        parsed.diagnostics
    );
    check(&parsed.module, src)
        .into_iter()
        .inspect(|d| assert_eq!(d.code, codes::CLASSIFIED_TO_MODEL))
        .map(|d| d.message)
        .collect()
}

/// Asserts that `refused` reports exactly `n` flows and `accepted` (its mirror) none.
fn mirrored(refused: &str, accepted: &str, n: usize) {
    let got = flows(refused);
    assert_eq!(
        got.len(),
        n,
        "expected {n} flows in:\n{refused}\ngot {got:?}"
    );
    let ok = flows(accepted);
    assert!(ok.is_empty(), "mirror was refused:\n{accepted}\n{ok:?}");
}

#[test]
fn a_classified_name_as_data() {
    mirrored(
        "key = classified(\"s\")\nr = analyze(key, \"summarise\")\n",
        "key = classified(\"s\")\ndeclassify key for local_model:\n    r = analyze(key, \"summarise\")\n",
        1,
    );
}

#[test]
fn an_env_value_in_the_prompt_through_an_fstring() {
    mirrored(
        "use env\ndef f() -> None:\n    token: str = env.get(\"T\") else:\n        return\n    r = analyze(\"x\", f\"use {token}\", model=\"fast\")\n",
        "use env\ndef f() -> None:\n    token: str = env.get(\"T\") else:\n        return\n    declassify token for fast:\n        r = analyze(\"x\", f\"use {token}\", model=\"fast\")\n",
        1,
    );
}

#[test]
fn an_aliased_env_module_is_still_env() {
    mirrored(
        "use env as e\nk = e.get(\"K\")\nr = analyze(k, \"p\")\n",
        "use env as e\nk = e.get(\"K\")\ndeclassify k for m:\n    r = analyze(k, \"p\")\n",
        1,
    );
}

#[test]
fn inside_displays_and_operators() {
    mirrored(
        "k = classified(\"s\")\nr = analyze([1, (k, 2), {\"a\": k}, {k}, \"p\" + k], \"q\")\n",
        "k = classified(\"s\")\ndeclassify k for m:\n    r = analyze([1, (k, 2), {\"a\": k}, {k}, \"p\" + k], \"q\")\n",
        4,
    );
}

#[test]
fn a_classified_expression_written_in_the_call_is_never_released_by_a_name() {
    let got = flows("k = 1\ndeclassify k for m:\n    r = analyze(classified(\"s\"), \"p\")\n");
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].contains("a `classified(...)` value"), "{got:?}");
    let nested = flows("r = analyze({\"k\": [classified(1)]}, f\"{classified(2)}\")\n");
    assert_eq!(nested.len(), 2, "{nested:?}");
}

#[test]
fn a_release_of_another_name_does_not_count() {
    let got = flows(
        "a = classified(1)\nb = classified(2)\ndeclassify a for m:\n    r = analyze(b, \"p\")\n",
    );
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].contains("`b`"), "{got:?}");
}

#[test]
fn the_release_ends_with_its_block() {
    let got = flows("k = classified(1)\ndeclassify k for m:\n    pass\nr = analyze(k, \"p\")\n");
    assert_eq!(got.len(), 1, "{got:?}");
}

#[test]
fn the_message_names_source_line_sink_and_model() {
    let got = flows("x = 1\nk = classified(1)\nr = analyze(k, \"p\", model=\"gpt\")\n");
    assert_eq!(
        got,
        ["classified value `k` (classified at line 2) reaches `analyze` (model=\"gpt\") without a release"]
    );
    let src = "k = classified(1)\nr = analyze(k, \"p\", model=\"gpt\")\n";
    let parsed = kora_syntax::parse(src);
    let d = &check(&parsed.module, src)[0];
    let help = d.help.as_deref().unwrap_or("");
    assert!(help.contains("declassify k for gpt:"), "{help}");
    // The secondary label points at the source, the primary at the argument.
    assert_eq!(d.labels.len(), 2);
    assert_eq!(&src[d.span().range()], "k");
    assert_eq!(&src[d.labels[1].span.range()], "classified(1)");
}

#[test]
fn a_name_with_any_plain_assignment_is_left_to_the_runtime() {
    for src in [
        "k = classified(1)\nk = 2\nr = analyze(k, \"p\")\n",
        "k = classified(1)\nfor k in [1]:\n    pass\nr = analyze(k, \"p\")\n",
        "k = classified(1)\nk += 1\nr = analyze(k, \"p\")\n",
        "k = classified(1)\nmatch 3:\n    case k:\n        pass\nr = analyze(k, \"p\")\n",
        "def f(k: int) -> None:\n    r = analyze(k, \"p\")\n",
        "def f() -> None:\n    k = classified(1)\n    k, j = 1, 2\n    r = analyze(k, \"p\")\n",
        "use env\nk = env.get(\"K\")\nk = \"x\"\nr = analyze(k, \"p\")\n",
        // Not `env`: a user's object with a `get` method.
        "k = cfg.get(\"K\")\nr = analyze(k, \"p\")\n",
    ] {
        assert!(flows(src).is_empty(), "refused:\n{src}");
    }
}

#[test]
fn indirect_flows_are_the_runtimes() {
    for src in [
        "k = classified(1)\nr = analyze(str(k), \"p\")\n",
        "k = classified(1)\nr = analyze(k.upper(), \"p\")\n",
        "k = classified([1])\nr = analyze(k[0], \"p\")\n",
        "k = classified(1)\nj = k\nr = analyze(j, \"p\")\n",
    ] {
        assert!(flows(src).is_empty(), "refused:\n{src}");
    }
}

#[test]
fn functions_are_their_own_scopes() {
    // The top level's classified `k` is not the function's parameter `k`.
    assert!(
        flows("k = classified(1)\ndef f(k: str) -> None:\n    r = analyze(k, \"p\")\n").is_empty()
    );
    // A function's own classified name is refused inside it, and a release in
    // the enclosing block does not reach into a nested function's body.
    let got = flows(
        "k = classified(1)\ndeclassify k for m:\n    def f() -> None:\n        k = classified(2)\n        r = analyze(k, \"p\")\n",
    );
    assert_eq!(got.len(), 1, "{got:?}");
}

#[test]
fn lambda_and_comprehension_names_hide_the_functions() {
    assert!(flows("k = classified(1)\nrs = [analyze(k, \"p\") for k in [1, 2]]\n").is_empty());
    assert!(flows("k = classified(1)\nf = lambda k: analyze(k, \"p\")\n").is_empty());
    let got = flows("k = classified(1)\nrs = [analyze(k, \"p\") for j in [1, 2]]\n");
    assert_eq!(got.len(), 1, "{got:?}");
}

#[test]
fn nested_blocks_and_tests_are_walked() {
    mirrored(
        "k = classified(1)\nif True:\n    for i in [1]:\n        budget(max_calls=2):\n            r = analyze(k, \"p\")\n",
        "k = classified(1)\ndeclassify k for m:\n    if True:\n        for i in [1]:\n            budget(max_calls=2):\n                r = analyze(k, \"p\")\n",
        1,
    );
    mirrored(
        "test \"t\":\n    k = classified(1)\n    r = analyze(k, \"p\")\n",
        "test \"t\":\n    k = classified(1)\n    declassify k for m:\n        r = analyze(k, \"p\")\n",
        1,
    );
}
