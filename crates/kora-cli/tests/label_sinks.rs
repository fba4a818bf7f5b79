//! End to end: the sinks issue 25 found open, and `is` on labelled values.
//!
//! HTTP headers refuse a classified value (and an `env.get` token) unless a `declassify ...
//! for http:` block is open; a file name built from a secret's size is refused; `ask_human`
//! refuses a classified question with a message that says so; and `x is None` answers for a
//! labelled `None` exactly as for a plain one, for each label kind; `exit` refuses a status or
//! message that depends on a secret.

mod support;

use kora_testkit::FakeProvider;
use support::{kora, kora_env, temp_dir, text, write_fake_config};

const SECRET: &str = "zq-hunter-seven-x";

fn run(name: &str, fake: &FakeProvider, src: &str) -> (std::process::Output, std::path::PathBuf) {
    let d = temp_dir("kora-label-sinks", name);
    write_fake_config(&d, &fake.openai_endpoint());
    std::fs::write(d.join("main.ko"), src).expect("program");
    let env = [("KORA_TEST_TOKEN", SECRET)];
    (kora_env(&d, &["run", "main.ko"], None, &env), d)
}

fn sent_anywhere(fake: &FakeProvider, needle: &str) -> bool {
    fake.requests().iter().any(|r| {
        r.body.to_string().contains(needle) || r.headers.iter().any(|(_, v)| v.contains(needle))
    })
}

#[test]
fn http_headers_refuse_a_secret_and_an_env_token_until_released_for_http() {
    let fake = FakeProvider::start();
    let url = format!("{}/v1/ping", fake.url());
    for (name, setup) in [
        ("classified", format!("token = classified(\"{SECRET}\")")),
        (
            "env_token",
            "match env.get(\"KORA_TEST_TOKEN\"):\n    case Ok(t):\n        token = t\n    case _:\n        token = \"\"".to_string(),
        ),
        (
            "derived",
            format!("token = classified(\"{SECRET}\").upper().lower()"),
        ),
    ] {
        fake.reset();
        for call in [
            format!("http.get(\"{url}\", headers={{\"authorization\": f\"Bearer {{token}}\"}})"),
            format!("http.post(\"{url}\", \"{{}}\", headers={{\"x-key\": token}})"),
        ] {
            let src = format!("use http\nuse env\n{setup}\nr = {call}\nprint(\"sent\")\n");
            let (out, _) = run(&format!("http-{name}"), &fake, &src);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{name}: {call}\n{err}");
            assert!(
                err.contains("E1341") && err.contains("HTTP header") && err.contains("for http:"),
                "{name}: {err}"
            );
            assert!(!err.contains("hunter") && !text(&out.stdout).contains("sent"));
            assert_eq!(fake.count(), 0, "{name}: the request went out");
        }
        // Released for `http`, the credential is sent, and only in the header.
        let src = format!(
            "use http\nuse env\n{setup}\ndeclassify token for http:\n    r = http.get(\"{url}\", headers={{\"authorization\": f\"Bearer {{token}}\"}})\nprint(\"sent\")\n"
        );
        let (out, _) = run(&format!("http-released-{name}"), &fake, &src);
        assert!(
            text(&out.stdout).contains("sent"),
            "{name}: {}",
            text(&out.stderr)
        );
        let reqs = fake.requests();
        assert_eq!(reqs.len(), 1, "{name}");
        assert_eq!(
            reqs[0].header("authorization"),
            Some(format!("Bearer {SECRET}").as_str())
        );
    }
}

#[test]
fn a_release_for_http_does_not_let_the_secret_reach_a_model() {
    let fake = FakeProvider::start();
    let src = format!(
        "token = classified(\"{SECRET}\")\ndeclassify token for http:\n    a = analyze(token, \"look\")\nprint(\"sent\")\n"
    );
    let (out, _) = run("http-not-model", &fake, &src);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("E1341"));
    assert!(!sent_anywhere(&fake, "hunter"));
}

