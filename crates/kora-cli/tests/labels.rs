//! End to end: the laundering suite. Each case derives a value from a classified secret
//! through one operation and sends it to a model, a print, a file and (mirrored) to the
//! model inside a `declassify`; only the mirrored sends may carry the secret.

mod support;

use std::path::Path;

use kora_testkit::FakeProvider;
use support::{kora, kora_env, temp_dir, text, write_fake_config};

const SECRET: &str = "hunter2-secret";

/// (name, declarations, lines that set `v` from `secret`, text that must not leak)
const CASES: &[(&str, &str, &str, &str)] = &[
    ("concat", "", "v = secret + \"!\"", "hunter2"),
    ("fstring", "", "v = f\"<{secret}>\"", "hunter2"),
    ("format_method", "", "v = \"[{}]\".format(secret)", "hunter2"),
    ("center", "", "v = secret.center(30)", "hunter2"),
    ("str_builtin", "", "v = str(secret)", "hunter2"),
    ("repr_builtin", "", "v = repr(secret)", "hunter2"),
    ("upper", "", "v = secret.upper()", "HUNTER2"),
    ("replace", "", "v = secret.replace(\"-\", \"_\")", "hunter2"),
    ("split_index", "", "v = secret.split(\"-\")[0]", "hunter2"),
    ("strip", "", "v = (\"  \" + secret + \"  \").strip()", "hunter2"),
    ("slice", "", "v = secret[0:7]", "hunter2"),
    ("chars_rejoined", "", "v = secret[0] + secret[1:]", "hunter2"),
    ("join", "", "v = \"\".join([secret, \"x\"])", "hunter2"),
    ("list_element", "", "v = [1, secret]", "hunter2"),
    ("dict_value", "", "v = {\"k\": secret}", "hunter2"),
    ("dict_key", "", "v = {secret: 1}", "hunter2"),
    ("dict_keys_listed", "", "v = list({secret: 1}.keys())", "hunter2"),
    ("tuple", "", "v = (secret, 2)", "hunter2"),
    ("starred_unpack", "", "first, *rest = [1, secret]\nv = rest", "hunter2"),
    ("slice_assign", "", "v = [1, 2]\nv[0:1] = [secret]", "hunter2"),
    ("membership", "", "v = str(\"hunter2-secret\" in [secret]) * 3", "TrueTrueTrue"),
    ("set", "", "v = {secret}", "hunter2"),
    ("record_field", "type Box:\n    inner: str\n", "v = Box(inner=secret)", "hunter2"),
    ("record_field_read", "type Box:\n    inner: str\n", "v = Box(inner=secret).inner", "hunter2"),
    ("function_return", "def same(x: str) -> str:\n    return x\n", "v = same(secret)", "hunter2"),
    ("lambda", "", "v = (lambda x: x)(secret)", "hunter2"),
    ("bound_method", "", "m = secret.lower\nv = m()", "hunter2"),
    ("comprehension", "", "v = \"\".join([c for c in secret])", "hunter2"),
    ("generator_loop", "", "v = \"\"\nfor c in secret:\n    v = v + c", "hunter2"),
    ("augmented_assign", "", "v = \"<\"\nv += secret", "hunter2"),
    ("augmented_int", "", "v = 1\nv += int(classified(\"424242\"))", "424243"),
    ("sorted_then_joined", "", "v = \"\".join(sorted([secret]))", "hunter2"),
    ("reversed_twice", "", "v = \"\".join(reversed(list(reversed(secret))))", "hunter2"),
    ("max", "", "v = max([secret, \"a\"])", "hunter2"),
    ("zip", "", "v = list(zip([1], [secret]))", "hunter2"),
    ("append_pop", "", "xs: list[str] = []\nxs.append(secret)\nv = xs.pop()", "hunter2"),
    ("dict_get", "", "v = {\"a\": secret}.get(\"a\")", "hunter2"),
    ("json_encode", "", "v = json.encode({\"k\": secret})", "hunter2"),
    ("outcome_payload", "", "v = Ok(secret)", "hunter2"),
    ("match_binding", "", "match Ok(secret):\n    case Ok(x):\n        v = x\n    case _:\n        v = \"\"", "hunter2"),
    ("parallel_for", "", "vs = parallel for s in [secret]:\n    return s + \".\"\nv = vs[0]", "hunter2"),
    ("int_arithmetic", "", "v = int(classified(\"424242\")) + 1", "424243"),
    ("float_arithmetic", "", "v = classified(2.5) * 4.0 + 0.25", "10.25"),
    // The fast paths of `labels/ops.rs`: a temporary's box reused for the result, a shared
    // operand left alone, an update in place, a secret index, `len`, sorting by secrets.
    ("int_temporaries", "", "v = ((len(secret) + 424228) * 2 + 1) % 1000003", "848485"),
    ("shared_operand_twice", "", "n = len(secret) + 424228\nv = (n + 0) + (n + 1)", "848485"),
    ("augmented_secret", "", "v = len(secret) + 424228\nv *= 2", "848484"),
    ("secret_index", "", "v = [\"a1b2\", \"c3d4\"][len(secret) - 13]", "c3d4"),
    ("len_of_secret", "", "v = len(secret) * 1000 + 7", "14007"),
    ("sorted_secret_numbers", "", "v = sorted([len(secret) + 424228, 5])[1]", "424242"),
    ("sorted_secret_tuples", "", "v = sorted([(len(secret) + 424228, \"a\"), (1, \"b\")])[1][0]", "424242"),
    ("dict_get_secret_key", "", "d = {secret: secret + \"!\"}\nv = d.get(secret)", "hunter2"),
    // `d.get` looked up out of `eval`'s frame (`Interp::dict_get`): the key's and the
    // default's labels reach the result, found or not.
    ("dict_get_secret_key_missing", "", "v = {\"x\": 1}.get(secret, 777777)", "777777"),
    ("dict_get_secret_default", "", "v = {\"x\": 1}.get(\"y\", secret)", "hunter2"),
    ("dict_get_plain_key_secret_value", "", "d = {\"x\": secret}\nv = d.get(\"x\", \"\")", "hunter2"),
    (
        "dict_get_counting_loop",
        "def count(ws: list[str]) -> dict[str, int]:\n    c: dict[str, int] = {}\n    for w in ws:\n        c[w] = c.get(w, 424240) + 1\n    return c\n",
        "v = count([secret, secret]).get(secret, 0)",
        "424242",
    ),
    // One labelled scalar argument (`label_calls::apply`'s first case), boxed this time.
    ("str_of_secret_float", "", "v = str(len(secret) * 0.75)", "10.5"),
    ("abs_of_secret_float", "", "v = abs(len(secret) * -0.75)", "10.5"),
    ("float_of_secret_text", "", "v = float(str(len(secret)) + \".25\") * 2.0", "28.5"),
    ("comparison", "", "v = f\"{secret == SECRET_TEXT}\"", "True"),
    ("env_value", "", "got = env.get(\"KORA_TEST_SECRET\")\nmatch got:\n    case Ok(x):\n        v = x\n    case _:\n        v = \"\"", "hunter2"),
    ("notes_round_trip", "", "notes.write(\"k\", secret)\nmatch notes.read(\"k\"):\n    case Ok(x):\n        v = x\n    case _:\n        v = \"\"", "hunter2"),
];

