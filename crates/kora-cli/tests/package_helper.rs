//! A package's own helper (`[package.helper]`, `use helper`, `helper.call`) end to end through
//! the `kora` binary: a python3 helper speaking stdio/v1, written by the test into a package in
//! a temp dir. Round trip, `Err`, a crash and a hang as `Failed` with a fresh process after,
//! the importer's `helper` and `net` grants, seccomp refusing a socket the helper did not
//! declare, a sha256-pinned `file://` helper, classified data as a sink, `use helper` misplaced.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::{collect, kora_cmd, temp_dir, Run};

const HELPER: &str = r#"#!/usr/bin/env python3
import json, os, socket, struct, sys, time
inp, out = sys.stdin.buffer, sys.stdout.buffer
def read(n):
    b = b""
    while len(b) < n:
        c = inp.read(n - len(b))
        if not c:
            sys.exit(0)
        b += c
    return b
while True:
    hl, pl = struct.unpack(">II", read(8))
    req = json.loads(read(hl))
    payload = read(pl)
    op, h = req["op"], req["header"]
    body = b""
    if op == "echo":
        reply = {"ok": {"got": h, "n": len(payload)}}
        body = payload[::-1]
    elif op == "fail":
        reply = {"err": "cannot " + str(h.get("why"))}
    elif op == "crash":
        os.kill(os.getpid(), 9)
    elif op == "hang":
        time.sleep(120)
    elif op == "socket":
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            c = socket.create_connection(s.getsockname())
            reply = {"ok": {"socket": "connected"}}
        except OSError as e:
            reply = {"err": "socket refused: errno " + str(e.errno)}
    else:
        reply = {"err": "unknown op " + op}
    hdr = json.dumps(reply).encode()
    out.write(struct.pack(">II", len(hdr), len(body)) + hdr + body)
    out.flush()
"#;

const LIB: &str = r#"use helper

def call(op: str, data: bytes) -> str:
    match helper.call(op, {"why": op, "n": 2}, data):
        case Ok(answer):
            return f"ok {answer[0]} {answer[1]}"
        case Err(why):
            return f"err {why}"
        case Failed(why):
            return f"failed {why}"

def released(op: str, data: bytes) -> str:
    declassify data for helper:
        r = helper.call(op, {"why": op}, data)
    match r:
        case Ok(answer):
            return "released ok"
        case Err(why):
            return f"err {why}"
        case Failed(why):
            return f"failed {why}"
"#;

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().expect("parent")).expect("dir");
    std::fs::write(p, text).expect("write");
}

fn executable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// `root/kit` (a package whose helper section is `helper`) and `root/app` importing it with
/// `grants`, running `program`.
fn setup(name: &str, helper: &str, grants: &str, program: &str) -> PathBuf {
    let root = temp_dir("kora-pkg-helper", name);
    write(
        &root.join("kit/kora.toml"),
        &format!("[package]\nname = \"kit\"\nversion = \"0.1.0\"\n\n{helper}"),
    );
    write(&root.join("kit/lib.ko"), LIB);
    write(&root.join("kit/bin/helper.py"), HELPER);
    executable(&root.join("kit/bin/helper.py"));
    write(
        &root.join("app/kora.toml"),
        &format!("[dependencies]\nkit = {{ path = \"../kit\", grants = {{ {grants} }} }}\n"),
    );
    write(&root.join("app/main.ko"), program);
    root
}

/// `kora ARGS` in `root/app`, with `KORA_HOME` at `root/home`.
fn kora_in(root: &Path, args: &[&str]) -> Run {
    let r = collect(
        kora_cmd()
            .args(args)
            .current_dir(root.join("app"))
            .env("KORA_HOME", root.join("home")),
        None,
    );
    assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    r
}

fn run(root: &Path) -> Run {
    kora_in(root, &["run", "main.ko"])
}

const COMMAND: &str = "[package.helper]\ncommand = [\"bin/helper.py\"]\ntimeout_secs = 1\n";

#[test]
fn header_and_payload_round_trip_and_an_answered_error_is_err() {
    let root = setup(
        "round",
        COMMAND,
        "helper = true",
        "use kit\n\nprint(kit.call(\"echo\", bytes([0, 255, 7])))\nprint(kit.call(\"fail\", bytes([])))\n",
    );
    let r = run(&root);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout,
        "ok {'got': {'n': 2, 'why': 'echo'}, 'n': 3} b'\\x07\\xff\\x00'\nerr cannot fail\n",
        "{}",
        r.stderr
    );
}

#[test]
fn a_crash_and_a_hang_are_failed_and_the_next_call_starts_afresh() {
    let program = "use kit\n\nprint(kit.call(\"crash\", bytes([1])))\nprint(kit.call(\"echo\", bytes([1])))\nprint(kit.call(\"hang\", bytes([1])))\nprint(kit.call(\"echo\", bytes([2, 3])))\n";
    let root = setup("crash", COMMAND, "helper = true", program);
    let t = Instant::now();
    let r = run(&root);
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    // A failure quotes the end of the helper's stderr, which may span lines: read by markers.
    let out = &r.stdout;
    assert!(
        out.starts_with("failed helper `kit` exited before answering (killed by signal 9)"),
        "{out}"
    );
    let fresh = out
        .find("\nok {'got'")
        .expect("the call after the crash answered");
    let hang = out
        .find("did not answer `hang` within 1.0 s and was killed")
        .expect("hang");
    assert!(fresh < hang, "{out}");
    assert!(out.ends_with("'n': 2} b'\\x03\\x02'\n"), "{out}");
}

