//! Packages end to end through `kora`: path and git dependencies made by the test itself
//! (local repositories, `file://` URLs), grants refused with the package named, the lockfile
//! and both checksum logs, and the commands that edit them. `KORA_HOME` is a temp folder, so
//! no test touches the real home.

mod support;

use std::path::{Path, PathBuf};

use support::{collect, kora_cmd, temp_dir, Run};

/// `kora ARGS` in `cwd`, with `KORA_HOME` (and `HOME`) inside `home`.
fn kora(cwd: &Path, home: &Path, args: &[&str]) -> Run {
    collect(
        kora_cmd()
            .args(args)
            .current_dir(cwd)
            .env("KORA_HOME", home.join("kora"))
            .env("HOME", home.join("home")),
        None,
    )
}

fn write(path: &Path, text: &str) {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).expect("folder");
    }
    std::fs::write(path, text).expect("write");
}

/// A package folder: `kora.toml` with `[package]` (plus `extra` lines) and its files.
fn package(dir: &Path, name: &str, extra: &str, files: &[(&str, &str)]) {
    write(
        &dir.join("kora.toml"),
        &format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\n{extra}"),
    );
    for (f, text) in files {
        write(&dir.join(f), text);
    }
}

fn ok(r: &Run) {
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
}

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

/// Runs `git ARGS` in `dir`, as a fixed author, and insists it worked.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "tag.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn have_git() -> bool {
    std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok()
}

/// A repository holding package `weather` whose `lib.ko` says `says`, tagged `v1`.
fn weather_repo(dir: &Path, says: &str) -> String {
    package(
        dir,
        "weather",
        "",
        &[(
            "lib.ko",
            &format!("def today() -> str:\n    return \"{says}\"\n"),
        )],
    );
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", says]);
    git(dir, &["tag", "-f", "v1"]);
    git(dir, &["rev-parse", "HEAD"])
}

#[test]
fn a_git_dependency_is_locked_and_a_moved_tag_changes_nothing_until_the_logs_refuse_it() {
    if !have_git() {
        eprintln!("skipped: no git");
        return;
    }
    let root = temp_dir("kora-pkg", "git");
    let repo = root.join("weather");
    let first = weather_repo(&repo, "sunny");
    let app = root.join("app");
    write(
        &app.join("kora.toml"),
        &format!(
            "[dependencies]\nweather = {{ git = \"file://{}\", tag = \"v1\" }}\n",
            repo.display()
        ),
    );
    write(
        &app.join("main.ko"),
        "use weather\n\nprint(weather.today())\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "sunny\n");
    let lock = std::fs::read_to_string(app.join("kora.lock")).expect("kora.lock written");
    assert!(
        lock.contains(&first) && lock.contains("tree = \"sha256:"),
        "{lock}"
    );
    let sums = std::fs::read_to_string(app.join("kora.sums")).expect("kora.sums written");
    assert!(sums.contains(&first) && sums.contains("tag:v1"), "{sums}");
    assert!(
        root.join("kora/sums/kora.sums").is_file(),
        "the machine's log"
    );

    // The tag is force-pushed to another commit: the locked commit is still what runs.
    write(
        &repo.join("lib.ko"),
        "def today() -> str:\n    return \"stolen\"\n",
    );
    git(&repo, &["commit", "-q", "-am", "evil"]);
    git(&repo, &["tag", "-f", "v1"]);
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "sunny\n");
    // Even from a cold cache.
    std::fs::remove_dir_all(root.join("kora/cache")).expect("cache removed");
    git(&repo, &["tag", "keep", &first]);
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "sunny\n");

    // The lockfile deleted: the moved tag is fetched and refused by the project's log...
    std::fs::remove_file(app.join("kora.lock")).expect("lock removed");
    let r = kora(&app, &root, &["run", "main.ko"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("the tag was moved") && r.stderr.contains("kora.sums"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("stolen"));
    // ...and, in a fresh project with no log of its own, by the machine's.
    let other = root.join("other");
    std::fs::create_dir_all(&other).expect("dir");
    std::fs::copy(app.join("kora.toml"), other.join("kora.toml")).expect("copy");
    std::fs::copy(app.join("main.ko"), other.join("main.ko")).expect("copy");
    let r = kora(&other, &root, &["run", "main.ko"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("the tag was moved") && r.stderr.contains("sums"),
        "{}",
        r.stderr
    );
    assert!(
        !other.join("kora.lock").exists(),
        "nothing refused is locked"
    );
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
