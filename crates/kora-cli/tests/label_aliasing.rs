//! End to end: a container reached through a classified key, index or field is the same
//! container (a mutation through it is seen through every other path), and what is read
//! through that path is still classified.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use kora_testkit::FakeProvider;
use support::{kora, temp_dir, text, write_fake_config};

const SECRET: &str = "hunter2-secret";

fn project(name: &str, fake: &FakeProvider) -> PathBuf {
    let d = temp_dir("kora-label-aliasing", name);
    write_fake_config(&d, &fake.openai_endpoint());
    d
}

fn run(d: &Path, body: &str) -> Output {
    let src =
        format!("secret = classified(\"{SECRET}\")\ntype Box:\n    items: list[int]\n{body}\n");
    std::fs::write(d.join("main.ko"), src).expect("program");
    kora(d, &["run", "main.ko"], None)
}

/// Runs `body` and returns its stdout, failing with everything the run said otherwise.
fn stdout_of(d: &Path, body: &str) -> String {
    let out = run(d, body);
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success(),
        "exit {:?}\n{so}{se}",
        out.status.code()
    );
    assert!(
        !so.contains("hunter2") && !se.contains("hunter2"),
        "{so}{se}"
    );
    so
}

#[test]
fn setdefault_through_a_secret_key_appends_to_the_list_in_the_dict() {
    let fake = FakeProvider::start();
    let d = project("setdefault", &fake);
    let out = stdout_of(
        &d,
        "groups: dict[str, list[int]] = {}\nfor c in [1, 2, 3]:\n    groups.setdefault(secret, []).append(c)\nfor k, v in groups.items():\n    print(sum(v))\nprint(len(groups[secret]))\nprint(groups[secret])\nprint(groups)\nprint(sum(groups[secret]))",
    );
    assert_eq!(
        out,
        // The size of a list reached through a secret key is as secret as the key (issue 25).
        // `setdefault` with a secret key decides whether `groups` grows, so the dict's shape
        // is classified (`labels/shape.rs`): everything read from it is, and a classified
        // container renders as one placeholder.
        "__CLASSIFIED__\n__CLASSIFIED__\n__CLASSIFIED__\n__CLASSIFIED__\n__CLASSIFIED__\n"
    );
}

#[test]
fn indexing_and_get_through_a_secret_key_share_the_container() {
    let fake = FakeProvider::start();
    let d = project("index", &fake);
    let out = stdout_of(
        &d,
        "d: dict[str, list[int]] = {secret: []}\nd[secret].append(1)\nd.get(secret).append(2)\nd[secret].extend([3, 4])\nd[secret].insert(0, 5)\nd[secret] += [6]\nv = d[secret]\nv += [7]\nfor k, xs in d.items():\n    print(xs)\nprint(d[secret][0])",
    );
    assert_eq!(out, "[5, 1, 2, 3, 4, 6, 7]\n__CLASSIFIED__\n");
}

#[test]
fn dicts_sets_and_records_reached_through_a_secret_change_in_place() {
    let fake = FakeProvider::start();
    let d = project("kinds", &fake);
    let out = stdout_of(
        &d,
        "inner: dict[str, dict[str, int]] = {secret: {}}\ninner[secret][\"k\"] = 7\ninner[secret].update({\"j\": 8})\nsets: dict[str, set[int]] = {secret: set()}\nsets[secret].add(4)\nboxes = {secret: Box(items=[])}\nboxes[secret].items.append(1)\nb = boxes[secret]\nb.items = [2, 3]\nfor k1, v1 in inner.items():\n    print(v1)\nfor k2, v2 in sets.items():\n    print(v2)\nfor k3, v3 in boxes.items():\n    print(v3.items)\nprint(inner[secret])\nprint(boxes[secret].items)",
    );
    assert_eq!(
        out,
        "{'k': 7, 'j': 8}\n{4}\n[2, 3]\n__CLASSIFIED__\n__CLASSIFIED__\n"
    );
}

#[test]
fn looping_over_a_list_read_through_a_secret_reaches_its_inner_lists() {
    let fake = FakeProvider::start();
    let d = project("loop", &fake);
    let out = stdout_of(
        &d,
        "rows = {secret: [[], [0]]}\nfor row in rows[secret]:\n    row.append(1)\nfor k, v in rows.items():\n    print(v)\nfor row in rows[secret]:\n    print(row)",
    );
    assert_eq!(out, "[[1], [0, 1]]\n__CLASSIFIED__\n__CLASSIFIED__\n");
}

#[test]
fn a_container_read_through_a_secret_is_refused_by_a_model_until_released() {
    let fake = FakeProvider::start();
    let d = project("model", &fake);
    // Even an empty list read through a secret key is as secret as the key.
    let out = run(
        &d,
        "groups: dict[str, list[int]] = {}\ngroups.setdefault(secret, []).append(41)\nr = analyze(groups[secret], \"look\")\nprint(\"sent\")",
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("E1341") && !err.contains("hunter2"), "{err}");
    assert_eq!(fake.count(), 0);
    let out = run(
        &d,
        "d: dict[str, list[int]] = {secret: []}\nr = analyze(d[secret], \"look\")",
    );
    assert!(text(&out.stderr).contains("E1341"), "{}", text(&out.stderr));
    assert_eq!(fake.count(), 0);
    // Released for the model, the list (with what was appended through the key) is sent.
    let out = run(
        &d,
        "groups: dict[str, list[int]] = {}\ngroups.setdefault(secret, []).append(41)\ndeclassify secret for default:\n    r = analyze(groups[secret], \"look\")\nprint(\"sent\")",
    );
    assert!(text(&out.stdout).contains("sent"), "{}", text(&out.stderr));
    let sent: String = fake.requests().iter().map(|r| r.body.to_string()).collect();
    assert_eq!(fake.count(), 1);
    assert!(sent.contains("41"), "{sent}");
}

#[test]
fn classified_of_a_list_patterns_and_copies_keep_aliasing_and_the_label() {
    let fake = FakeProvider::start();
    let d = project("classified-list", &fake);
    let out = stdout_of(
        &d,
        "use json\nxs: list[list[int]] = [[1]]\ns = classified(xs)\ns[0].append(2)\nprint(xs)\nprint(s)\nmatch s:\n    case [first]:\n        print(first)\n        first.append(3)\n    case _:\n        print(\"no\")\nprint(xs)\nprint(len(s))\nprint(list(s))\nprint(json.encode(s))\nprint(s == [[1, 2, 3]])",
    );
    assert_eq!(
        out,
        // A classified list shows as one placeholder (its length is as secret as its items),
        // and so does its copy: `list(s)` is seen through `s`'s label.
        "[[1, 2]]\n__CLASSIFIED__\n__CLASSIFIED__\n[[1, 2, 3]]\n__CLASSIFIED__\n__CLASSIFIED__\n__CLASSIFIED__\n__CLASSIFIED__\n"
    );
}
