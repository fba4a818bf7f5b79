//! End to end: the laundering suite of issue 25. Each program derives `v` from a secret
//! through plain data flow (no `if`): a size, a count, an order, a membership, a seeded draw.
//! It runs twice, once with the secret a plain string and once `classified(...)`: the plain
//! run shows what `v` would give away (so a case that leaks nothing cannot pass by accident),
//! and the classified run must show it in no sink: stdout, the file it writes, or the model.
//!
//! Every case names the rule of `docs/labels.md` it tests; removing that rule makes it fail.

mod support;

use kora_testkit::FakeProvider;
use support::{kora, temp_dir, text, write_fake_config};

const SECRET: &str = "zq-hunter-seven-x";

/// (name, lines that set `v` from `secret`)
const CASES: &[(&str, &str)] = &[
    // Size row: a container built from a secret's parts has a labelled size.
    ("len_list", "v = len(list(secret))"),
    ("len_set", "v = len(set(secret))"),
    ("len_tuple", "v = len(tuple(secret))"),
    ("len_enumerate", "v = len(enumerate(secret))"),
    ("len_split", "v = len(secret.split(\"-\"))"),
    ("len_comprehension", "v = len([c for c in secret])"),
    ("len_dict_comprehension", "v = len({c: 1 for c in secret})"),
    ("len_set_comprehension", "v = len({c for c in secret})"),
    ("len_zip", "v = len(list(zip(secret, secret)))"),
    ("len_reversed", "v = len(list(reversed(secret)))"),
    ("len_sorted", "v = len(sorted(secret))"),
    ("len_map", "v = len(list(map(lambda c: c, secret)))"),
    ("len_dict_zip", "v = len(dict(zip(secret, secret)))"),
    ("len_nested", "v = len([[c] for c in secret])"),
    ("len_items", "v = len(list({c: 1 for c in secret}.items()))"),
    ("len_keys", "v = len(list({c: 1 for c in secret}.keys()))"),
    ("len_appended", "xs: list[str] = []\nxs.extend(list(secret))\nv = len(xs)"),
    ("truth_not", "v = not list(secret)[5:]"),
    // A plain list holding labelled items: `not` reads every label inside (the `sized` rule).
    ("truth_not_extended", "xs: list[str] = []\nxs.extend(list(secret)[16:])\nv = not xs"),
    ("truth_bool", "v = bool(list(secret)[17:])"),
    ("hash_tuple", "v = hash(tuple(secret)) % 1000003"),
    // Repetition counts and range bounds label what they build.
    ("repeat_list", "v = len([0] * len(secret))"),
    ("repeat_str", "v = len(\"x\" * len(secret))"),
    ("repeat_joined", "v = \"\".join([\"ab\"] * len(secret))"),
    ("range_len", "v = len(range(len(secret)))"),
    ("range_last", "v = list(range(len(secret)))[-1]"),
    ("range_listed", "v = list(range(len(secret)))"),
    ("range_sum", "v = sum(range(len(secret)))"),
    ("sum_ones", "v = sum([1 for c in secret])"),
    ("sum_generator", "v = sum(1 for c in secret)"),
    // Bytes made from a secret carry its label: `bytes()` of its text or of its codes, `+`, `*`.
    ("bytes_of_text", "v = bytes(secret, \"utf-8\")"),
    ("bytes_of_codes", "v = bytes([ord(c) for c in secret])"),
    ("bytes_joined", "v = b\"<\" + bytes(secret, \"utf-8\")"),
    ("bytes_repeat_len", "v = len(b\"x\" * len(secret))"),
    ("bytes_in", "v = b\"hunter\" in bytes(secret, \"utf-8\")"),
    // Membership and set relations read what a container holds.
    ("in_set", "v = \"h\" in set(secret)"),
    ("in_dict", "v = \"h\" in {c: 1 for c in secret}"),
    ("in_list", "v = \"q\" in list(secret)"),
    ("not_in_list", "v = \"q\" not in list(secret)"),
    ("index_method", "v = list(secret).index(\"h\")"),
    ("count_method", "v = list(secret).count(\"e\")"),
    ("issubset", "v = set(secret).issubset(set(\"abcdefghijklmnopqrstuvwxyz-\"))"),
    ("issuperset", "v = set(secret).issuperset({\"z\", \"q\"})"),
    ("isdisjoint", "v = set(secret).isdisjoint({\"a\", \"b\"})"),
    ("set_equality", "v = set(secret) == set(\"zq-hunterevx\")"),
    ("list_equality", "v = list(secret) == list(\"zq-hunter-seven-x\")"),
    ("tuple_order", "v = tuple(secret) < (\"zz\",)"),
    // Orders: a sort or a pick by labelled keys labels what it places.
    ("sorted_by_secret_key", "v = sorted([\"a\", \"b\", \"c\"], key=lambda s: secret.find(s))"),
    ("sort_by_secret_key", "v = [\"q\", \"z\", \"h\"]\nv.sort(key=lambda s: secret.find(s))"),
    ("sorted_reverse_secret", "v = sorted([1, 2, 3], reverse=len(secret) > 10)"),
    ("min_by_secret_key", "v = min([\"q\", \"z\", \"h\"], key=lambda s: secret.find(s))"),
    ("max_by_secret_key", "v = max([\"q\", \"z\", \"h\"], key=lambda s: secret.find(s))"),
    ("max_of_secret_sizes", "v = max(len(list(secret)), 3)"),
    ("min_of_chars", "v = min(list(secret))"),
    ("any_list", "v = any([c == \"h\" for c in secret])"),
    ("all_list", "v = all([c != \"h\" for c in secret])"),
    ("any_generator", "v = any(c == \"h\" for c in secret)"),
    ("all_generator", "v = all(c != \"h\" for c in secret)"),
    // A seeded generator carries its seed's label.
    ("seed_randint", "random.seed(len(secret))\nv = random.randint(0, 1000000000)"),
    ("seed_random", "random.seed(ord(secret[0]))\nv = random.random()"),
    ("seed_uniform", "random.seed(ord(secret[1]))\nv = random.uniform(0.0, 1000.0)"),
    ("seed_choice", "random.seed(len(secret))\nv = random.choice([\"a1\", \"b2\", \"c3\", \"d4\", \"e5\", \"f6\"])"),
    ("seed_shuffle", "random.seed(len(secret))\nv = [1, 2, 3, 4, 5, 6, 7, 8]\nrandom.shuffle(v)"),
    // Shape row: a change in place whose effect a secret decides labels the container
    // itself, even when no labelled item lands in it (`labels/shape.rs`).
    ("shape_extend_empty", "xs: list[str] = []\nxs.extend(list(secret)[17:])\nv = len(xs)"),
    ("shape_iadd_empty", "xs: list[str] = []\nxs += list(secret)[17:]\nv = not xs"),
    ("shape_set_add", "s: set[str] = {\"z\"}\ns.add(secret[0])\nv = len(s)"),
    ("shape_set_discard", "s: set[str] = {\"z\", \"a\"}\ns.discard(secret[0])\nv = len(s)"),
    ("shape_set_ior", "s: set[str] = {\"a\"}\ns |= set(list(secret)[17:])\nv = len(s)"),
    ("shape_dict_setitem", "d: dict[str, int] = {\"z\": 1}\nd[secret[0]] = 2\nv = len(d)"),
    ("shape_dict_update", "d: dict[str, int] = {\"z\": 1}\nd.update({c: 1 for c in list(secret)[17:]})\nv = len(d)"),
    ("shape_dict_setdefault", "d: dict[str, int] = {\"z\": 1}\nd.setdefault(secret[0], 0)\nv = list(d.keys())[-1] == \"z\""),
    ("shape_insert_position", "xs = [\"a\", \"b\", \"c\", \"d\"]\nxs.insert(len(secret) % 4, \"q\")\nv = xs[1]"),
    ("shape_setitem_position", "xs = [\"a\", \"b\", \"c\", \"d\"]\nxs[len(secret) % 4] = \"q\"\nv = xs[2]"),
    ("shape_del_slice", "xs = list(range(30))\ndel xs[len(secret):]\nv = len(xs)"),
    ("shape_pop_position", "xs = [\"a\", \"b\", \"c\", \"d\"]\nxs.pop(len(secret) % 4)\nv = xs[1]"),
    ("shape_remove", "xs = [\"z\", \"a\"]\nxs.remove(secret[0])\nv = xs[0]"),
    ("shape_alias_then_append", "xs: list[str] = []\nys = xs\nxs.extend(list(secret)[17:])\nys.append(\"r\")\nv = ys[0] == \"r\""),
    ("shape_dict_pop_get", "d: dict[str, int] = {\"z\": 1}\nd.pop(secret[0], 0)\nv = d.get(\"z\")"),
    ("shape_copy_after", "xs: list[str] = []\nxs.extend(list(secret)[17:])\nv = len(list(xs) + [])"),
    // Copies: a container made from one seen through a label is seen through it, even empty.
    ("copy_tuple_empty", "v = len(tuple(list(secret)[17:]))"),
    ("copy_list_empty", "v = not list(list(secret)[17:])"),
    ("copy_sorted_empty", "v = len(sorted(list(secret)[17:]))"),
    ("copy_zip_empty", "v = len(list(zip(list(secret)[17:], [1, 2])))"),
    ("copy_filter_empty", "v = len(list(filter(lambda c: True, list(secret)[17:])))"),
    ("copy_starred_rest", "first, *rest = [0] + list(secret)[17:]\nv = len(rest)"),
    // Sizes rendered as text, and error reasons that quote the secret.
    ("size_in_fstring", "v = f\"{len(list(secret))} chars\""),
    ("size_formatted", "v = \"{:>5}\".format(len(set(secret)))"),
    ("size_divmod", "v = divmod(len(list(secret)), 5)"),
    ("size_compared", "v = len(list(secret)) > 16"),
    (
        "error_reason_length",
        "match json.parse(secret):\n    case Err(e):\n        v = len(e)\n    case Ok(x):\n        v = 0",
    ),
    (
        "error_reason_text",
        "match json.parse(secret):\n    case Err(e):\n        v = e\n    case Ok(x):\n        v = 0",
    ),
];

