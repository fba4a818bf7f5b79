//! `use pdf` end to end through the `kora` binary and the real, confined `kora-pdf` helper:
//! page count, each page's text, a rendered page's pixel size, on PDFs the test writes; a
//! malformed PDF is `Err`; a helper that hangs is `Failed` within its timeout and one that
//! crashes is `Failed`, with the next call starting a fresh process.

mod support;

#[path = "pdf/make.rs"]
mod make;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use make::{pdf, Page};
use support::{run_in, temp_dir, Run};

/// `kora-pdf`, built beside `kora` when this test binary was built without it.
fn helper() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_BIN_EXE_kora"))
            .parent()
            .expect("bin dir")
            .to_path_buf();
        let exe = dir.join("kora-pdf");
        if !exe.exists() {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let st = std::process::Command::new(cargo)
                // `--workspace` keeps the features `cargo test --workspace` resolved, so this
                // builds one binary instead of every dependency again.
                .args(["build", "--workspace", "--bin", "kora-pdf"])
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .status()
                .expect("cargo runs");
            assert!(st.success(), "building kora-pdf failed");
        }
        exe
    })
}

fn project(name: &str, settings: &str, program: &str) -> PathBuf {
    let _ = helper();
    let d = temp_dir("kora-pdf", name);
    std::fs::write(d.join("kora.toml"), format!("[pdf]\n{settings}")).expect("toml");
    std::fs::write(d.join("main.ko"), program).expect("program");
    d
}

fn run(d: &Path) -> Run {
    let r = run_in(d, &["run", "main.ko"]);
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

const READ_ALL: &str = r#"use fs
use pdf

def main() -> None:
    data: bytes = fs.bytes("doc.pdf") else (why, kind):
        print(kind, why)
        return
    n: int = pdf.pages(data) else (why, kind):
        print(kind, why)
        return
    print("pages", n)
    for i in range(n):
        t: str = pdf.text(data, i) else (why, kind):
            print(kind, why)
            return
        print(i, t.strip())
    img: fs.Image = pdf.render(data, n - 1, 144) else (why, kind):
        print(kind, why)
        return
    print(img.format, img.width, img.height)
    small: fs.Image = pdf.render(data, 0) else (why, kind):
        print(kind, why)
        return
    print(small.width, small.height)

main()
"#;

#[test]
fn pages_text_and_a_rendered_page_of_a_generated_pdf() {
    let d = project("read", "", READ_ALL);
    let doc = pdf(&[
        Page::Text("Hello from page one"),
        Page::Text("Second page"),
        Page::Image,
    ]);
    std::fs::write(d.join("doc.pdf"), doc).expect("pdf");
    let r = run(&d);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout, "pages 3\n0 Hello from page one\n1 Second page\n2 \npng 1224 1584\n612 792\n",
        "{}",
        r.stderr
    );
}

#[test]
fn a_malformed_pdf_and_a_page_past_the_end_are_err() {
    let program = r#"use fs
use pdf

data: bytes = fs.bytes("doc.pdf") else:
    exit("no file")
match pdf.pages(bytes([37, 80, 68, 70, 1, 2, 3])):
    case Ok(n):
        print("pages", n)
    case Err(why):
        print("err", why != "")
    case Failed(why):
        print("failed", why)
match pdf.text(data, 5):
    case Ok(t):
        print("text", t)
    case Err(why):
        print("err", why)
    case Failed(why):
        print("failed", why)
"#;
    let d = project("malformed", "", program);
    std::fs::write(d.join("doc.pdf"), pdf(&[Page::Text("only")])).expect("pdf");
    let r = run(&d);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout, "err True\nerr page 5 is past the end: the PDF has 1 page(s), numbered from 0\n",
        "{}",
        r.stderr
    );
}

const TWICE: &str = r#"use pdf

for i in range(2):
    match pdf.pages(bytes("%PDF-", "utf-8")):
        case Ok(n):
            print("pages", n)
        case Err(why):
            print("err", why)
        case Failed(why):
            print("failed", why)
"#;

#[test]
fn a_hanging_helper_is_failed_within_its_timeout_and_replaced() {
    let d = project("hang", "helper = \"hang.sh\"\ntimeout_secs = 1\n", TWICE);
    let script = d.join("hang.sh");
    std::fs::write(&script, "#!/bin/sh\nsleep 1000\n").expect("script");
    make_executable(&script);
    let start = Instant::now();
    let r = run(&d);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    for l in lines {
        assert!(
            l.starts_with("failed helper `pdf` did not answer `pages`"),
            "{l}"
        );
        assert!(l.contains("was killed"), "{l}");
    }
}

