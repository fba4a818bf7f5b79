//! `use mcp` against the real reference servers from npm (`scripts/mcp-servers.sh` installs them
//! into `target/mcp-servers`; without npm these tests are skipped with a message): stdio and
//! Streamable HTTP, text, structured and error results, a long-running tool against a short
//! timeout, and a filesystem server that refuses a path outside its folder.

mod support;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use support::{run_in, temp_dir};

/// `target/mcp-servers/node_modules/.bin`, installed once per test process; `None`: skip.
fn servers() -> Option<&'static Path> {
    static BIN: OnceLock<Option<PathBuf>> = OnceLock::new();
    BIN.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let bin = root.join("target/mcp-servers/node_modules/.bin");
        if !bin.join("mcp-server-everything").exists() {
            let has_npm = std::process::Command::new("npm")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success());
            if !has_npm {
                eprintln!("skipped: npm is not installed, so the MCP reference servers cannot be");
                return None;
            }
            let ok = std::process::Command::new("bash")
                .arg(root.join("scripts/mcp-servers.sh"))
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                eprintln!(
                    "skipped: scripts/mcp-servers.sh could not install the MCP reference servers"
                );
                return None;
            }
        }
        Some(bin)
    })
    .as_deref()
}

fn server(name: &str) -> String {
    servers().expect("checked").join(name).display().to_string()
}

#[test]
fn the_everything_server_answers_text_structured_and_error_results() {
    if servers().is_none() {
        return;
    }
    let d = temp_dir("kora-mcp-ref", "everything");
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[mcp.ev]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\ntimeout_secs = 2\n",
            server("mcp-server-everything")
        ),
    )
    .expect("toml");
    std::fs::write(
        d.join("main.ko"),
        r#"use mcp ev as ev

print(ev.echo(message="hello"))
total = ev.get_sum(a=2, b=3)
print(total)
weather = ev.get_structured_content(location="Chicago")
match weather:
    case Ok(w):
        print(sorted(w.keys()))
    case _:
        print("no weather", weather)
print(ev.get_sum(a="two", b=3))
print(ev.gzip_file_as_resource(name="x.gz", data="http://127.0.0.1:9/none"))
print(len(ev.tools) > 5)
slow = ev.trigger_long_running_operation(duration=30, steps=3)
print(slow)
print(ev.echo(message="still here"))
"#,
    )
    .expect("ko");
    let t = Instant::now();
    let r = run_in(&d, &["run", "main.ko"]);
    assert!(
        t.elapsed() < Duration::from_secs(20),
        "the 2 s timeout was not kept: {:?}",
        t.elapsed()
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines[0], "Ok('Echo: hello')");
    assert_eq!(lines[1], "Ok('The sum of 2 and 3 is 5.')");
    assert_eq!(lines[2], "['conditions', 'humidity', 'temperature']");
    assert!(
        lines[3].starts_with("Err('bad arguments for `get-sum`: $.a: expected a number"),
        "{}",
        lines[3]
    );
    assert!(
        lines[4].starts_with("Err("),
        "the server's own error result: {}",
        lines[4]
    );
    assert_eq!(lines[5], "True");
    assert!(
        lines[6].starts_with("Failed('no answer from the MCP server `ev`"),
        "{}",
        lines[6]
    );
    assert_eq!(lines[7], "Ok('Echo: still here')");
    // The server's standard error went to its log, not the terminal.
    assert!(d.join(".kora/mcp/ev.log").is_file());
    assert!(!r.stderr.contains("Starting default"), "{}", r.stderr);
}

