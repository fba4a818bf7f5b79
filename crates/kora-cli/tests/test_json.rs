//! End to end: `kora test --format json` (one record per test with its line and outcome, then a
//! summary) and `--exact` (one test by its whole name, not every name containing it): what the
//! VS Code Test Explorer runs.

mod support;

use serde_json::Value;

const TESTS: &str = r#"def add(a: int, b: int) -> int:
    return a + b

test "add":
    assert add(1, 2) == 3

test "add negative":
    assert add(-1, -2) == -3

test "add wrong":
    print("about to fail")
    assert add(1, 1) == 3, "one and one"
"#;

fn records(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

#[test]
fn json_records_carry_name_line_outcome_and_details() {
    let d = support::temp_dir("kora-test-json", "all");
    std::fs::write(d.join("math.ko"), TESTS).expect("write tests");
    let r = support::run_in(&d, &["test", "math.ko", "--format", "json"]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let recs = records(&r.stdout);
    let tests: Vec<(&str, i64, &str)> = recs
        .iter()
        .filter(|v| v["event"] == "test")
        .map(|v| {
            (
                v["name"].as_str().unwrap_or(""),
                v["line"].as_i64().unwrap_or(0),
                v["outcome"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        tests,
        vec![
            ("add", 4, "passed"),
            ("add negative", 7, "passed"),
            ("add wrong", 10, "failed")
        ]
    );
    let failed = &recs[2]["details"];
    let details = failed.as_str().unwrap_or("");
    assert!(details.contains("one and one"), "{details}");
    assert!(details.contains("about to fail"), "{details}");
    let summary = recs.last().expect("a summary");
    assert_eq!(summary["event"], "summary");
    assert_eq!(
        (summary["passed"].as_i64(), summary["failed"].as_i64()),
        (Some(2), Some(1))
    );
}

#[test]
fn exact_runs_one_test_where_a_substring_runs_three() {
    let d = support::temp_dir("kora-test-json", "exact");
    std::fs::write(d.join("math.ko"), TESTS).expect("write tests");
    let r = support::run_in(
        &d,
        &[
            "test", "math.ko", "--filter", "add", "--exact", "--format", "json",
        ],
    );
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let recs = records(&r.stdout);
    let ran: Vec<&str> = recs
        .iter()
        .filter(|v| v["event"] == "test")
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert_eq!(ran, vec!["add"]);
    assert_eq!(
        recs.last().map(|s| s["skipped"].clone()),
        Some(Value::from(2))
    );
    // Without --exact the same filter picks every name containing it.
    let r = support::run_in(&d, &["test", "math.ko", "--filter", "add"]);
    assert!(r.stdout.contains("2 passed, 1 failed"), "{}", r.stdout);
    // --exact alone has nothing to match: refused by the argument parser, with the reason.
    let r = support::run_in(&d, &["test", "math.ko", "--exact"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--filter"), "{}", r.stderr);
}

#[test]
fn a_file_that_does_not_check_is_one_json_record() {
    let d = support::temp_dir("kora-test-json", "broken");
    std::fs::write(d.join("bad.ko"), "test \"x\":\n    assert nope == 1\n").expect("write");
    let r = support::run_in(&d, &["test", "bad.ko", "--format", "json"]);
    assert_eq!(r.code, 2);
    let recs = records(&r.stdout);
    assert_eq!(recs[0]["event"], "file");
    assert_eq!(recs[0]["outcome"], "failed");
    assert!(recs[0]["details"].as_str().unwrap_or("").contains("error"));
}
