//! `kora check` on input at the front end's limits, through the binary: an indentation
//! runaway is one error, a huge line is elided in its message, a 50,000-item list and a
//! byte order mark are accepted, and invalid UTF-8 is reported with its byte offset and line;
//! a large program (parsed in parallel pieces) checks clean, and one syntax error in it is
//! reported as in a small file; `KORA_TIMINGS` names each phase.

mod support;

use std::path::Path;

use support::{kora_env, run_in, temp_dir, text, Run};

fn check(d: &Path, name: &str, bytes: &[u8]) -> Run {
    std::fs::write(d.join(name), bytes).expect("write");
    run_in(d, &["check", name])
}

#[test]
fn an_indentation_runaway_is_one_error_and_the_code_around_it_is_still_checked() {
    let d = temp_dir("kora-limits", "indent");
    let mut src = String::from("def f() -> None:\n");
    for depth in 1..1200 {
        src.push_str(&"    ".repeat(depth));
        src.push_str("if True:\n");
    }
    src.push_str(&"    ".repeat(1200));
    src.push_str("pass\n");
    // After the runaway, the file goes on and its own mistakes are still found.
    src.push_str("\n\nx = 1 $ 2\n");
    let r = check(&d, "deep.ko", src.as_bytes());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(
        r.stderr.matches("[E0028]").count(),
        1,
        "{}",
        &r.stderr[..2000.min(r.stderr.len())]
    );
    assert!(r.stderr.contains("too many levels of indentation"));
    assert!(
        r.stderr.contains("deep.ko:102:1"),
        "{}",
        &r.stderr[..2000.min(r.stderr.len())]
    );
    assert!(
        r.stderr.contains("[E0001]") && r.stderr.contains("deep.ko:1204:7"),
        "the rest of the file is still read: {}",
        r.stderr
    );
    assert!(r.stderr.contains("2 errors found"), "{}", r.stderr);
    // 1,200 levels once took 26 MB of errors; the whole report is now a few screens.
    assert!(
        r.stderr.len() < 20_000,
        "{} bytes of errors",
        r.stderr.len()
    );
}

#[test]
fn a_100_kb_line_is_elided_in_the_message_with_the_true_column() {
    let d = temp_dir("kora-limits", "longline");
    let src = format!("y = 1\nx = {}1 $ 2\n", "1 + ".repeat(25_000));
    let r = check(&d, "long.ko", src.as_bytes());
    assert_eq!(r.code, 2, "{}", &r.stderr[..2000.min(r.stderr.len())]);
    assert!(r.stderr.len() < 5_000, "{} bytes of errors", r.stderr.len());
    assert!(r.stderr.contains("[E0028]"), "{}", r.stderr);
    assert!(r.stderr.contains("[E0001]"), "{}", r.stderr);
    // The `$` is at column 100,006 of line 2: the header says so, and the snippet shows it elided.
    let col = 4 + 4 * 25_000 + 3;
    assert!(
        r.stderr.contains(&format!("long.ko:2:{col} ")),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains('…'), "{}", r.stderr);
    assert!(r.stderr.contains("1 $ 2"), "{}", r.stderr);
}

#[test]
fn a_50000_item_list_literal_is_accepted() {
    let d = temp_dir("kora-limits", "biglist");
    let items: Vec<String> = (0..50_000).map(|i| i.to_string()).collect();
    let src = format!(
        "xs = [{}]\nnames = [{}]\nprint(len(xs), xs[49999], len(names))\n",
        items.join(", "),
        items
            .iter()
            .map(|i| format!("\"n{i}\""))
            .collect::<Vec<_>>()
            .join(",\n    ")
    );
    std::fs::write(d.join("big.ko"), &src).expect("write");
    let r = run_in(&d, &["check", "big.ko"]);
    assert_eq!(r.code, 0, "{}", &r.stderr[..2000.min(r.stderr.len())]);
    let r = run_in(&d, &["run", "big.ko"]);
    assert_eq!(r.code, 0, "{}", &r.stderr[..2000.min(r.stderr.len())]);
    assert_eq!(r.stdout.trim(), "50000 49999 50000");
}

