//! End to end: the laundering suite for secrets stored inline (`labels/small.rs`). A classified
//! small int and a classified bool, derived through one operation each, go to a model, a
//! print, an f-string, `str()`, a file, and (mirrored) to the model inside a `declassify`;
//! only the mirrored sends may carry the value. Errors, traces and modules have their own cases.

mod support;

use kora_testkit::FakeProvider;
use support::{kora, temp_dir, text, write_fake_config};

/// (name, declarations, lines that set `v` from `n` (424242) or `flag` (True), the text of
/// the plain result, which must not appear)
const CASES: &[(&str, &str, &str, &str)] = &[
    ("itself", "", "v = n", "424242"),
    ("add", "", "v = n + 1", "424243"),
    ("both_sides", "", "v = n + n", "848484"),
    ("sub_mul_mod", "", "v = (n * 3 - 1) % 1000003", "272722"),
    ("floordiv", "", "v = n // 2", "212121"),
    ("neg", "", "v = -n", "-424242"),
    ("abs", "", "v = abs(0 - n)", "424242"),
    ("bitwise", "", "v = n ^ 0", "424242"),
    // Past 51 bits the result is a box again, and back inline when it fits.
    (
        "overflowing_inline",
        "",
        "v = n * 11035152450 % 2147483648 + 0 * n",
        "663510756",
    ),
    ("augmented", "", "v = 1\nv += n", "424243"),
    ("augmented_target", "", "v = n\nv -= 1", "424241"),
    ("fstring", "", "v = f\"<{n}>\"", "424242"),
    ("fstring_spec", "", "v = f\"{n:>10}\"", "424242"),
    ("str_builtin", "", "v = str(n)", "424242"),
    ("repr_builtin", "", "v = repr(n)", "424242"),
    ("format_method", "", "v = \"[{}]\".format(n)", "424242"),
    ("str_method", "", "v = str(n).zfill(8)", "00424242"),
    ("json_encode", "", "v = json.encode({\"k\": n})", "424242"),
    ("dict_key", "", "v = {n: 1}", "424242"),
    ("dict_keys_listed", "", "v = list({n: 1}.keys())", "424242"),
    ("dict_value", "", "v = {\"k\": n}", "424242"),
    ("list_element", "", "v = [1, n]", "424242"),
    ("tuple", "", "v = (n, 2)", "424242"),
    ("set", "", "v = {n}", "424242"),
    (
        "record_field",
        "type Box:\n    inner: int\n",
        "v = Box(inner=n)",
        "424242",
    ),
    (
        "function_return",
        "def same(x: int) -> int:\n    return x + 0\n",
        "v = same(n)",
        "424242",
    ),
    ("lambda", "", "v = (lambda x: x * 1)(n)", "424242"),
    ("comprehension", "", "v = [x + 1 for x in [n]]", "424243"),
    (
        "range_loop",
        "",
        "v = 424240\nfor i in range(n - 424240):\n    v = v + i",
        "424241",
    ),
    ("sum", "", "v = sum([n, 1])", "424243"),
    ("max", "", "v = max([n, 1])", "424242"),
    ("sorted", "", "v = sorted([n, 1])[1]", "424242"),
    (
        "index_pick",
        "",
        "v = [\"a1b2\", \"c3d4\"][n - 424241]",
        "c3d4",
    ),
    (
        "slice_bound",
        "",
        "v = \"abcdefghc3d4\"[n - 424234:]",
        "c3d4",
    ),
    ("divmod", "", "v = divmod(n, 1000000)[1]", "424242"),
    ("int_of_str", "", "v = int(str(n)) + 1", "424243"),
    ("float_of_int", "", "v = float(n) + 0.5", "424242.5"),
    ("outcome_payload", "", "v = Ok(n + 1)", "424243"),
    (
        "match_binding",
        "",
        "match Ok(n):\n    case Ok(x):\n        v = x + 1\n    case _:\n        v = 0",
        "424243",
    ),
    (
        "match_literal",
        "",
        "match n:\n    case 424242:\n        v = n + 1\n    case _:\n        v = 0",
        "424243",
    ),
    (
        "parallel_for",
        "",
        "vs = parallel for s in [n]:\n    return s + 1\nv = vs[0]",
        "424243",
    ),
    (
        "append_pop",
        "",
        "xs: list[int] = []\nxs.append(n)\nv = xs.pop()",
        "424242",
    ),
    (
        "dict_get_secret_key",
        "",
        "d = {n: n + 1}\nv = d.get(n)",
        "424243",
    ),
    // The inline paths (`label_ops::small_ints`, the branch test, `conforms_quick`): each case
    // runs inside a function, where the operands are locals, as in a hot loop.
    (
        "fast_local_arith",
        "def f(x: int) -> int:\n    return (x - 2) * 3 // 2 % 1000003 + x\n",
        "v = f(n)",
        "1060602",
    ),
    (
        "fast_two_secrets_added",
        "def f(x: int) -> int:\n    return x + x\n",
        "v = f(n) + f(n - 1)",
        "1696966",
    ),
    (
        "fast_local_augmented",
        "def f(x: int) -> int:\n    t = 1\n    t += x\n    t *= 2\n    return t\n",
        "v = f(n)",
        "848486",
    ),
    (
        "fast_list_item_augmented",
        "def f(x: int) -> int:\n    xs = [1, 2]\n    xs[1] += x\n    return xs[1]\n",
        "v = f(n)",
        "424244",
    ),
    (
        "fast_dict_item_augmented",
        "def f(x: int) -> int:\n    d = {\"a\": 1}\n    d[\"a\"] += x\n    return d[\"a\"]\n",
        "v = f(n)",
        "424243",
    ),
    (
        "fast_branch_and_loop",
        "def f(x: int) -> int:\n    t = x\n    while t > 424239:\n        t -= 1\n    if t < 5:\n        return 0\n    return t\n",
        "v = f(n)",
        "424239",
    ),
    (
        "fast_float_param",
        "def f(x: float) -> float:\n    return x\n",
        "v = f(n) + 1",
        "424243",
    ),
    (
        "fast_bool_param",
        "def f(b: bool) -> bool:\n    return b\n",
        "v = f(flag)",
        "True",
    ),
    (
        "fast_comparison_value",
        "def f(x: int) -> bool:\n    return x > 424241\n",
        "v = f(n)",
        "True",
    ),
    // The wide product is boxed where `small_ints` computes it, and the box then meets plain
    // ints in `label_ops::binary`'s first test (`+ c`, then `% m` back inline).
    (
        "fast_wide_product",
        "def f(x: int) -> int:\n    return x * 11035152450\n",
        "v = f(n)",
        "4681575145692900",
    ),
    (
        "fast_wide_then_plain",
        "def f(x: int) -> int:\n    return (x * 11035152450 + 12345) % 2147483648\n",
        "v = f(n)",
        "663523101",
    ),
    // Two secret strings with one label are joined from their boxes (`label_ops::binary`).
    ("two_secret_strings", "", "v = str(n) + str(n - 1)", "424242424241"),
    // `t = t + 1` on an inline secret is added on the word (`concat_assign`).
    (
        "fast_rebinding_add",
        "def f(x: int) -> int:\n    t = x\n    t = t + 1\n    return t\n",
        "v = f(n)",
        "424243",
    ),
    // A method call is plain only when neither its receiver nor an argument is labelled.
    ("method_secret_argument", "", "v = \"a-b\".replace(\"-\", str(n))", "a424242b"),
    ("method_secret_receiver", "", "v = str(n).replace(\"2\", \"9\")", "494949"),
    // `d.get(k)` labels a plain value with a secret key's or default's label (`dict_get`, and
    // `eval_method_call`'s plain `get` only when both are plain).
    ("dict_get_plain_value", "", "d = {424242: 1357}\nv = d.get(n)", "1357"),
    ("dict_get_secret_default", "", "d = {\"a\": 1357}\nv = d.get(\"a\", n)", "1357"),
    // A store under a secret key keeps the key's label (`assign_other`'s dict path).
    (
        "fast_secret_key_store",
        "def f(x: int) -> list[int]:\n    d: dict[int, int] = {}\n    d[x] = 1\n    return list(d.keys())\n",
        "v = f(n)",
        "424242",
    ),
    (
        "fast_secret_str_key_store",
        "def f(x: int) -> list[str]:\n    d: dict[str, int] = {}\n    d[\"k\" + str(x)] = 1\n    return list(d.keys())\n",
        "v = f(n)",
        "k424242",
    ),
    // Secret sort keys are revealed once to order the items; the items keep their labels.
    ("sorted_secret_tuples", "", "v = sorted([(n, \"b\"), (1, \"a\")])[1]", "424242"),
    ("sorted_secret_ints", "", "v = sorted([n + 3, n, n - 5])[0]", "424237"),
    ("sorted_secret_strings", "", "v = sorted([str(n), \"1\"])[1]", "424242"),
    (
        "sorted_by_secret_key",
        "",
        "v = sorted([n, 1], key=lambda x: (str(x), 0), reverse=True)[0]",
        "424242",
    ),
    ("bool_itself", "", "v = flag", "True"),
    (
        "bool_match_literal",
        "",
        "match flag:\n    case True:\n        v = n + 1\n    case _:\n        v = 0",
        "424243",
    ),
    ("bool_comparison", "", "v = n > 5", "True"),
    ("bool_equality", "", "v = n == 424241", "False"),
    ("bool_not", "", "v = not flag", "False"),
    ("bool_operand", "", "v = True and flag", "True"),
    ("bool_to_int", "", "v = int(flag) + 424241", "424242"),
    ("bool_fstring", "", "v = f\"{flag}\"", "True"),
    ("bool_str", "", "v = str(n < 0)", "False"),
    ("bool_json", "", "v = json.encode([flag])", "true"),
    ("bool_in_list", "", "v = [flag, n > 1]", "True"),
];