fn program(secret: &str, body: &str) -> String {
    format!(
        "use json\nuse fs\nuse random\nsecret = {secret}\n{body}\nprint(\"v=\", v, sep=\"\")\nfs.write(\"out.txt\", str(v))\n"
    )
}

fn line_of_v(stdout: &str) -> Option<&str> {
    stdout.lines().find(|l| l.starts_with("v="))
}

#[test]
fn no_size_count_order_or_seed_launders_a_secret_to_the_terminal_or_a_file() {
    assert!(CASES.len() >= 60, "the issue asks for at least 60 programs");
    let mut failures = Vec::new();
    for (name, body) in CASES {
        let d = temp_dir("kora-laundering", name);
        std::fs::write(d.join("main.ko"), program(&format!("\"{SECRET}\""), body))
            .expect("program");
        let plain = kora(&d, &["run", "main.ko"], None);
        let shown = text(&plain.stdout);
        let Some(leak) = line_of_v(&shown).map(|l| l.trim_start_matches("v=").to_string()) else {
            failures.push(format!(
                "{name}: the plain run printed no v=\n{}",
                text(&plain.stderr)
            ));
            continue;
        };
        std::fs::write(
            d.join("main.ko"),
            program(&format!("classified(\"{SECRET}\")"), body),
        )
        .expect("program");
        let _ = std::fs::remove_file(d.join("out.txt"));
        let out = kora(&d, &["run", "main.ko"], None);
        let stdout = text(&out.stdout);
        let file = std::fs::read_to_string(d.join("out.txt")).unwrap_or_default();
        let got = line_of_v(&stdout).unwrap_or("");
        let ok = out.status.success()
            && got.contains("__CLASSIFIED__")
            && !got.contains(&leak)
            && file.contains("__CLASSIFIED__")
            && !file.contains(&leak);
        if !ok {
            failures.push(format!(
                "{name}: plain v={leak}; classified exit {:?}\nstdout: {stdout}file: {file}\nstderr: {}",
                out.status.code(),
                text(&out.stderr)
            ));
        }
        let _ = std::fs::remove_dir_all(&d);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}

#[test]
fn no_size_count_order_or_seed_reaches_a_model() {
    let fake = FakeProvider::start();
    let mut failures = Vec::new();
    for (name, body) in CASES {
        fake.reset();
        let d = temp_dir("kora-laundering-model", name);
        write_fake_config(&d, &fake.openai_endpoint());
        let src = format!(
            "use json\nuse fs\nuse random\nsecret = classified(\"{SECRET}\")\n{body}\nr = analyze(f\"{{v}}\", \"look\")\nprint(\"sent\")\n"
        );
        std::fs::write(d.join("main.ko"), src).expect("program");
        let out = kora(&d, &["run", "main.ko"], None);
        let err = text(&out.stderr);
        let ok = out.status.code() == Some(1)
            && err.contains("E1341")
            && fake.count() == 0
            && !text(&out.stdout).contains("sent");
        if !ok {
            failures.push(format!(
                "{name}: exit {:?}, {} request(s) reached the model\n{err}",
                out.status.code(),
                fake.count()
            ));
        }
        let _ = std::fs::remove_dir_all(&d);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n---\n"));
}