#[test]
fn a_file_name_built_from_a_secret_size_is_refused_and_no_file_appears() {
    let fake = FakeProvider::start();
    for (name, path) in [
        ("len-list", "f\"out-{len(list(secret))}.txt\""),
        ("repeat", "\"out-\" + \"x\" * len(secret) + \".txt\""),
        ("range", "f\"out-{list(range(len(secret)))[-1]}.txt\""),
        ("set", "f\"out-{len(set(secret))}.txt\""),
    ] {
        let src = format!(
            "use fs\nsecret = classified(\"{SECRET}\")\nfs.write({path}, \"x\")\nprint(\"written\")\n"
        );
        let (out, d) = run(&format!("path-{name}"), &fake, &src);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains("E1341") && err.contains("file path"),
            "{name}: {err}"
        );
        let files: Vec<String> = std::fs::read_dir(&d)
            .expect("dir")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("out-"))
            .collect();
        assert!(files.is_empty(), "{name}: {files:?}");
    }
}

#[test]
fn exit_refuses_a_status_or_message_derived_from_a_secret() {
    let fake = FakeProvider::start();
    for (name, arg) in [
        ("len", "len(secret)"),
        ("char", "ord(secret[0])"),
        ("message", "f\"bad {secret}\""),
        ("keyword", "code=len(list(secret))"),
    ] {
        let src = format!("secret = classified(\"{SECRET}\")\nexit({arg})\n");
        let (out, _) = run(&format!("exit-{name}"), &fake, &src);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(
            err.contains("E1341") && err.contains("`exit`"),
            "{name}: {err}"
        );
        assert!(!err.contains("hunter"), "{name}: {err}");
    }
    // A plain status still ends the run with it.
    let (out, _) = run("exit-plain", &fake, "exit(3)\n");
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
}

#[test]
fn ask_human_refuses_a_classified_question_in_words_that_say_why() {
    let d = temp_dir("kora-label-sinks", "ask");
    std::fs::write(
        d.join("main.ko"),
        format!("secret = classified(\"{SECRET}\")\na = ask_human(f\"Is {{secret}} right?\")\nprint(a)\n"),
    )
    .expect("program");
    let out = support::kora_input(&d, &["run", "main.ko"], None, "yes\n");
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("E1341"), "{err}");
    assert!(
        err.contains("cannot show a classified question") && err.contains("redact("),
        "{err}"
    );
    assert!(
        !err.contains("got a `str`"),
        "the old message blamed the type: {err}"
    );
    assert!(!err.contains("hunter") && !text(&out.stdout).contains("hunter"));
    // An unverified question is only text: it is shown and answered.
    std::fs::write(d.join("q.txt"), "Proceed?\n").expect("q");
    std::fs::write(
        d.join("main.ko"),
        "use fs\nmatch fs.lines(\"q.txt\"):\n    case Ok(q):\n        a = ask_human(q[0])\n        print(\"answer:\", a)\n    case _:\n        print(\"no file\")\n",
    )
    .expect("program");
    let out = support::kora_input(&d, &["run", "main.ko"], None, "yes\n");
    assert_eq!(
        text(&out.stdout),
        "Proceed?\nanswer: yes\n",
        "{}",
        text(&out.stderr)
    );
}

