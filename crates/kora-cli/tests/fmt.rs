//! `kora fmt` through the binary: in place, `--check`, `--diff`, `-`, files it must not
//! touch, `kora.toml [fmt]` and its errors, and the conformance programs, which print
//! exactly the same after a layout that moves nearly every line.

mod support;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use support::{collect, kora_cmd, run_in, temp_dir};

const UGLY: &str = "def f(a:int,b:int)->int:\n  return a+b\nprint(f(1,2))\n";
const PRETTY: &str = "def f(a: int, b: int) -> int:\n    return a + b\n\n\nprint(f(1, 2))\n";

fn write(d: &Path, rel: &str, text: &str) {
    let p = d.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

fn read(d: &Path, rel: &str) -> String {
    std::fs::read_to_string(d.join(rel)).expect("read")
}

#[test]
fn check_and_diff_change_nothing_then_fmt_rewrites_in_place() {
    let d = temp_dir("kora-fmt", "inplace");
    write(&d, "a.ko", UGLY);
    write(&d, "b.ko", PRETTY);
    write(&d, "sub/c.ko", "x = [1,2,3]\n");
    write(&d, ".hidden/h.ko", UGLY);
    write(&d, "target/t.ko", UGLY);
    write(&d, "notes.txt", UGLY);

    let check = run_in(&d, &["fmt", "--check"]);
    assert_eq!(check.code, 1, "{}", check.stderr);
    assert!(
        check.stdout.contains("Would reformat: ./a.ko"),
        "{}",
        check.stdout
    );
    assert!(check.stdout.contains("c.ko"), "{}", check.stdout);
    assert!(
        !check.stdout.contains("b.ko")
            && !check.stdout.contains("h.ko")
            && !check.stdout.contains("t.ko")
    );
    assert!(
        check
            .stderr
            .contains("2 files would be reformatted, 1 file already formatted"),
        "{}",
        check.stderr
    );
    assert_eq!(read(&d, "a.ko"), UGLY, "--check wrote a file");

    let diff = run_in(&d, &["fmt", "--diff", "a.ko"]);
    assert_eq!(diff.code, 1);
    assert!(
        diff.stdout.starts_with("--- a.ko\n+++ a.ko\n"),
        "{}",
        diff.stdout
    );
    assert!(
        diff.stdout.contains("\n-def f(a:int,b:int)->int:\n"),
        "{}",
        diff.stdout
    );
    assert!(
        diff.stdout.contains("\n+def f(a: int, b: int) -> int:\n"),
        "{}",
        diff.stdout
    );
    assert_eq!(read(&d, "a.ko"), UGLY, "--diff wrote a file");

    let fmt = run_in(&d, &["fmt"]);
    assert_eq!(fmt.code, 0, "{}", fmt.stderr);
    assert!(
        fmt.stderr
            .contains("2 files reformatted, 1 file left unchanged"),
        "{}",
        fmt.stderr
    );
    assert_eq!(read(&d, "a.ko"), PRETTY);
    assert_eq!(read(&d, "sub/c.ko"), "x = [1, 2, 3]\n");
    assert_eq!(
        read(&d, ".hidden/h.ko"),
        UGLY,
        "hidden folders are not walked"
    );
    assert_eq!(read(&d, "target/t.ko"), UGLY, "target/ is not walked");

    let again = run_in(&d, &["fmt", "--check", "."]);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);
    // A file named explicitly is formatted even where a walk would not go.
    assert_eq!(run_in(&d, &["fmt", "target/t.ko"]).code, 0);
    assert_eq!(read(&d, "target/t.ko"), PRETTY);
}

#[test]
fn a_file_with_syntax_errors_is_reported_and_left_untouched() {
    let d = temp_dir("kora-fmt", "broken");
    let broken = "def f(:\n    return 1\nx = (1,\n";
    write(&d, "bad.ko", broken);
    write(&d, "good.ko", UGLY);
    let r = run_in(&d, &["fmt"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("bad.ko"), "{}", r.stderr);
    assert!(
        r.stderr.contains("[E0"),
        "the diagnostics carry their codes: {}",
        r.stderr
    );
    assert!(r.stderr.contains("was not formatted"), "{}", r.stderr);
    assert_eq!(read(&d, "bad.ko"), broken);
    assert_eq!(
        read(&d, "good.ko"),
        PRETTY,
        "the other files are still formatted"
    );
    assert_eq!(run_in(&d, &["fmt", "--check", "bad.ko"]).code, 2);
}

#[test]
fn dash_formats_stdin_to_stdout() {
    let d = temp_dir("kora-fmt", "stdin");
    let r = collect(kora_cmd().args(["fmt", "-"]).current_dir(&d), Some(UGLY));
    assert_eq!((r.code, r.stdout.as_str()), (0, PRETTY), "{}", r.stderr);
    let r = collect(
        kora_cmd().args(["fmt", "--check", "-"]).current_dir(&d),
        Some(UGLY),
    );
    assert_eq!((r.code, r.stdout.as_str()), (1, ""));
    let r = collect(
        kora_cmd().args(["fmt", "--check", "-"]).current_dir(&d),
        Some(PRETTY),
    );
    assert_eq!(r.code, 0);
    let r = collect(
        kora_cmd().args(["fmt", "--diff", "-"]).current_dir(&d),
        Some(UGLY),
    );
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("+    return a + b"), "{}", r.stdout);
    let r = collect(
        kora_cmd().args(["fmt", "-"]).current_dir(&d),
        Some("x = (\n"),
    );
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (2, ""),
        "nothing is written for a broken file"
    );
    assert!(r.stderr.contains("E0025"), "{}", r.stderr);
    let r = collect(
        kora_cmd().args(["fmt", "-", "a.ko"]).current_dir(&d),
        Some(UGLY),
    );
    assert_eq!(r.code, 2);
    // Line endings are kept.
    let crlf = UGLY.replace('\n', "\r\n");
    let r = collect(kora_cmd().args(["fmt", "-"]).current_dir(&d), Some(&crlf));
    assert_eq!(r.stdout, PRETTY.replace('\n', "\r\n"));
}