#[test]
fn a_deep_expression_on_one_line_is_still_refused() {
    let d = temp_dir("kora-limits", "deepline");
    let src = format!("x = y{}\n", ".a".repeat(30_000));
    let r = check(&d, "deep.ko", src.as_bytes());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.matches("[E0028]").count(), 1, "{}", r.stderr);
}

#[test]
fn a_byte_order_mark_is_accepted_and_columns_ignore_it() {
    let d = temp_dir("kora-limits", "bom");
    let r = check(&d, "bom.ko", b"\xef\xbb\xbfprint(\"hi\")\n");
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = run_in(&d, &["run", "bom.ko"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, "hi\n"), "{}", r.stderr);
    let r = check(&d, "bad.ko", b"\xef\xbb\xbfx: int = \"s\"\n");
    assert_eq!(r.code, 2, "{}", r.stderr);
    // The error is found on line 1 (its column still counts the mark as a character).
    assert!(
        r.stderr.contains("[E0204]") && r.stderr.contains("bad.ko:1:"),
        "{}",
        r.stderr
    );
}

#[test]
fn invalid_utf8_is_reported_with_its_byte_offset_and_line() {
    let d = temp_dir("kora-limits", "utf8");
    let r = check(&d, "bad.ko", b"x = 1\ny = \"\xc3\xa9\xff\"\nprint(y)\n");
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("invalid UTF-8 at byte 13 (line 2, column 7)"),
        "{}",
        r.stderr
    );
    // A module reached through `use` is named with the same position.
    std::fs::write(d.join("main.ko"), "use \"./bad.ko\" as bad\nprint(1)\n").expect("write");
    let r = run_in(&d, &["check", "main.ko"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("invalid UTF-8 at byte 13 (line 2, column 7)"),
        "{}",
        r.stderr
    );
}

/// A program large enough to be parsed in pieces on several threads.
fn large_program(blocks: usize) -> String {
    let mut src = String::new();
    for i in 0..blocks {
        src.push_str(&format!(
            "type Item{i}:\n    id: int\n\n\ndef score{i}(x: int) -> int:\n    total = x + {i}\n    if total > 3:\n        return total\n    elif total < 0:\n        return 0\n    else:\n        return [k for k in range(x)][0]\n\n\nvalue{i} = score{i}({i})\nif value{i} > 1:\n    print(f\"v{{value{i}}}\")\nelse:\n    pass\n"
        ));
    }
    src
}

#[test]
fn a_large_program_checks_clean_and_one_syntax_error_in_it_is_reported_where_it_is() {
    let d = temp_dir("kora-limits", "large");
    let src = large_program(400);
    std::fs::write(d.join("big.ko"), &src).expect("write");
    let out = kora_env(&d, &["check", "big.ko"], None, &[("KORA_TIMINGS", "1")]);
    let err = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        &err[..2000.min(err.len())]
    );
    for phase in ["read and parse", "lower and check", "render diagnostics"] {
        assert!(err.contains(phase), "no `{phase}` timing: {err}");
    }
    // One bad line near the end: the file is parsed again whole and only that line is reported.
    let mut lines: Vec<&str> = src.lines().collect();
    let line = lines.len() - 5;
    assert!(lines[line].starts_with("value399 ="), "{}", lines[line]);
    lines[line] = "value_bad = 1 +";
    let r = check(&d, "bad.ko", (lines.join("\n") + "\n").as_bytes());
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.stderr.matches("] Error:").count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("[E0030]"), "{}", r.stderr);
    assert!(
        r.stderr.contains(&format!("bad.ko:{}:", line + 1)),
        "{}",
        r.stderr
    );
}
