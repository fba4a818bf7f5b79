//! End to end: scripts that behave like scripts. `exit(...)` sets the status (and a durable
//! run journals it as its end), `kora test` loads each file as a module, `kora.toml` is found
//! by walking up from the program's folder however the path is written, and `--record`
//! without an API key stops before the program runs.

mod support;

use std::path::{Path, PathBuf};

use support::Run;

fn dir(name: &str) -> PathBuf {
    support::temp_dir("kora-scripts", name)
}

fn kora(d: &Path, args: &[&str]) -> Run {
    support::run_in(d, args)
}

#[test]
fn exit_sets_the_status_and_prints_its_message_on_stderr() {
    let d = dir("exit");
    let cases: &[(&str, i32, &str, &str)] = &[
        ("print('a')\nexit(3)\nprint('b')\n", 3, "a\n", ""),
        ("print('a')\nexit()\nprint('b')\n", 0, "a\n", ""),
        ("exit(None)\n", 0, "", ""),
        ("exit(True)\n", 1, "", ""),
        ("exit(-1)\n", 255, "", ""),
        ("exit(256 + 7)\n", 7, "", ""),
        ("print('x')\nexit('no input given')\n", 1, "x\n", "no input given\n"),
        ("exit(code=4)\n", 4, "", ""),
        ("def stop(n: int) -> None:\n    exit(n)\n\nfor i in range(5):\n    print(i)\n    if i == 2:\n        stop(9)\n", 9, "0\n1\n2\n", ""),
        ("exit(['not', 'a', 'code'])\n", 1, "", "['not', 'a', 'code']\n"),
    ];
    for (i, (src, code, out, err)) in cases.iter().enumerate() {
        let name = format!("p{i}.ko");
        std::fs::write(d.join(&name), src).expect("program");
        let r = kora(&d, &["run", &name]);
        assert_eq!(r.code, *code, "{src}: {}", r.stderr);
        assert_eq!(r.stdout, *out, "{src}");
        assert_eq!(r.stderr, *err, "{src}");
    }
    // The same programs under CPython end the same way.
    if let Ok(py) = std::process::Command::new("python3")
        .arg("--version")
        .output()
    {
        if py.status.success() {
            for (i, (src, code, out, err)) in cases.iter().enumerate() {
                let name = format!("p{i}.ko");
                let p = std::process::Command::new("python3")
                    .arg(d.join(&name))
                    .output()
                    .expect("python3 runs");
                assert_eq!(p.status.code(), Some(*code), "python3 on {src}");
                assert_eq!(support::text(&p.stdout), *out, "python3 on {src}");
                assert_eq!(support::text(&p.stderr), *err, "python3 on {src}");
            }
        }
    }
}