#[test]
fn the_filesystem_server_reads_inside_its_folder_and_refuses_outside() {
    if servers().is_none() {
        return;
    }
    let d = temp_dir("kora-mcp-ref", "fs");
    std::fs::create_dir_all(d.join("allowed")).expect("dir");
    std::fs::write(d.join("allowed/plan.txt"), "ship on friday\n").expect("file");
    std::fs::write(d.join("outside.txt"), "not yours\n").expect("file");
    let allowed = d.join("allowed").display().to_string();
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[mcp.fs]\ncommand = \"node\"\nargs = [{:?}, {allowed:?}]\n",
            server("mcp-server-filesystem")
        ),
    )
    .expect("toml");
    std::fs::write(
        d.join("main.ko"),
        format!(
            "use mcp fs as fs\nprint(fs.read_text_file(path={:?}))\nprint(fs.read_text_file(path={:?}))\n",
            format!("{allowed}/plan.txt"),
            d.join("outside.txt").display().to_string()
        ),
    )
    .expect("ko");
    let r = run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert!(lines[0].contains("ship on friday"), "{}", r.stdout);
    assert!(
        lines[1].starts_with("Err(") && lines[1].contains("outside"),
        "{}",
        r.stdout
    );
}

#[test]
fn the_everything_server_answers_over_streamable_http() {
    if servers().is_none() {
        return;
    }
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("addr")
        .port();
    let mut child = std::process::Command::new("node")
        .arg(server("mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("node starts");
    let up = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    let d = temp_dir("kora-mcp-ref", "http");
    std::fs::write(
        d.join("kora.toml"),
        format!("[mcp.ev]\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ X-Trace = \"${{KORA_TEST_TRACE}}\" }}\ntimeout_secs = 5\n"),
    )
    .expect("toml");
    std::fs::write(
        d.join("main.ko"),
        "use mcp ev as ev\nprint(ev.echo(message=\"over http\"))\nprint(ev.get_sum(a=1.5, b=2))\n",
    )
    .expect("ko");
    let r = support::collect(
        support::kora_cmd()
            .args(["run", "main.ko"])
            .current_dir(&d)
            .env("KORA_TEST_TRACE", "t1"),
        None,
    );
    let missing = support::collect(
        support::kora_cmd()
            .args(["run", "main.ko"])
            .current_dir(&d)
            .env_remove("KORA_TEST_TRACE"),
        None,
    );
    let _ = child.kill();
    let _ = child.wait();
    assert!(up, "the HTTP server did not start");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "Ok('Echo: over http')\nOk('The sum of 1.5 and 2 is 3.5.')\n"
    );
    assert!(
        missing.stdout.contains("Failed(") && missing.stdout.contains("KORA_TEST_TRACE"),
        "{}",
        missing.stdout
    );
}

/// Records `examples/14_mcp.cassette.json` against the real filesystem server and the loopback
/// fake provider. Run by hand after changing the example:
/// `cargo test -p kora-cli --test mcp_servers -- --ignored`.
#[test]
#[ignore]
fn record_example_14_cassette() {
    use kora_testkit::{Behaviour, FakeProvider};
    use serde_json::json;
    if servers().is_none() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let fake = FakeProvider::start();
    fake.push(Behaviour::ToolCalls(vec![(
        "read_text_file".into(),
        json!({"path": "release.txt"}),
    )]));
    fake.push(Behaviour::AnswerWithUsage(
        json!({"ok": {"release": "2.4 (Heron)", "ships_on": "2026-12-17", "blocker": "the export bug (#812)"}, "uncertain": null}).to_string(),
        610,
        48,
    ));
    let d = temp_dir("kora-mcp-ref", "record14");
    std::fs::create_dir_all(d.join("examples/data")).expect("dir");
    std::fs::copy(
        root.join("data/release.txt"),
        d.join("examples/data/release.txt"),
    )
    .expect("notes");
    std::fs::copy(root.join("14_mcp.ko"), d.join("examples/14_mcp.ko")).expect("program");
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "[models]\ndefault = {{ name = \"gpt-4o-mini\", endpoint = \"{}\" }}\n\n[mcp.fs]\ncommand = \"node\"\nargs = [{:?}, \"examples/data\"]\n",
            fake.openai_endpoint(),
            server("mcp-server-filesystem")
        ),
    )
    .expect("kora.toml");
    let out = run_in(&d, &["run", "--record", "examples/14_mcp.ko"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    std::fs::copy(
        d.join("examples/14_mcp.cassette.json"),
        root.join("14_mcp.cassette.json"),
    )
    .expect("cassette copied");
    std::fs::write(root.join("14_mcp.out"), out.stdout).expect("out");
}