#[test]
fn kora_toml_sets_the_layout_and_the_exclusions() {
    let d = temp_dir("kora-fmt", "config");
    write(
        &d,
        "kora.toml",
        "[fmt]\nline_length = 30\nindent_width = 2\nquote_style = \"single\"\nexclude = [\"snapshots\"]\n",
    );
    write(
        &d,
        "a.ko",
        "def f(x: int) -> str:\n    return \"value\" + str(x) + \"suffix\"\n",
    );
    write(&d, "snapshots/s.ko", UGLY);
    let r = run_in(&d, &["fmt"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        read(&d, "a.ko"),
        "def f(x: int) -> str:\n  return (\n    'value'\n    + str(x)\n    + 'suffix'\n  )\n"
    );
    assert_eq!(read(&d, "snapshots/s.ko"), UGLY, "excluded");
    // The config is found from a subfolder, and a run in a subfolder applies it.
    write(&d, "deep/er/b.ko", "y = \"q\"\n");
    assert_eq!(run_in(&d.join("deep"), &["fmt"]).code, 0);
    assert_eq!(read(&d, "deep/er/b.ko"), "y = 'q'\n");
    // `kora run` accepts the table it does not use.
    write(&d, "ok.ko", "print('ran')\n");
    let run = run_in(&d, &["run", "ok.ko"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "ran\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_bad_fmt_table_names_the_file_line_and_key() {
    let d = temp_dir("kora-fmt", "badconfig");
    write(&d, "a.ko", UGLY);
    for (toml, line, needle) in [
        (
            "[fmt]\nline_length = 88\nline_lenght = 80\n",
            3,
            "line_lenght",
        ),
        ("[models]\n\n[fmt]\nindent_width = 0\n", 4, "indent_width"),
        ("[fmt]\nquote_style = \"fancy\"\n", 2, "quote_style"),
        ("[fmt]\nexclude = \"tests\"\n", 2, "exclude"),
    ] {
        write(&d, "kora.toml", toml);
        let r = run_in(&d, &["fmt"]);
        assert_eq!(r.code, 2, "{toml}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("kora.toml:{line}:")),
            "{toml}: {}",
            r.stderr
        );
        assert!(r.stderr.contains(needle), "{toml}: {}", r.stderr);
        assert_eq!(read(&d, "a.ko"), UGLY);
    }
    let r = run_in(&d, &["fmt", "missing.ko"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("missing.ko"), "{}", r.stderr);
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir").flatten() {
        let p = e.path();
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_tree(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).expect("copy");
        }
    }
}

/// The error codes a run reported: what must survive a layout change when positions cannot.
fn codes(stderr: &str) -> Vec<String> {
    let mut out: Vec<String> = stderr
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            w.len() == 5 && w.starts_with('E') && w[1..].bytes().all(|b| b.is_ascii_digit())
        })
        .map(str::to_string)
        .collect();
    out.sort();
    out
}

#[test]
fn every_conformance_program_prints_the_same_after_formatting() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance");
    let d = temp_dir("kora-fmt", "conformance");
    let (before, after) = (d.join("before"), d.join("after"));
    copy_tree(&root, &before);
    copy_tree(&root, &after);
    // A layout far from the repository's own: most lines move, the programs must not.
    write(
        &d,
        "after/kora.toml",
        "[fmt]\nline_length = 40\nindent_width = 2\nquote_style = \"single\"\nmagic_trailing_comma = false\n",
    );
    write(&d, "before/kora.toml", "");
    let f = run_in(&after, &["fmt", "."]);
    assert!(f.stderr.contains("reformatted"), "{}", f.stderr);
    assert!(f.code == 0 || f.code == 2, "{}", f.stderr);
    let mut programs = Vec::new();
    for suite in ["shared", "kora", "errors"] {
        for e in std::fs::read_dir(root.join(suite))
            .expect("suite")
            .flatten()
        {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".ko") {
                programs.push(format!("{suite}/{name}"));
            }
        }
    }
    programs.sort();
    assert!(programs.len() > 200, "{} programs", programs.len());
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let changed = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..3 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(rel) = programs.get(i) else { break };
                if read(&before, rel) != read(&after, rel) {
                    changed.fetch_add(1, Ordering::Relaxed);
                }
                let a = run_in(&before, &["run", rel]);
                let b = run_in(&after, &["run", rel]);
                let same = a.code == b.code
                    && a.stdout == b.stdout
                    && (a.code == 0 && a.stderr == b.stderr
                        || codes(&a.stderr) == codes(&b.stderr));
                if !same {
                    failures.lock().expect("lock").push(format!(
                        "{rel}: exit {} vs {}\n--- before\n{}{}\n--- after\n{}{}",
                        a.code, b.code, a.stdout, a.stderr, b.stdout, b.stderr
                    ));
                }
            });
        }
    });
    let failures = failures.into_inner().expect("lock");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        changed.load(Ordering::Relaxed) > 150,
        "the narrow layout changed too few programs"
    );
}