fn program(decls: &str, body: &str) -> String {
    format!("use json\nuse fs\n{decls}n = classified(424242)\nflag = classified(True)\n{body}\n")
}

fn indent(lines: &str) -> String {
    lines.lines().map(|l| format!("    {l}\n")).collect()
}

fn run(d: &std::path::Path, source: &str) -> std::process::Output {
    std::fs::write(d.join("main.ko"), source).expect("program");
    kora(d, &["run", "main.ko"], None)
}

#[test]
fn no_operation_launders_an_inline_secret_to_a_model() {
    let fake = FakeProvider::start();
    let d = temp_dir("kora-labels-inline", "model");
    write_fake_config(&d, &fake.openai_endpoint());
    let mut failures = Vec::new();
    for (name, decls, setup, needle) in CASES {
        fake.reset();
        let src = program(
            decls,
            &format!("{setup}\nr = analyze(v, \"look\")\nprint(\"sent\")"),
        );
        let out = run(&d, &src);
        let err = text(&out.stderr);
        let ok = out.status.code() == Some(1)
            && err.contains("E1341")
            && err.contains("`classified(...)` at main.ko:")
            && fake.count() == 0
            && !err.contains(needle);
        if !ok {
            failures.push(format!(
                "{name}: exit {:?}, {} request(s)\n{}{err}",
                out.status.code(),
                fake.count(),
                text(&out.stdout)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

#[test]
fn no_operation_launders_an_inline_secret_to_the_terminal_or_a_file() {
    let d = temp_dir("kora-labels-inline", "print");
    let mut failures = Vec::new();
    for (name, decls, setup, needle) in CASES {
        let _ = std::fs::remove_file(d.join("out.txt"));
        let src = program(
            decls,
            &format!("{setup}\nprint(v)\nprint([v], f\"{{v}}\", str(v))\nfs.write(\"out.txt\", str(v))\nfs.append(\"out.txt\", f\"{{v}}\")"),
        );
        let out = run(&d, &src);
        let stdout = text(&out.stdout);
        let file = std::fs::read_to_string(d.join("out.txt")).unwrap_or_default();
        let ok = out.status.success()
            && stdout.contains("__CLASSIFIED__")
            && !stdout.contains(needle)
            && file.contains("__CLASSIFIED__")
            && !file.contains(needle);
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
    let d = temp_dir("kora-labels-inline", "released");
    write_fake_config(&d, &fake.openai_endpoint());
    let mut failures = Vec::new();
    for (name, decls, setup, needle) in CASES {
        fake.reset();
        // Both secrets are released: a case reads one or both.
        let body = format!(
            "declassify n for default:\n    declassify flag for default:\n{}        r = analyze(v, \"look\")\nprint(\"sent\")",
            indent(&indent(setup))
        );
        let out = run(&d, &program(decls, &body));
        let sent: String = fake.requests().iter().map(|r| r.body.to_string()).collect();
        let ok = out.status.success()
            && text(&out.stdout).contains("sent")
            && fake.count() == 1
            && (sent.contains(needle) || needle.starts_with(['T', 'F']));
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

/// A release boxes the inline secret it names; a copy taken before the block, and one kept
/// after it, are refused as ever.
#[test]
fn a_release_of_an_inline_secret_covers_its_block_only() {
    let fake = FakeProvider::start();
    let d = temp_dir("kora-labels-inline", "release-scope");
    write_fake_config(&d, &fake.openai_endpoint());
    let out = run(
        &d,
        "n = classified(424242)\nearly = n + 1\nkept = 0\ndeclassify n for default:\n    kept = n * 2\n    r = analyze(kept, \"x\")\nprint(\"after\")\nr2 = analyze(early, \"x\")\n",
    );
    let err = text(&out.stderr);
    assert_eq!(fake.count(), 1, "{}{err}", text(&out.stdout));
    assert!(text(&out.stdout).contains("after"), "{err}");
    assert!(err.contains("E1341") && !err.contains("424243"), "{err}");
    fake.reset();
    let out = run(
        &d,
        "n = classified(424242)\nkept = 0\ndeclassify n for default:\n    kept = n * 2\nr = analyze(kept, \"x\")\n",
    );
    assert_eq!(fake.count(), 0, "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("E1341"), "{}", text(&out.stderr));
    // Inside a list and a record the release reaches the shared element.
    fake.reset();
    let out = run(
        &d,
        "type Box:\n    inner: int\nn = classified(424242)\nxs = [n]\nb = Box(inner=n)\ndeclassify xs for default:\n    r = analyze(xs, \"x\")\ndeclassify b for default:\n    r2 = analyze(b.inner, \"x\")\nprint(\"done\")\n",
    );
    assert_eq!(fake.count(), 2, "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("done"), "{}", text(&out.stderr));
}

/// Error messages are a sink: an operation failing on an inline secret does not quote it.
#[test]
fn errors_on_an_inline_secret_do_not_show_it() {
    let d = temp_dir("kora-labels-inline", "errors");
    for body in [
        "x = {1: 2}[n]",
        "x = n // (n - n)",
        "x = int(\"z\" + str(n))",
        "x = [1, 2][n]",
        "x = len(n)",
    ] {
        let out = run(&d, &format!("n = classified(424242)\n{body}\n"));
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{body}: {err}");
        assert!(!err.contains("424242"), "{body}: {err}");
    }
}

#[test]
fn an_inline_secret_crosses_a_module_and_never_reaches_a_trace() {
    let fake = FakeProvider::start();
    let d = temp_dir("kora-labels-inline", "module-trace");
    write_fake_config(&d, &fake.openai_endpoint());
    std::fs::write(
        d.join("lib.ko"),
        "def bump(x: int) -> dict[str, int]:\n    return {\"inner\": x + 1}\n\ndef is_big(x: int) -> bool:\n    return x > 10\n",
    )
    .expect("module");
    let out = run(
        &d,
        "use \"./lib.ko\" as lib\nn = classified(424242)\nv = lib.bump(n)\nprint(v, lib.is_big(n))\ndeclassify n for default:\n    r = analyze(n, \"x\")\nr2 = analyze(v, \"x\")\n",
    );
    let (stdout, err) = (text(&out.stdout), text(&out.stderr));
    assert!(
        stdout.contains("{'inner': __CLASSIFIED__} __CLASSIFIED__"),
        "{stdout}{err}"
    );
    assert!(err.contains("E1341") && fake.count() == 1, "{err}");
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
    assert!(
        !found.contains("424242") && !found.contains("424243"),
        "a trace carried the secret"
    );
}

fn walk(d: &std::path::Path) -> Vec<std::path::PathBuf> {
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
fn a_release_of_a_field_or_an_item_reaches_the_model_inside_its_block() {
    // The release boxes the inline secret it names; it must be stored back into the field
    // or item the block named, or the body's read of that place would still be refused.
    let d = temp_dir("kora-labels-inline", "field-release");
    write_fake_config(&d, "http://127.0.0.1:9/v1");
    let source = "\
type Order:
    id: int
    total: int

test \"a field\":
    o = Order(7, classified(1200))
    with mock analyze -> Ok(\"fine\"):
        declassify o.total for default:
            r: str = analyze(o.total, \"Is this total high?\") else:
                assert False, \"refused\"
                return

test \"an item\":
    xs = [classified(5), 1]
    with mock analyze -> Ok(\"fine\"):
        declassify xs[0] for default:
            r: str = analyze(xs[0], \"Is this high?\") else:
                assert False, \"refused\"
                return
";
    std::fs::write(d.join("t.ko"), source).expect("program");
    let out = kora(&d, &["test", "--no-trace", "t.ko"], None);
    let so = text(&out.stdout);
    assert!(
        so.contains("PASS t.ko: a field"),
        "{so}{}",
        text(&out.stderr)
    );
    assert!(
        so.contains("PASS t.ko: an item"),
        "{so}{}",
        text(&out.stderr)
    );
}

/// Two secrets from different `classified(...)` sites, or a secret and unverified text's
/// number, carry different inline tags; their join (`label_small::join_ids`, memoised) must
/// keep a classified label through the fast paths, and releasing the joined value is what
/// lets it reach the model.
#[test]
fn two_inline_secrets_joined_on_the_fast_paths_stay_classified() {
    let fake = FakeProvider::start();
    let d = temp_dir("kora-labels-inline", "two-tags");
    write_fake_config(&d, &fake.openai_endpoint());
    // An unverified 7: a comparison of file text is labelled with the text's label.
    std::fs::write(d.join("u.txt"), "x").expect("input");
    let decls = "use fs\n\ndef f(a: int, b: int) -> int:\n    t = a\n    t += b\n    if t > a:\n        return t - 1\n    return a * b\n\ndef seven() -> int:\n    text: str = fs.read(\"u.txt\") else (why, kind):\n        return 0\n    return (text == \"x\") + 6\n\nn = classified(424242)\nm = classified(7)\nu = seven()\n";
    for (setup, needle) in [
        ("v = f(n, m) + f(m, n)", "848496"),
        // Classified and unverified: the join must keep the classified part.
        ("v = u + n", "424249"),
        ("v = f(u, n) * 2", "848496"),
        (
            "v = 0\nfor i in range(3):\n    v = n * 2 + m + v\nv = v % 100000000",
            "2545473",
        ),
        ("v = m\nv -= n", "-424235"),
    ] {
        fake.reset();
        let src = format!("{decls}{setup}\nprint(v, f\"{{v}}\")\nr = analyze(v, \"look\")\n");
        let out = run(&d, &src);
        let (so, err) = (text(&out.stdout), text(&out.stderr));
        assert!(
            so.contains("__CLASSIFIED__ __CLASSIFIED__") && !so.contains(needle),
            "{setup}: {so}{err}"
        );
        assert!(
            out.status.code() == Some(1)
                && err.contains("E1341")
                && err.contains("`classified(...)` at main.ko:")
                && !err.contains(needle)
                && fake.count() == 0,
            "{setup}: {err}"
        );
        let released = format!(
            "{decls}{setup}\ndeclassify v for default:\n    r = analyze(v, \"look\")\nprint(\"sent\")\n"
        );
        let out = run(&d, &released);
        let sent: String = fake.requests().iter().map(|r| r.body.to_string()).collect();
        assert!(
            out.status.success() && fake.count() == 1 && sent.contains(needle),
            "{setup}: {}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
    }
}