#[test]
fn exit_from_the_else_of_a_top_level_binding_is_checked_and_works() {
    let d = dir("exit-else");
    let src = "def load(p: str) -> Result[str]:\n    return Err(p + ' is missing')\n\ntext: str = load('claims.csv') else (why, kind):\n    exit(f'cannot start: {why}')\nprint(text)\n";
    std::fs::write(d.join("main.ko"), src).expect("program");
    let r = kora(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stderr, "cannot start: claims.csv is missing\n");
    // Without a way out, the `else:` is refused before running.
    std::fs::write(
        d.join("bad.ko"),
        "def load(p: str) -> Result[str]:\n    return Err(p)\n\ntext: str = load('x') else:\n    print('no')\n",
    )
    .expect("program");
    let r = kora(&d, &["run", "bad.ko"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("E0301") && r.stderr.contains("exit("),
        "{}",
        r.stderr
    );
}

#[test]
fn a_durable_run_that_exits_is_journaled_as_finished() {
    let d = dir("exit-durable");
    std::fs::write(
        d.join("main.ko"),
        "use fs\nfs.write('out.txt', 'written once')\nprint('wrote')\nexit('done early')\nprint('never')\n",
    )
    .expect("program");
    let r = kora(&d, &["run", "--durable", "--run-id", "r1", "main.ko"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout, "wrote\n");
    assert!(r.stderr.ends_with("done early\n"), "{}", r.stderr);
    let runs = kora(&d, &["runs"]);
    assert!(
        runs.stdout.contains("r1") && runs.stdout.contains("finished"),
        "{}",
        runs.stdout
    );
    let again = kora(&d, &["run", "--resume", "r1"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        again.stderr.contains("already finished"),
        "{}",
        again.stderr
    );
    let journal = std::fs::read_to_string(d.join(".kora/runs/r1/journal.jsonl"))
        .or_else(|_| {
            // The journal's file name belongs to the durable layer; find it by content.
            std::fs::read_dir(d.join(".kora/runs/r1"))
                .expect("run folder")
                .flatten()
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .find(|t| t.contains("finished"))
                .ok_or(())
        })
        .expect("journal");
    assert!(journal.contains("exit(1) done early"), "{journal}");
}

#[test]
fn the_durable_example_refuses_a_missing_argument_with_its_usage() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let r = support::collect(
        support::kora_cmd()
            .args(["run", "--replay"])
            .arg(root.join("12_durable.ko")),
        None,
    );
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr.contains("usage: kora run --durable"),
        "{}",
        r.stderr
    );
}

#[test]
fn kora_test_loads_each_file_as_a_module() {
    let d = dir("module");
    std::fs::write(
        d.join("triage_bot.ko"),
        r#"def summary(text: str) -> str:
    s: str = analyze(text, "Summarise.") else (why, kind):
        return kind
    return s

if __name__ == "__main__":
    print("the script part ran")
    print(summary("a real, paid call"))

test "the module's name is its stem":
    assert __name__ == "triage_bot", __name__

test "a mock answers without the script part calling a model first":
    with mock analyze -> Ok("short"):
        assert summary("x") == "short"
"#,
    )
    .expect("program");
    let r = kora(&d, &["test", "--no-trace", "triage_bot.ko"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("2 passed, 0 failed"), "{}", r.stdout);
    assert!(!r.stdout.contains("script part ran"), "{}", r.stdout);
    // `kora run` still runs it as the main file.
    std::fs::write(
        d.join("named.ko"),
        "print(__name__)\ntest \"t\":\n    assert True\n",
    )
    .expect("program");
    assert_eq!(kora(&d, &["run", "named.ko"]).stdout, "__main__\n");
}

#[test]
fn kora_test_reports_an_exit_and_an_unrecorded_top_level_call_with_the_fix() {
    let d = dir("module-fail");
    std::fs::write(
        d.join("quits.ko"),
        "exit('stop')\n\ntest \"t\":\n    assert True\n",
    )
    .expect("program");
    let r = kora(&d, &["test", "--no-trace", "quits.ko"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("`exit(1)` was called"), "{}", r.stdout);
    assert!(
        r.stdout.contains("__name__ == \"__main__\""),
        "{}",
        r.stdout
    );
    std::fs::write(
        d.join("asks.ko"),
        "s: str = analyze(\"x\", \"Summarise.\") else:\n    exit(1)\n\ntest \"t\":\n    assert True\n",
    )
    .expect("program");
    let r = kora(&d, &["test", "--no-trace", "asks.ko"]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    assert!(r.stdout.contains("E1017"), "{}", r.stdout);
    assert!(
        r.stdout.contains("__name__ == \"__main__\"") && !r.stdout.contains("--live"),
        "{}",
        r.stdout
    );
}

#[test]
fn kora_toml_is_found_by_walking_up_from_the_program_however_it_is_named() {
    let d = dir("config-walk");
    std::fs::create_dir_all(d.join("app/sub")).expect("folders");
    // A broken kora.toml proves which runs found it: each must report it.
    std::fs::write(d.join("app/kora.toml"), "[models\n").expect("kora.toml");
    std::fs::write(d.join("app/sub/prog.ko"), "print('ran')\n").expect("program");
    let abs = d.join("app/sub/prog.ko");
    let abs = abs.to_string_lossy();
    for (cwd, path) in [
        (d.join("app/sub"), "prog.ko"),
        (d.join("app/sub"), "./prog.ko"),
        (d.join("app"), "sub/prog.ko"),
        (d.clone(), "app/sub/prog.ko"),
        (d.join("app/sub"), abs.as_ref()),
    ] {
        let r = kora(&cwd, &["run", path]);
        assert_eq!(r.code, 2, "{path} from {}: {}", cwd.display(), r.stdout);
        assert!(r.stderr.contains("kora.toml"), "{path}: {}", r.stderr);
        assert_eq!(
            r.stdout, "",
            "{path}: nothing runs under a broken kora.toml"
        );
    }
    std::fs::write(d.join("app/kora.toml"), "").expect("kora.toml");
    assert_eq!(
        kora(&d.join("app/sub"), &["run", "prog.ko"]).stdout,
        "ran\n"
    );
}

#[test]
fn record_without_the_api_key_stops_before_anything_runs() {
    let d = dir("record-key");
    std::fs::write(
        d.join("kora.toml"),
        "[models]\ndefault = { name = \"m\", endpoint = \"http://127.0.0.1:9/v1\", api_key_env = \"KORA_TEST_UNSET_KEY_26\" }\n",
    )
    .expect("kora.toml");
    std::fs::write(
        d.join("main.ko"),
        "use fs\nfs.write('side-effect.txt', 'x')\nprint('ran')\ns: str = analyze('x', 'Summarise.') else:\n    exit(1)\n",
    )
    .expect("program");
    let r = support::collect(
        support::kora_cmd()
            .args(["run", "--record", "main.ko"])
            .current_dir(&d)
            .env_remove("KORA_TEST_UNSET_KEY_26"),
        None,
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("KORA_TEST_UNSET_KEY_26"), "{}", r.stderr);
    assert!(r.stderr.contains("nothing was run"), "{}", r.stderr);
    assert_eq!(r.stdout, "");
    assert!(!d.join("side-effect.txt").exists());
}

#[test]
fn run_help_shows_the_file_as_required() {
    let r = kora(Path::new("."), &["run", "--help"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout
            .contains("Usage: kora run [OPTIONS] <FILE> [ARGS]..."),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("kora run --resume <RUN_ID>"),
        "{}",
        r.stdout
    );
    let r = kora(Path::new("."), &["run"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("<FILE>"), "{}", r.stderr);
}