fn program(decls: &str, body: &str) -> String {
    format!(
        "use json\nuse fs\nuse env\nuse notes\nSECRET_TEXT = \"{SECRET}\"\n{decls}secret = classified(\"{SECRET}\")\n{body}\n"
    )
}

fn indent(lines: &str) -> String {
    lines
        .lines()
        .map(|l| format!("    {l}\n"))
        .collect::<String>()
}

fn run_case(
    fake: &FakeProvider,
    name: &str,
    sink: &str,
    source: &str,
) -> (std::process::Output, std::path::PathBuf) {
    let d = temp_dir("kora-labels", &format!("{name}-{sink}"));
    write_fake_config(&d, &fake.openai_endpoint());
    std::fs::write(d.join("main.ko"), source).expect("program");
    let env = [("KORA_TEST_SECRET", SECRET)];
    (kora_env(&d, &["run", "main.ko"], None, &env), d)
}

fn leaked(haystack: &str, needle: &str) -> bool {
    haystack.contains(needle)
}

#[test]
fn no_operation_launders_a_secret_to_a_model() {
    let fake = FakeProvider::start();
    let mut failures = Vec::new();
    for (name, decls, setup, needle) in CASES {
        fake.reset();
        let src = program(
            decls,
            &format!("{setup}\nr = analyze(v, \"look\")\nprint(\"sent\")"),
        );
        let (out, _) = run_case(&fake, name, "model", &src);
        let err = text(&out.stderr);
        let ok = out.status.code() == Some(1)
            && err.contains("E1341")
            && err.contains("model `default`")
            && (err.contains("`classified(...)` at main.ko:")
                || err.contains("env.get")
                || err.contains("the note \"k\""))
            && fake.count() == 0
            && !leaked(&err, needle);
        if !ok {
            failures.push(format!(
                "{name}: exit {:?}, {} request(s) reached the model\n{}{}",
                out.status.code(),
                fake.count(),
                text(&out.stdout),
                err
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

#[test]
fn no_operation_launders_a_secret_to_the_terminal_or_a_file() {
    let fake = FakeProvider::start();
    let mut failures = Vec::new();
    for (name, decls, setup, needle) in CASES {
        let src = program(
            decls,
            &format!("{setup}\nprint(v)\nprint([v], f\"{{v}}\")\nfs.write(\"out.txt\", str(v))\nfs.append(\"out.txt\", f\"{{v}}\")"),
        );
        let (out, d) = run_case(&fake, name, "print", &src);
        let stdout = text(&out.stdout);
        let file = std::fs::read_to_string(d.join("out.txt")).unwrap_or_default();
        let ok = out.status.success()
            && stdout.contains("__CLASSIFIED__")
            && !leaked(&stdout, needle)
            && file.contains("__CLASSIFIED__")
            && !leaked(&file, needle);
        if !ok {
            failures.push(format!(
                "{name}: exit {:?}\nstdout: {stdout}\nfile: {file}\nstderr: {}",
                out.status.code(),
                text(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

#[test]
fn the_same_flows_reach_the_model_inside_a_declassify_block() {
    let fake = FakeProvider::start();
    let mut failures = Vec::new();
    for (name, decls, setup, needle) in CASES {
        if matches!(
            *name,
            "int_arithmetic"
                | "float_arithmetic"
                | "augmented_int"
                | "env_value"
                | "notes_round_trip"
        ) {
            // Their secret is not `secret` (a note read back is a new classified value).
            continue;
        }
        fake.reset();
        let body = format!(
            "declassify secret for default:\n{}    r = analyze(v, \"look\")\nprint(\"sent\")",
            indent(setup)
        );
        let (out, _) = run_case(&fake, name, "released", &program(decls, &body));
        let sent: String = fake.requests().iter().map(|r| r.body.to_string()).collect();
        let ok = out.status.success()
            && text(&out.stdout).contains("sent")
            && fake.count() == 1
            && (sent.contains(needle) || *name == "comparison");
        if !ok {
            failures.push(format!(
                "{name}: exit {:?}, {} request(s)\n{}{}",
                out.status.code(),
                fake.count(),
                text(&out.stdout),
                text(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

#[test]
fn a_release_names_one_sink_and_ends_with_its_block() {
    let fake = FakeProvider::start();
    let d = temp_dir("kora-labels", "one-sink");
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[models]\ndefault = \"cloud\"\ncloud = {{ name = \"m\", endpoint = \"{e}\" }}\nlocal = {{ name = \"l\", endpoint = \"{e}\" }}\nmax_retries = 0\n",
            e = fake.openai_endpoint()
        ),
    )
    .expect("config");
    let run = |src: &str| {
        std::fs::write(d.join("main.ko"), src).expect("program");
        kora(&d, &["run", "main.ko"], None)
    };
    // Released for `local`: the cloud model is still refused.
    let out = run(&format!(
        "secret = classified(\"{SECRET}\")\ndeclassify secret for local:\n    r = analyze(secret, \"x\", model=\"cloud\")\n"
    ));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("model `cloud`"),
        "{}",
        text(&out.stderr)
    );
    // Inside the block, printing still redacts; after it, the model is refused again.
    fake.reset();
    let out = run(&format!(
        "secret = classified(\"{SECRET}\")\nkept = \"\"\ndeclassify secret for local:\n    r = analyze(secret, \"x\", model=\"local\")\n    print(secret)\n    kept = secret + \"\"\nprint(\"after\")\nr2 = analyze(kept, \"x\", model=\"local\")\n"
    ));
    let stdout = text(&out.stdout);
    assert_eq!(fake.count(), 1, "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("__CLASSIFIED__\nafter\n") && !stdout.contains("hunter2"),
        "{stdout}"
    );
    assert!(text(&out.stderr).contains("E1341"), "{}", text(&out.stderr));
    // An unknown sink is an error naming it and the ones that exist.
    let out = run("s = classified(1)\ndeclassify s for clowd:\n    pass\n");
    let err = text(&out.stderr);
    assert!(
        err.contains("E1342") && err.contains("clowd") && err.contains("cloud"),
        "{err}"
    );
}

/// Arithmetic on labelled temporaries reuses their boxes (`labels/ops.rs`): a release must
/// still hold only while its block is open, and a secret no release covers must still refuse.
#[test]
fn reused_boxes_keep_releases_exactly_as_fresh_ones() {
    let fake = FakeProvider::start();
    let d = temp_dir("kora-labels", "reused-boxes");
    write_fake_config(&d, &fake.openai_endpoint());
    let run = |src: &str| {
        std::fs::write(d.join("main.ko"), src).expect("program");
        kora(&d, &["run", "main.ko"], None)
    };
    let out = run(&format!(
        "secret = classified(\"{SECRET}\")\nkept = 0\ndeclassify secret for default:\n    kept = ((len(secret) + 424228) * 2 + 1) % 1000003\n    r = analyze(kept, \"x\")\nprint(\"after\")\nr2 = analyze(kept, \"x\")\n"
    ));
    let err = text(&out.stderr);
    assert_eq!(fake.count(), 1, "{}{err}", text(&out.stdout));
    assert!(text(&out.stdout).contains("after"), "{err}");
    assert!(err.contains("E1341") && !err.contains("848485"), "{err}");
    fake.reset();
    let out = run(&format!(
        "secret = classified(\"{SECRET}\")\nother = classified(5)\ndeclassify secret for default:\n    v = (len(secret) + 1) * 3 + other\n    r = analyze(v, \"x\")\n"
    ));
    let err = text(&out.stderr);
    assert_eq!(fake.count(), 0, "{err}");
    assert!(err.contains("E1341"), "{err}");
}

#[test]
fn unverified_text_cannot_choose_a_path_until_narrowed() {
    let fake = FakeProvider::start();
    let d = temp_dir("kora-labels", "unverified");
    write_fake_config(&d, &fake.openai_endpoint());
    std::fs::write(d.join("name.txt"), "report.txt").expect("input");
    let run = |src: &str| {
        std::fs::write(d.join("main.ko"), src).expect("program");
        kora(&d, &["run", "main.ko"], None)
    };
    let out = run("use fs\nmatch fs.read(\"name.txt\"):\n    case Ok(name):\n        fs.write(name, \"x\")\n    case _:\n        pass\n");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("E1343") && err.contains("fs.read") && err.contains("file path"),
        "{err}"
    );
    // The model's answer is unverified too.
    fake.set_default(kora_testkit::Behaviour::Answer("\"x.txt\"".into()));
    let out = run("use fs\nr = analyze(\"pick\", \"name a file\")\nmatch r:\n    case Ok(name):\n        fs.write(name, \"x\")\n    case _:\n        pass\n");
    assert!(text(&out.stderr).contains("E1343"), "{}", text(&out.stderr));
    // A parse into a type narrows: an int read from the file is fine as part of a path.
    std::fs::write(d.join("n.txt"), "7").expect("input");
    let out = run("use fs\nmatch fs.read(\"n.txt\"):\n    case Ok(t):\n        n = int(t)\n        fs.write(f\"out{n}.txt\", \"x\")\n        print(\"wrote\")\n    case _:\n        pass\n");
    assert!(text(&out.stdout).contains("wrote"), "{}", text(&out.stderr));
    assert!(Path::new(&d.join("out7.txt")).exists());
    // Without a narrowing, text read from a file cannot name the file to write.
    let out = run("use fs\nmatch fs.read(\"name.txt\"):\n    case Ok(t):\n        if t == \"report.txt\":\n            fs.write(t, \"x\")\n    case _:\n        pass\n");
    assert!(text(&out.stderr).contains("E1343"), "{}", text(&out.stderr));
}

#[test]
fn a_trace_never_carries_a_secret_and_records_the_release() {
    let fake = FakeProvider::start();
    let d = temp_dir("kora-labels", "trace");
    write_fake_config(&d, &fake.openai_endpoint());
    std::fs::write(
        d.join("main.ko"),
        format!("secret = classified(\"{SECRET}\")\ndeclassify secret for default:\n    r = analyze(secret, \"x\")\nprint(1 // 0 if secret == \"\" else 2)\nx = {{\"a\": 1}}[secret]\n"),
    )
    .expect("program");
    let out = kora(&d, &["run", "main.ko"], None);
    let err = text(&out.stderr);
    // The KeyError names the key as the placeholder, never the secret.
    assert!(
        err.contains("__CLASSIFIED__") && !err.contains("hunter2"),
        "{err}"
    );
    let mut found = String::new();
    for e in walk(&d) {
        if e.extension().is_some_and(|x| x == "json" || x == "jsonl") {
            found.push_str(&std::fs::read_to_string(&e).unwrap_or_default());
        }
    }
    assert!(
        found.contains("declassify for default"),
        "no declassify span in {found}"
    );
    assert!(!found.contains("hunter2"), "a trace carried the secret");
}

fn walk(d: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(d) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(walk(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn redact_sends_placeholders_and_the_answer_gets_the_secret_back_classified() {
    let fake = FakeProvider::start();
    fake.set_default(kora_testkit::Behaviour::Answer(
        "\"Dear [REDACTED-1], your order shipped.\"".into(),
    ));
    let d = temp_dir("kora-labels", "redact");
    write_fake_config(&d, &fake.openai_endpoint());
    std::fs::write(
        d.join("main.ko"),
        format!("name = classified(\"{SECRET}\")\nr = analyze(redact({{\"customer\": name, \"order\": 42}}), \"Write a one-line shipping note\")\nmatch r:\n    case Ok(text):\n        print(text)\n        print(len(text) > 0)\n    case _:\n        print(\"no answer\")\n"),
    )
    .expect("program");
    let out = kora(&d, &["run", "main.ko"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent: String = fake.requests().iter().map(|r| r.body.to_string()).collect();
    assert!(
        sent.contains("[REDACTED-1]") && !sent.contains("hunter2"),
        "{sent}"
    );
    assert!(sent.contains("42"), "public parts go as they are: {sent}");
    // The answer holds the real name again, so it prints redacted.
    assert_eq!(text(&out.stdout), "__CLASSIFIED__\n__CLASSIFIED__\n");
}

#[test]
fn an_allowlist_check_narrows_unverified_text() {
    let d = temp_dir("kora-labels", "allowlist");
    std::fs::write(d.join("name.txt"), "report.txt").expect("input");
    std::fs::write(
        d.join("main.ko"),
        "use fs\nALLOWED = [\"report.txt\", \"summary.txt\"]\nmatch fs.read(\"name.txt\"):\n    case Ok(name):\n        if name in ALLOWED:\n            fs.write(name, \"x\")\n            print(\"allowed\")\n        else:\n            print(\"refused\")\n    case _:\n        pass\n",
    )
    .expect("program");
    let out = kora(&d, &["run", "main.ko"], None);
    assert_eq!(text(&out.stdout), "allowed\n", "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(d.join("report.txt")).unwrap_or_default(),
        "x"
    );
}

#[test]
fn a_recorded_cassette_holds_the_placeholder_not_the_released_secret() {
    let fake = FakeProvider::start();
    let d = temp_dir("kora-labels", "cassette");
    write_fake_config(&d, &fake.openai_endpoint());
    let src = format!(
        "secret = classified(\"{SECRET}\")\ndeclassify secret for default:\n    r = analyze({{\"k\": secret}}, f\"check {{secret}}\")\nprint(r)\n"
    );
    std::fs::write(d.join("main.ko"), &src).expect("program");
    let out = kora(&d, &["run", "--record", "main.ko"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent: String = fake.requests().iter().map(|r| r.body.to_string()).collect();
    assert!(sent.contains(SECRET), "the model got the released value");
    let cassette = std::fs::read_to_string(d.join("main.cassette.json")).expect("cassette");
    assert!(
        !cassette.contains("hunter2") && cassette.contains("__CLASSIFIED__"),
        "{cassette}"
    );
    // And it replays: the key was computed from the real material.
    fake.reset();
    let out = kora(&d, &["run", "--replay", "main.ko"], None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(fake.count(), 0);
}

#[test]
fn a_tool_cannot_hand_a_secret_to_the_model_and_a_module_cannot_launder_one() {
    let fake = FakeProvider::start();
    let d = temp_dir("kora-labels", "tool");
    write_fake_config(&d, &fake.openai_endpoint());
    fake.push(kora_testkit::Behaviour::ToolCalls(vec![(
        "account_token".into(),
        serde_json::json!({"user": "ada"}),
    )]));
    std::fs::write(
        d.join("main.ko"),
        format!("tool account_token(user: str) -> str:\n    \"\"\"The user's API token.\"\"\"\n    return classified(\"{SECRET}\")\n\ntype Answer:\n    token: str\n\nr: Result[Answer] = analyze(\"ada\", \"What is ada's token?\", tools=[account_token])\nprint(r)\n"),
    )
    .expect("program");
    let out = kora(&d, &["run", "main.ko"], None);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("E1341") && err.contains("result of the tool `account_token`"),
        "{err}"
    );
    let sent: String = fake.requests().iter().map(|r| r.body.to_string()).collect();
    assert!(!sent.contains("hunter2"), "{sent}");
    // Through a file module: the label crosses the `use` boundary both ways.
    std::fs::write(
        d.join("lib.ko"),
        "def wrap(x: str) -> dict[str, str]:\n    return {\"inner\": x + \"\"}\n",
    )
    .expect("module");
    std::fs::write(
        d.join("main.ko"),
        format!("use \"./lib.ko\" as lib\nsecret = classified(\"{SECRET}\")\nv = lib.wrap(secret)\nprint(v)\nr = analyze(v, \"x\")\n"),
    )
    .expect("program");
    fake.reset();
    let out = kora(&d, &["run", "main.ko"], None);
    let err = text(&out.stderr);
    assert!(
        text(&out.stdout).contains("{'inner': __CLASSIFIED__}"),
        "{}",
        text(&out.stdout)
    );
    assert!(err.contains("E1341") && fake.count() == 0, "{err}");
}

#[test]
fn the_placeholder_is_configurable_under_output() {
    let d = temp_dir("kora-labels", "placeholder");
    std::fs::write(d.join("kora.toml"), "[output]\nclassified = \"<hidden>\"\n").expect("config");
    std::fs::write(
        d.join("main.ko"),
        format!("s = classified(\"{SECRET}\")\nprint(s, [s])\n"),
    )
    .expect("program");
    let out = kora(&d, &["run", "main.ko"], None);
    assert_eq!(
        text(&out.stdout),
        "<hidden> [<hidden>]\n",
        "{}",
        text(&out.stderr)
    );
    std::fs::write(d.join("kora.toml"), "[output]\nhidden = \"x\"\n").expect("config");
    let out = kora(&d, &["run", "main.ko"], None);
    let err = text(&out.stderr);
    assert!(
        err.contains("[output].hidden") && err.contains("kora.toml"),
        "{err}"
    );
}
