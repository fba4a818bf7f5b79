//! Packages end to end through `kora`: path and git dependencies made by the test itself
//! (local repositories, `file://` URLs), grants refused with the package named, the lockfile
//! and both checksum logs, and the commands that edit them. `KORA_HOME` is a temp folder, so
//! no test touches the real home.

mod support;

use std::path::{Path, PathBuf};

use support::packages::{kora, ok, package, url, weather_repo, write};
use support::temp_dir;

/// A workspace: `app/` (the program) and a `greet` package beside it.
fn path_workspace(name: &str) -> (PathBuf, PathBuf) {
    let root = temp_dir("kora-pkg", name);
    package(
        &root.join("greet"),
        "greet",
        "",
        &[
            (
                "lib.ko",
                "type Config:\n    greeting: str\n\n\ndef hello(name: str) -> str:\n    return f\"{DEFAULT.greeting}, {name}\"\n\n\nDEFAULT = Config(greeting=\"hello\")\n",
            ),
            ("extra.ko", "def shout(s: str) -> str:\n    return s.upper() + \"!\"\n"),
        ],
    );
    write(
        &root.join("app/kora.toml"),
        "[dependencies]\ngreet = { path = \"../greet\" }\n",
    );
    (root.clone(), root.join("app"))
}

#[test]
fn a_path_dependency_runs_checks_and_tests() {
    let (root, app) = path_workspace("path");
    write(
        &app.join("main.ko"),
        "use greet\nuse greet.extra\n\n\ntype Settings:\n    loud: bool\n\n\nc = Settings(loud=True)\nprint(greet.hello(\"ana\"))\nprint(extra.shout(\"hi\"), c.loud)\n\n\ntest \"greets\":\n    assert greet.hello(\"bo\") == \"hello, bo\"\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "hello, ana\nHI! True\n");
    ok(&kora(&app, &root, &["check", "main.ko"]));
    let t = kora(&app, &root, &["test", "main.ko"]);
    ok(&t);
    assert!(t.stdout.contains("1 passed"), "{}", t.stdout);
}

#[test]
fn names_resolve_against_the_manifest_that_wrote_them() {
    let root = temp_dir("kora-pkg", "scoped");
    // `util` means two different packages to the program and to `mid`.
    package(
        &root.join("util_a"),
        "util",
        "",
        &[("lib.ko", "WHO = \"a\"\n")],
    );
    package(
        &root.join("util_b"),
        "util",
        "",
        &[("lib.ko", "WHO = \"b\"\n")],
    );
    package(
        &root.join("mid"),
        "mid",
        "[dependencies]\nutil = { path = \"../util_b\" }\n",
        &[(
            "lib.ko",
            "use util\n\n\ndef who() -> str:\n    return util.WHO\n",
        )],
    );
    write(
        &root.join("app/kora.toml"),
        "[dependencies]\nutil = { path = \"../util_a\" }\nmid = { path = \"../mid\" }\n",
    );
    write(
        &root.join("app/main.ko"),
        "use util\nuse mid\n\nprint(util.WHO, mid.who())\n",
    );
    let r = kora(&root.join("app"), &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "a b\n");
    // The program cannot reach its dependency's dependency.
    write(
        &root.join("app/kora.toml"),
        "[dependencies]\nmid = { path = \"../mid\" }\n",
    );
    write(&root.join("app/main.ko"), "use mid.util\n");
    let r = kora(&root.join("app"), &root, &["check", "main.ko"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn an_unused_dependency_is_warned_about_and_never_fetched() {
    let (root, app) = path_workspace("unused");
    let repo = root.join("never");
    write(
        &app.join("kora.toml"),
        &format!(
            "[dependencies]\ngreet = {{ path = \"../greet\" }}\nnever = {{ git = \"file://{}\", tag = \"v1\" }}\n",
            repo.display()
        ),
    );
    write(
        &app.join("main.ko"),
        "use greet\n\nprint(greet.hello(\"x\"))\n",
    );
    let r = kora(&app, &root, &["check", "main.ko"]);
    ok(&r);
    assert!(
        r.stderr.contains("kora.toml:3: dependency `never`")
            && !r.stderr.contains("`greet` is declared")
            && r.stderr
                .contains("`never` is declared but no `use` reaches it"),
        "{}",
        r.stderr
    );
    ok(&kora(&app, &root, &["run", "main.ko"]));
    assert!(!root.join("kora/cache").exists(), "nothing was fetched");
}

#[test]
fn a_bad_manifest_names_file_line_and_key() {
    let (root, app) = path_workspace("badmanifest");
    write(
        &app.join("kora.toml"),
        "[dependencies]\ngreet = { path = \"../greet\", postinstall = \"curl x | sh\" }\n",
    );
    write(&app.join("main.ko"), "use greet\n");
    let r = kora(&app, &root, &["check", "main.ko"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("kora.toml:2") && r.stderr.contains("dependencies.greet.postinstall"),
        "{}",
        r.stderr
    );
    write(
        &app.join("kora.toml"),
        "[dependencies]\njson = { path = \"../greet\" }\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("standard-library module"), "{}", r.stderr);
}

/// `app/` granting `snoop` the folder `./data`; `snoop` uses `leaf`, granted nothing.
fn grants_workspace(name: &str, leaf_grant: &str) -> (PathBuf, PathBuf) {
    let root = temp_dir("kora-pkg", name);
    package(
        &root.join("leaf"),
        "leaf",
        "",
        &[("lib.ko", "use fs\n\n\ndef peek(p: str) -> str:\n    text: str = fs.read(p) else (why, kind):\n        return why\n    return text\n")],
    );
    package(
        &root.join("snoop"),
        "snoop",
        &format!("[dependencies]\nleaf = {{ path = \"../leaf\"{leaf_grant} }}\n"),
        &[(
            "lib.ko",
            "use fs\nuse http\nuse leaf\n\n\ndef peek(p: str) -> str:\n    text: str = fs.read(p) else (why, kind):\n        return why\n    return text\n\n\ndef call() -> str:\n    match http.get(\"http://127.0.0.1:9/x\", timeout=1.0):\n        case Ok(r):\n            return \"reached\"\n        case Err(why):\n            return why\n\n\ndef via_leaf(p: str) -> str:\n    return leaf.peek(p)\n",
        )],
    );
    let app = root.join("app");
    write(
        &app.join("kora.toml"),
        "[dependencies]\nsnoop = { path = \"../snoop\", grants = { fs = [\"./data\"] } }\n",
    );
    write(&app.join("data/ok.txt"), "fine");
    write(&app.join("secret.txt"), "password");
    (root, app)
}

#[test]
fn a_package_is_confined_to_its_grants_directly_and_through_its_dependency() {
    let (root, app) = grants_workspace("grants", "");
    write(
        &app.join("main.ko"),
        "use snoop\n\nprint(snoop.peek(\"data/ok.txt\"))\nprint(snoop.peek(\"secret.txt\"))\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "fine\n");
    assert!(
        r.stderr.contains("package `snoop`")
            && r.stderr.contains("fs.read")
            && r.stderr.contains("fs = ["),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("password") && !r.stderr.contains("password"));
    // `../` does not climb out of a granted folder.
    write(
        &app.join("main.ko"),
        "use snoop\n\nprint(snoop.peek(\"data/../secret.txt\"))\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    // No `net`: refused before a socket is opened.
    write(&app.join("main.ko"), "use snoop\n\nprint(snoop.call())\n");
    let r = kora(&app, &root, &["run", "main.ko"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("package `snoop`") && r.stderr.contains("net = [\"127.0.0.1\"]"),
        "{}",
        r.stderr
    );
    // Through its own dependency, granted nothing: the leaf is named.
    write(
        &app.join("main.ko"),
        "use snoop\n\nprint(snoop.via_leaf(\"data/ok.txt\"))\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("package `leaf`") && r.stderr.contains("fs.read"),
        "{}",
        r.stderr
    );
    // The program itself keeps its authority.
    write(
        &app.join("main.ko"),
        "use fs\n\ntext: str = fs.read(\"secret.txt\") else:\n    exit(3)\nprint(text)\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "password\n");
}

#[test]
fn a_parent_passes_on_at_most_what_it_holds() {
    let (root, app) = grants_workspace("widen", ", grants = { net = [\"evil.example\"] }");
    write(
        &app.join("main.ko"),
        "use snoop\n\nprint(snoop.peek(\"data/ok.txt\"))\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("does not hold itself") && r.stderr.contains("evil.example"),
        "{}",
        r.stderr
    );
}

#[test]
fn one_package_granted_two_ways_is_refused_at_load() {
    let (root, app) = grants_workspace("conflict", "");
    write(
        &app.join("kora.toml"),
        "[dependencies]\nsnoop = { path = \"../snoop\", grants = { fs = [\"./data\"] } }\nleaf = { path = \"../leaf\", grants = { fs = [\"./data\"] } }\n",
    );
    write(
        &app.join("main.ko"),
        "use leaf\nuse snoop\n\nprint(leaf.peek(\"data/ok.txt\"))\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("granted two ways"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "nothing ran");
}

#[test]
fn the_example_workspace_runs() {
    let app = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/packages/app");
    let home = temp_dir("kora-pkg", "example");
    let r = kora(&app, &home, &["run", "main.ko"]);
    ok(&r);
    let want = std::fs::read_to_string(app.join("main.out")).expect("main.out");
    assert_eq!(r.stdout, want);
    ok(&kora(&app, &home, &["test", "main.ko"]));
}

#[test]
fn a_link_inside_a_granted_folder_is_judged_by_where_it_leads() {
    let (root, app) = grants_workspace("symlink", "");
    std::os::unix::fs::symlink(app.join("secret.txt"), app.join("data/link.txt")).expect("link");
    std::os::unix::fs::symlink(&app, app.join("data/up")).expect("link");
    std::os::unix::fs::symlink(app.join("data/ok.txt"), app.join("data/inside.txt")).expect("link");
    for path in [
        "data/link.txt",
        "data/up/secret.txt",
        "data/up/data/../secret.txt",
    ] {
        write(
            &app.join("main.ko"),
            &format!("use snoop\n\nprint(snoop.peek(\"{path}\"))\n"),
        );
        let r = kora(&app, &root, &["run", "main.ko"]);
        assert_eq!(r.code, 1, "{path}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("package `snoop`") && r.stderr.contains("secret.txt"),
            "{path}: {}",
            r.stderr
        );
        assert!(!r.stdout.contains("password") && !r.stderr.contains("password"));
    }
    // A link that stays inside the grant is followed as usual.
    write(
        &app.join("main.ko"),
        "use snoop\n\nprint(snoop.peek(\"data/inside.txt\"))\nprint(snoop.peek(\"data/up/data/ok.txt\"))\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "fine\nfine\n");
}

#[test]
fn test_blocks_are_confined_as_runs_are() {
    let (root, app) = grants_workspace("testgrants", "");
    write(
        &app.join("main_test.ko"),
        "use snoop\n\n\ntest \"granted\":\n    assert snoop.peek(\"data/ok.txt\") == \"fine\"\n\n\ntest \"outside\":\n    assert snoop.peek(\"secret.txt\") == \"password\"\n\n\ntest \"through its dependency\":\n    assert snoop.via_leaf(\"data/ok.txt\") == \"fine\"\n",
    );
    let r = kora(&app, &root, &["test", "main_test.ko"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("PASS main_test.ko: granted"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("FAIL main_test.ko: outside"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("FAIL main_test.ko: through its dependency"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("package `snoop` may not")
            && r.stdout.contains("package `leaf` may not")
            && r.stdout.contains("1 passed, 2 failed"),
        "{}",
        r.stdout
    );
}

#[test]
fn add_and_remove_edit_one_entry_and_keep_the_rest_of_the_manifest() {
    let (root, app) = path_workspace("add");
    let before = "# the app's settings\n[fmt]\nline_length = 100 # wide\n";
    write(&app.join("kora.toml"), before);
    write(
        &app.join("main.ko"),
        "use greet\n\nprint(greet.hello(\"ana\"))\n",
    );
    let r = kora(&app, &root, &["add", "greet", "--path", "../greet"]);
    ok(&r);
    let toml = std::fs::read_to_string(app.join("kora.toml")).expect("kora.toml");
    assert!(toml.starts_with(before), "{toml}");
    assert!(
        toml.contains("[dependencies]\ngreet = { path = \"../greet\" }\n"),
        "{toml}"
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "hello, ana\n");
    // Grants and a git source; a key given twice collects a list.
    let repo = root.join("weather");
    weather_repo(&repo, "sunny");
    let r = kora(
        &app,
        &root,
        &[
            "add",
            "weather",
            "--git",
            &url(&repo),
            "--tag",
            "v1",
            "--grant",
            "net=api.example.com",
            "--grant",
            "net=b.example",
            "--grant",
            "sql",
        ],
    );
    ok(&r);
    let toml = std::fs::read_to_string(app.join("kora.toml")).expect("kora.toml");
    assert!(
        toml.contains(&format!(
            "weather = {{ git = \"{}\", tag = \"v1\", grants = {{ net = [\"api.example.com\", \"b.example\"], sql = true }} }}",
            url(&repo)
        )),
        "{toml}"
    );
    write(
        &app.join("main.ko"),
        "use greet\nuse weather\n\nprint(greet.hello(weather.today()))\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "hello, sunny\n");
    assert!(std::fs::read_to_string(app.join("kora.lock"))
        .expect("lock")
        .contains("name = \"weather\""));
    // Bad input changes nothing and says why.
    let toml = std::fs::read_to_string(app.join("kora.toml")).expect("kora.toml");
    for (args, why) in [
        (
            &["add", "json", "--path", "../greet"][..],
            "standard-library module",
        ),
        (
            &["add", "x", "--path", "../x", "--grant", "disk=/"][..],
            "unknown grant `disk`",
        ),
        (
            &["add", "x", "--path", "../x", "--grant", "sql=yes"][..],
            "all or nothing",
        ),
        (
            &["add", "x", "--path", "../x", "--grant", "fs"][..],
            "needs an item",
        ),
        (&["remove", "nope"][..], "declares no dependency `nope`"),
    ] {
        let r = kora(&app, &root, args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.stderr);
        assert!(r.stderr.contains(why), "{args:?}: {}", r.stderr);
        assert_eq!(
            std::fs::read_to_string(app.join("kora.toml")).expect("kora.toml"),
            toml,
            "{args:?} changed nothing"
        );
    }
    let r = kora(&app, &root, &["add", "x", "--tag", "v1"]);
    assert_eq!(r.code, 2, "clap refuses a source-less add: {}", r.stderr);
    // Remove takes the entry and its lock entry, nothing else.
    ok(&kora(&app, &root, &["remove", "weather"]));
    let toml = std::fs::read_to_string(app.join("kora.toml")).expect("kora.toml");
    assert!(
        toml.starts_with(before) && toml.contains("greet = ") && !toml.contains("weather"),
        "{toml}"
    );
    assert!(!std::fs::read_to_string(app.join("kora.lock"))
        .expect("lock")
        .contains("weather"));
    let r = kora(&app, &root, &["check", "main.ko"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("`weather`"), "{}", r.stderr);
}

#[test]
fn audit_deps_lists_each_package_its_grants_and_declassify_sites() {
    let (root, app) = grants_workspace("auditdeps", "");
    write(
        &root.join("leaf/lib.ko"),
        "use fs\nuse env\n\n\ndef peek(p: str) -> str:\n    key: str = env.get(\"K\") else:\n        return \"\"\n    declassify key for fast:\n        return key\n    text: str = fs.read(p) else (why, kind):\n        return why\n    return text\n",
    );
    write(
        &app.join("main.ko"),
        "use snoop\n\nprint(snoop.via_leaf(\"data/ok.txt\"))\n",
    );
    let r = kora(&app, &root, &["audit", "--deps", "main.ko"]);
    ok(&r);
    let kora_toml = std::fs::canonicalize(app.join("kora.toml")).expect("canon");
    assert!(
        r.stdout.contains("package snoop (")
            && r.stdout
                .contains(&format!("granted by {}:2: fs = [", kora_toml.display()))
            && r.stdout.contains("package leaf (")
            && r.stdout.contains(": nothing")
            && r.stdout.contains("lib.ko:8:5: declassify key for fast")
            && r.stdout.contains("2 packages reached"),
        "{}",
        r.stdout
    );
    let r = kora(&app, &root, &["audit", "--deps", "--json", "main.ko"]);
    ok(&r);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("json");
    let rows = v.as_array().expect("array");
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["package"], "leaf");
    assert_eq!(rows[0]["declassify"][0]["sink"], "fast");
    assert_eq!(rows[1]["package"], "snoop");
    assert!(rows[1]["declassify"].as_array().expect("list").is_empty());
}

#[test]
fn records_are_namespaced_per_package() {
    let root = temp_dir("kora-pkg", "records");
    package(
        &root.join("a"),
        "a",
        "",
        &[(
            "lib.ko",
            "type Config:\n    name: str\n\n\ndef make() -> Config:\n    return Config(name=\"a\")\n\n\ndef show(c: Config) -> str:\n    return \"a:\" + c.name\n",
        )],
    );
    package(
        &root.join("b"),
        "b",
        "",
        &[(
            "lib.ko",
            "type Config:\n    size: int\n\n\ndef make() -> Config:\n    return Config(size=2)\n",
        )],
    );
    let app = root.join("app");
    write(
        &app.join("kora.toml"),
        "[dependencies]\na = { path = \"../a\" }\nb = { path = \"../b\" }\n",
    );
    write(
        &app.join("main.ko"),
        "use a\nuse b\n\n\ntype Config:\n    flag: bool\n\n\nx = a.Config(name=\"direct\")\nprint(a.show(x), b.make().size, Config(flag=True).flag, a.make().name)\n",
    );
    ok(&kora(&app, &root, &["check", "main.ko"]));
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "a:direct 2 True a\n");
    // `a.Config` is package a's record, with a's fields, not b's or the program's.
    write(
        &app.join("main.ko"),
        "use a\nuse b\n\nx = a.Config(size=1)\n",
    );
    let r = kora(&app, &root, &["check", "main.ko"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("size"), "{}", r.stderr);
}

#[test]
fn a_package_record_named_in_an_annotation_is_checked() {
    let root = temp_dir("kora-pkg", "annotations");
    package(
        &root.join("a"),
        "a",
        "",
        &[(
            "lib.ko",
            "type Config:\n    name: str\n\n\ndef make() -> Config:\n    return Config(name=\"a\")\n",
        )],
    );
    package(
        &root.join("b"),
        "b",
        "",
        &[(
            "lib.ko",
            "type Config:\n    size: int\n\n\ndef make() -> Config:\n    return Config(size=2)\n",
        )],
    );
    let app = root.join("app");
    write(
        &app.join("kora.toml"),
        "[dependencies]\na = { path = \"../a\" }\nb = { path = \"../b\" }\n",
    );
    write(
        &app.join("main.ko"),
        "use a\nuse b\n\n\ndef name_of(c: a.Config) -> str:\n    return c.name\n\n\ndef both() -> list[a.Config]:\n    return [a.make(), a.Config(name=\"x\")]\n\n\nc: a.Config = a.make()\nprint(name_of(c), [x.name for x in both()], b.make().size)\n",
    );
    ok(&kora(&app, &root, &["check", "main.ko"]));
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "a ['a', 'x'] 2\n");
    // Wrong types are errors that name both records fully, in check and in run.
    for (program, want) in [
        ("c: a.Config = 3\n", "expected `a.Config`, found `int`"),
        (
            "def f(c: a.Config) -> str:\n    return c.name\n\n\nprint(f(b.make()))\n",
            "expected `a.Config`, found `b.Config`",
        ),
        (
            "xs: list[a.Config] = [b.make()]\n",
            "expected `list[a.Config]`, found `list[b.Config]`",
        ),
        (
            "def g() -> b.Config:\n    return a.make()\n",
            "expected `b.Config`, found `a.Config`",
        ),
    ] {
        write(
            &app.join("main.ko"),
            &format!("use a\nuse b\n\n\n{program}"),
        );
        for cmd in ["check", "run"] {
            let r = kora(&app, &root, &[cmd, "main.ko"]);
            assert_eq!(r.code, 2, "{cmd} {program}: {}", r.stderr);
            assert!(r.stderr.contains(want), "{cmd} {program}: {}", r.stderr);
            assert!(r.stdout.is_empty(), "nothing ran");
        }
    }
    // An unknown record of a bound package is named, with the near miss offered.
    write(&app.join("main.ko"), "use a\n\nc: a.Confg = a.make()\n");
    let r = kora(&app, &root, &["check", "main.ko"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("unknown type `a.Confg`")
            && r.stderr.contains("main.ko:3:4")
            && r.stderr.contains("did you mean `a.Config`?"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_tool_a_model_calls_is_confined_to_its_packages_grants() {
    use kora_testkit::{Behaviour, FakeProvider};
    let (root, app) = grants_workspace("tool", "");
    write(
        &root.join("snoop/tools.ko"),
        "use fs\n\nKNOWN = [\"data/ok.txt\", \"secret.txt\"]\n\n\ntool peek(path: str) -> str:\n    \"Reads a file.\"\n    if path in KNOWN:\n        text: str = fs.read(path) else (why, kind):\n            return why\n        return text\n    return \"unknown file\"\n",
    );
    let fake = FakeProvider::start();
    let call = |path: &str| {
        Behaviour::ToolCalls(vec![(
            "peek".to_string(),
            serde_json::json!({ "path": path }),
        )])
    };
    let answer = || Behaviour::Answer(r#"{"ok": {"word": "done"}, "uncertain": null}"#.into());
    fake.push(call("data/ok.txt"));
    fake.push(answer());
    fake.push(call("secret.txt"));
    fake.push(answer());
    support::write_config(
        &app,
        &fake.openai_endpoint(),
        Some("openai"),
        "max_retries = 0\n",
    );
    let manifest = std::fs::read_to_string(app.join("kora.toml")).expect("kora.toml");
    write(
        &app.join("kora.toml"),
        &format!("{manifest}\n[dependencies]\nsnoop = {{ path = \"../snoop\", grants = {{ fs = [\"./data\"] }} }}\n"),
    );
    write(
        &app.join("main.ko"),
        "use snoop.tools\n\n\ntype Done:\n    word: str\n\n\nfor f in [\"granted\", \"not granted\"]:\n    r: Result[Done] = analyze(f, \"Read it.\", tools=[tools.peek])\n    print(f, r)\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    let reqs = fake.requests();
    let sent: Vec<String> = reqs
        .iter()
        .map(|q| {
            q.tool_results()
                .iter()
                .map(|v| v.to_string())
                .collect::<String>()
        })
        .collect();
    let everything = format!("{}{}{}", r.stdout, r.stderr, sent.join("\n"));
    // The granted read reached the model; the other stopped the run with the package named.
    assert_eq!(r.code, 1, "{everything}");
    assert_eq!(r.stdout, "granted Ok(Done(word='done'))\n", "{everything}");
    assert!(sent.iter().any(|s| s.contains("fine")), "{everything}");
    assert!(!everything.contains("password"), "{everything}");
    assert!(
        r.stderr.contains("E1101") && r.stderr.contains("package `snoop` may not `fs.read`"),
        "{everything}"
    );
}

#[test]
fn sql_and_mcp_are_granted_like_files_and_sockets() {
    let root = temp_dir("kora-pkg", "sqlmcp");
    package(
        &root.join("pk"),
        "pk",
        "",
        &[(
            "lib.ko",
            "use sql\nuse mcp adv as adv\n\n\ndef store() -> str:\n    db: sql.Db = sql.open(\":memory:\") else (why, kind):\n        return \"no db\"\n    return \"opened\"\n\n\ndef poke() -> str:\n    r: str = adv.ping(x=\"hi\") else (why, kind):\n        return \"failed: \" + why\n    return r\n",
        )],
    );
    let app = root.join("app");
    let adversary = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/adversary.py");
    let manifest = |grants: &str| {
        format!(
            "[mcp.adv]\ncommand = \"python3\"\nargs = [{:?}, \"ok\", {:?}]\n\n[dependencies]\npk = {{ path = \"../pk\"{grants} }}\n",
            adversary.display().to_string(),
            root.join("state").display().to_string()
        )
    };
    write(&app.join("kora.toml"), &manifest(""));
    for (call, effect, grant) in [
        ("store", "sql.open", "sql = true"),
        ("poke", "mcp adv.ping", "mcp = [\"adv\"]"),
    ] {
        write(
            &app.join("main.ko"),
            &format!("use pk\n\nprint(pk.{call}())\n"),
        );
        let r = kora(&app, &root, &["run", "main.ko"]);
        assert_eq!(r.code, 1, "{call}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr
                .contains(&format!("package `pk` may not `{effect}`"))
                && r.stderr.contains(&format!("lacks the grant `{grant}`")),
            "{call}: {}",
            r.stderr
        );
    }
    write(
        &app.join("kora.toml"),
        &manifest(", grants = { sql = true, mcp = [\"adv\"] }"),
    );
    write(
        &app.join("main.ko"),
        "use pk\n\nprint(pk.store())\nprint(pk.poke())\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "opened\npong hi #1\n");
}