#[test]
fn without_the_helper_grant_the_call_is_refused_naming_the_package() {
    let root = setup(
        "nogrant",
        COMMAND,
        "",
        "use kit\n\nprint(kit.call(\"echo\", bytes([1])))\n",
    );
    let r = run(&root);
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(r.stderr.contains("E1101"), "{}", r.stderr);
    assert!(r.stderr.contains("package `kit`"), "{}", r.stderr);
    assert!(r.stderr.contains("helper = true"), "{}", r.stderr);
    assert!(!r.stdout.contains("ok"), "{}", r.stdout);
}

#[test]
fn net_is_the_importers_to_give_and_seccomp_refuses_a_socket_without_it() {
    let program = "use kit\n\nprint(kit.call(\"socket\", bytes([])))\n";
    let needs = "[package.helper]\ncommand = [\"bin/helper.py\"]\nneeds = [\"net\"]\n";
    // Declared, but the importer does not hold `net` for it: refused before anything runs.
    let root = setup("net-missing", needs, "helper = true", program);
    let r = run(&root);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("package `kit`"), "{}", r.stderr);
    assert!(r.stderr.contains("needs `net`"), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    // Granted: the helper may open a loopback socket.
    let root = setup(
        "net-granted",
        needs,
        "helper = true, net = [\"127.0.0.1\"]",
        program,
    );
    let r = run(&root);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "ok {'socket': 'connected'} b''\n", "{}", r.stderr);
    // Not declared: the filter refuses the socket even though the importer holds `net`.
    let root = setup(
        "net-undeclared",
        COMMAND,
        "helper = true, net = [\"127.0.0.1\"]",
        program,
    );
    let r = run(&root);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "err socket refused: errno 1\n", "{}", r.stderr);
}

fn platform() -> String {
    format!("{}-{}", std::env::consts::OS, std::env::consts::ARCH)
}

/// The file's SHA-256 as the system's `sha256sum` computes it (an independent witness).
fn sha256_hex(path: &Path) -> String {
    let out = std::process::Command::new("sha256sum")
        .arg(path)
        .output()
        .expect("sha256sum runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("a hash")
        .to_string()
}

#[test]
fn a_pinned_file_url_is_installed_and_runs_when_its_hash_matches_and_never_otherwise() {
    let program = "use kit\n\nprint(\"started\")\nprint(kit.call(\"echo\", bytes([9])))\n";
    let dist = temp_dir("kora-pkg-helper", "dist");
    let file = dist.join("helper-bin");
    write(&file, HELPER);
    let good = sha256_hex(&file);
    let url = format!("file://{}", file.display());
    let section = |sha: &str| {
        format!(
            "[package.helper.{}]\nurl = \"{url}\"\nsha256 = \"{sha}\"\n",
            platform()
        )
    };
    let root = setup("pinned", &section(&good), "helper = true", program);
    // `kora install` fetches and verifies it before any run, so the run needs no network.
    let install = |root: &Path| kora_in(root, &["install"]);
    let r = install(&root);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains(&format!("kit helper {}", &good[..12])),
        "{}",
        r.stdout
    );
    assert!(root.join("home/helpers").join(&good).is_file());
    let r = run(&root);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout, "started\nok {'got': {'n': 2, 'why': 'echo'}, 'n': 1} b'\\t'\n",
        "{}",
        r.stderr
    );
    assert!(root.join("home/helpers").join(&good).is_file());
    let bad = "0".repeat(64);
    let root = setup("pinned-bad", &section(&bad), "helper = true", program);
    let r = install(&root);
    assert_ne!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stderr.contains("package `kit`") && r.stderr.contains(&good),
        "{}",
        r.stderr
    );
    let r = run(&root);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "nothing ran: {}", r.stdout);
    for part in ["package `kit`", url.as_str(), good.as_str(), bad.as_str()] {
        assert!(r.stderr.contains(part), "{part} missing: {}", r.stderr);
    }
    let cached = std::fs::read_dir(root.join("home/helpers")).map_or(0, |d| d.count());
    assert_eq!(cached, 0, "a refused helper is never stored");
}

#[test]
fn a_classified_payload_reaches_the_helper_only_when_declassified_for_it() {
    let program = "use kit\n\nsecret = classified(bytes([1, 2, 3]))\nprint(kit.released(\"echo\", secret))\nprint(kit.call(\"echo\", secret))\n";
    let root = setup("secret", COMMAND, "helper = true", program);
    let r = run(&root);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "released ok\n", "{}", r.stderr);
    assert!(
        r.stderr.contains("declassify NAME for helper:"),
        "{}",
        r.stderr
    );
}

#[test]
fn use_helper_outside_a_package_with_a_helper_is_a_diagnostic() {
    let root = setup("outside", "", "helper = true", "use helper\n");
    let r = kora_in(&root, &["check", "main.ko"]);
    assert_ne!(r.code, 0, "{}", r.stdout);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(all.contains("E1406"), "{all}");
    // The package without `[package.helper]` writing `use helper` gets it too.
    write(&root.join("app/main.ko"), "use kit\n");
    let r = kora_in(&root, &["check", "main.ko"]);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(
        all.contains("E1406") && all.contains("package `kit` declares no helper"),
        "{all}"
    );
    // A bad `needs` names the manifest, its line and the key.
    write(
        &root.join("kit/kora.toml"),
        "[package]\nname = \"kit\"\n\n[package.helper]\ncommand = [\"bin/helper.py\"]\nneeds = [\"exec\"]\n",
    );
    let r = kora_in(&root, &["check", "main.ko"]);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(
        all.contains("kora.toml:6") && all.contains("package.helper.needs"),
        "{all}"
    );
}