#[test]
fn a_crashing_helper_is_failed_and_the_next_call_starts_a_fresh_one() {
    let d = project("crash", "", TWICE);
    let script = d.join("crash.sh");
    // Both calls fail the same way: the second started a fresh process rather than reusing
    // (or waiting on) the dead one.
    std::fs::write(&script, "#!/bin/sh\necho crashed >&2\nkill -SEGV $$\n").expect("script");
    make_executable(&script);
    std::fs::write(d.join("kora.toml"), "[pdf]\nhelper = \"crash.sh\"\n").expect("toml");
    let r = run(&d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{}", r.stdout);
    for l in lines {
        assert!(l.starts_with("failed helper `pdf`"), "{l}");
        assert!(l.contains("signal 11") && l.contains("crashed"), "{l}");
    }
}

#[test]
fn a_missing_helper_is_failed_naming_the_program() {
    let d = project("missing", "helper = \"nowhere/kora-pdf\"\n", TWICE);
    let r = run(&d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("could not start"), "{}", r.stdout);
    assert!(r.stdout.contains("nowhere/kora-pdf"), "{}", r.stdout);
}

#[test]
fn a_mistyped_pdf_setting_names_its_line() {
    let d = project("badkey", "helpr = \"x\"\n", TWICE);
    let r = run(&d);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr.contains("helpr") && r.stderr.contains(":2"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_classified_pdf_reaches_the_helper_only_released_for_it() {
    let refused = r#"use fs
use pdf

raw: bytes = fs.bytes("doc.pdf") else:
    exit("no file")
secret = classified(raw)
print(pdf.pages(secret))
"#;
    let d = project("secret", "", refused);
    std::fs::write(d.join("doc.pdf"), pdf(&[Page::Text("private")])).expect("pdf");
    let r = run(&d);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("reaches the `pdf` helper"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("declassify NAME for pdf:"),
        "{}",
        r.stderr
    );
    let released = refused.replace(
        "print(pdf.pages(secret))",
        "declassify secret for pdf:\n    n = pdf.pages(secret)\nmatch n:\n    case Ok(k):\n        print(\"ok\", k)\n    case _:\n        print(\"not ok\")",
    );
    std::fs::write(d.join("main.ko"), released).expect("program");
    let r = run(&d);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.starts_with("ok "), "{}", r.stdout);
    assert!(!r.stdout.contains("private"), "{}", r.stdout);
}

#[test]
fn a_package_calls_the_pdf_helper_only_when_its_importer_grants_helper() {
    let root = temp_dir("kora-pdf", "grant");
    let _ = helper();
    let write = |p: PathBuf, text: &str| {
        std::fs::create_dir_all(p.parent().expect("parent")).expect("dir");
        std::fs::write(p, text).expect("write");
    };
    write(
        root.join("reader/kora.toml"),
        "[package]\nname = \"reader\"\nversion = \"0.1.0\"\n",
    );
    write(
        root.join("reader/lib.ko"),
        "use fs\nuse pdf\n\n\ndef count(p: str) -> str:\n    data: bytes = fs.bytes(p) else (why, kind):\n        return why\n    n: int = pdf.pages(data) else (why, kind):\n        return why\n    return str(n)\n",
    );
    let app = root.join("app");
    write(
        app.join("main.ko"),
        "use reader\n\nprint(reader.count(\"data/doc.pdf\"))\n",
    );
    std::fs::create_dir_all(app.join("data")).expect("dir");
    std::fs::write(
        app.join("data/doc.pdf"),
        pdf(&[Page::Text("a"), Page::Text("b")]),
    )
    .expect("pdf");
    let manifest = |grants: &str| {
        format!("[dependencies]\nreader = {{ path = \"../reader\", grants = {{ {grants} }} }}\n")
    };
    write(app.join("kora.toml"), &manifest("fs = [\"./data\"]"));
    let r = run(&app);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("package `reader`")
            && r.stderr.contains("pdf.pages")
            && r.stderr.contains("helper = true"),
        "{}",
        r.stderr
    );
    write(
        app.join("kora.toml"),
        &manifest("fs = [\"./data\"], helper = true"),
    );
    let r = run(&app);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "2\n");
}

fn make_executable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}