/// `is None`, `is not None`, `== None` and an `if ... is None:` branch, for a `None` that
/// carries `label` and for a plain one: the same answers, and the same branch.
#[test]
fn is_none_answers_the_same_for_every_label_kind() {
    let fake = FakeProvider::start();
    let probe = "def probe(m: any) -> str:\n    a = \"none\" if m is None else \"some\"\n    b = \"some\" if m is not None else \"none\"\n    c = \"none\" if m == None else \"some\"\n    branch = \"\"\n    if m is None:\n        branch = \"none\"\n    else:\n        branch = \"some\"\n    return a + b + c + branch\n";
    let cases = [
        // (kind, how the probed `None` is made)
        ("plain", "m = None"),
        ("classified", "m = classified(None)"),
        ("unverified_re_match", "use fs\nuse re\nfs.write(\"t.txt\", \"abc\\n\")\ndef read_line(p: str) -> str:\n    match fs.lines(p):\n        case Ok(ls):\n            return ls[0]\n        case _:\n            return \"\"\nm = re.match(\"zz\", read_line(\"t.txt\"))"),
        ("unverified_dict_get", "use fs\nfs.write(\"t.txt\", \"abc\\n\")\ndef read_line(p: str) -> str:\n    match fs.lines(p):\n        case Ok(ls):\n            return ls[0]\n        case _:\n            return \"\"\nm = {\"x\": 1}.get(read_line(\"t.txt\"))"),
        ("classified_dict_get", "m = {\"x\": 1}.get(classified(\"y\"))"),
        ("env_dict_get", "use env\ndef tok() -> str:\n    match env.get(\"KORA_TEST_TOKEN\"):\n        case Ok(t):\n            return t\n        case _:\n            return \"\"\nm = {\"x\": 1}.get(tok())"),
    ];
    for (kind, make) in cases {
        let src = format!("{probe}{make}\nprint(\"{kind}\", \"none\" if probe(m) == \"nonenonenonenone\" else probe(m))\nprint(\"kind\", m is None)\n");
        let (out, _) = run(&format!("is-none-{kind}"), &fake, &src);
        let so = text(&out.stdout);
        assert!(
            so.starts_with(&format!("{kind} none\n")),
            "{kind}: {so}{}",
            text(&out.stderr)
        );
    }
    // And a value that is not `None` is not, under a label.
    let src = format!("{probe}m = classified(\"\")\nprint(probe(m))\n");
    let (out, _) = run("not-none", &fake, &src);
    assert_eq!(
        text(&out.stdout),
        "somesomesomesome\n",
        "{}",
        text(&out.stderr)
    );
    let _ = kora;
}

/// Reads the first line of `in.txt` into `line`: an unverified string.
const READ: &str = "ls: list[str] = fs.lines(\"in.txt\") else:\n    exit(2)\nline = ls[0]";

#[test]
fn a_path_read_from_a_file_stays_unverified_through_str_and_repr_of_a_list() {
    // `str`/`repr` flatten: every label inside their argument goes onto the rendering. Without
    // that row, a plain list holding an unverified line would render to a plain string, and a
    // path read from a file would reach `fs.read` as if the program had written it.
    let fake = FakeProvider::start();
    for (name, expr) in [
        ("str", "str([line])[2:-2]"),
        ("repr", "repr([line])[2:-2]"),
        ("str-tuple", "str((line, 1))[2:-5]"),
    ] {
        let src = format!("use fs\n{READ}\np = {expr}\nprint(fs.read(p))\n");
        let d = temp_dir("kora-label-sinks", &format!("unverified-{name}"));
        write_fake_config(&d, &fake.openai_endpoint());
        std::fs::write(d.join("in.txt"), "secret.txt\n").expect("input");
        std::fs::write(d.join("secret.txt"), "the file's text").expect("target");
        std::fs::write(d.join("main.ko"), &src).expect("program");
        let out = kora(&d, &["run", "main.ko"], None);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains("E1343"), "{name}: {err}");
        assert!(!text(&out.stdout).contains("the file's text"), "{name}");
        // The same program with the path written in it reads the file: the refusal is the label's.
        std::fs::write(
            d.join("main.ko"),
            src.replace(READ, "line = \"secret.txt\""),
        )
        .expect("program");
        let out = kora(&d, &["run", "main.ko"], None);
        assert!(
            text(&out.stdout).contains("the file's text"),
            "{name}: {}",
            text(&out.stderr)
        );
    }
}
