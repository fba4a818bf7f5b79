//! End to end: the standard library through the `kora` binary, with real files, SQLite and a loopback HTTP server.
//!
//! The HTTP server is started by each test on 127.0.0.1 and answers from a
//! fixed script; nothing here reaches the internet.

mod support;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kora_testkit::http::{read_request, write_plain};
use support::Run;

fn dir(name: &str) -> PathBuf {
    support::temp_dir("kora-stdlib", name)
}

fn kora(args: &[&str], cwd: &Path) -> Run {
    support::run_in(cwd, args)
}

/// What the scripted server does for one path.
#[derive(Clone, Copy)]
enum Reply {
    Json(&'static str),
    Status(u16),
    /// 503 with `Retry-After: 0` this many times, then the JSON.
    FlakyThen(usize, &'static str),
    /// Accepts and never answers.
    Stall,
}

struct Server {
    port: u16,
    hits: Arc<Mutex<Vec<(String, String, String)>>>,
}

fn serve(routes: Vec<(&'static str, Reply)>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let port = listener.local_addr().expect("addr").port();
    let hits = Arc::new(Mutex::new(Vec::new()));
    let seen = hits.clone();
    let flaky = Arc::new(AtomicUsize::new(0));
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let routes = routes.clone();
            let seen = seen.clone();
            let flaky = flaky.clone();
            std::thread::spawn(move || {
                let Some(req) = read_request(&mut conn) else {
                    return;
                };
                let body = String::from_utf8_lossy(&req.raw_body).into_owned();
                let ctype = req.header("content-type").unwrap_or("").to_string();
                seen.lock().expect("lock").push((
                    req.method.clone(),
                    req.path.clone(),
                    format!("{ctype}|{body}"),
                ));
                let reply = routes
                    .iter()
                    .find(|(p, _)| *p == req.path)
                    .map(|r| r.1)
                    .unwrap_or(Reply::Status(404));
                let _ = match reply {
                    Reply::Json(b) => {
                        write_plain(&mut conn, 200, "application/json", &[], b.as_bytes())
                    }
                    Reply::Status(s) => {
                        write_plain(&mut conn, s, "text/plain", &[], b"nothing here")
                    }
                    Reply::FlakyThen(n, b) => {
                        if flaky.fetch_add(1, Ordering::SeqCst) < n {
                            write_plain(
                                &mut conn,
                                503,
                                "text/plain",
                                &[("Retry-After", "0".into())],
                                b"busy",
                            )
                        } else {
                            write_plain(&mut conn, 200, "application/json", &[], b.as_bytes())
                        }
                    }
                    Reply::Stall => {
                        std::thread::sleep(Duration::from_secs(20));
                        Ok(())
                    }
                };
            });
        }
    });
    Server { port, hits }
}

fn run_program(name: &str, program: &str) -> (PathBuf, Run) {
    let d = dir(name);
    std::fs::write(d.join("main.ko"), program).expect("program");
    let r = kora(&["run", "main.ko"], &d);
    (d, r)
}

#[test]
fn http_get_reads_json_into_a_record_and_404_is_err() {
    let s = serve(vec![("/user", Reply::Json(r#"{"name": "Ada", "id": 7}"#))]);
    let program = format!(
        r#"use http
use json

type User:
    name: str
    id: int

def fetch(url: str) -> Result[User]:
    r: http.Response = http.get(url, headers={{"x-trace": "t1"}}, timeout=5.0) else (why, kind):
        return Err(why)
    print(r.status, r.headers["content-type"])
    return json.parse(r.body)

print(fetch("http://127.0.0.1:{p}/user"))
match fetch("http://127.0.0.1:{p}/missing"):
    case Ok(u):
        print("unexpected", u)
    case Err(why):
        print("failed:", why)
"#,
        p = s.port
    );
    let (_, r) = run_program("get", &program);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let port = s.port;
    assert_eq!(
        r.stdout,
        format!(
            "200 application/json\nOk(User(name='Ada', id=7))\nfailed: HTTP 404 from http://127.0.0.1:{port}/missing: nothing here\n"
        )
    );
    let hits = s.hits.lock().expect("lock");
    assert_eq!(hits.len(), 2, "a 404 is not retried: {hits:?}");
}

#[test]
fn http_get_retries_a_busy_server_and_post_sends_json_once() {
    let s = serve(vec![
        ("/flaky", Reply::FlakyThen(2, r#"{"ok": true}"#)),
        ("/busy", Reply::Status(503)),
    ]);
    let program = format!(
        r#"use http

r: Result[http.Response] = http.get("http://127.0.0.1:{p}/flaky")
match r:
    case Ok(resp):
        print(resp.status, resp.body)
    case Err(why):
        print("failed:", why)
match http.post("http://127.0.0.1:{p}/busy", {{"item": "it's", "n": 2}}):
    case Ok(resp):
        print("unexpected", resp.status)
    case Err(why):
        print("post failed:", why)
"#,
        p = s.port
    );
    let (_, r) = run_program("retry", &program);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("200 {\"ok\": true}\n"), "{}", r.stdout);
    assert!(r.stdout.contains("post failed: HTTP 503"), "{}", r.stdout);
    let hits = s.hits.lock().expect("lock");
    let gets = hits.iter().filter(|h| h.0 == "GET").count();
    let posts: Vec<_> = hits.iter().filter(|h| h.0 == "POST").collect();
    assert_eq!(gets, 3, "two 503s then a 200: {hits:?}");
    assert_eq!(posts.len(), 1, "a POST is never retried: {hits:?}");
    assert_eq!(
        posts[0].2,
        "application/json|{\"item\": \"it's\", \"n\": 2}"
    );
}

#[test]
fn http_stalled_server_times_out_as_err() {
    let s = serve(vec![("/stall", Reply::Stall)]);
    let program = format!(
        r#"use http

match http.get("http://127.0.0.1:{p}/stall", timeout=0.3):
    case Ok(resp):
        print("unexpected", resp.status)
    case Err(why):
        print(why)
"#,
        p = s.port
    );
    let started = Instant::now();
    let (_, r) = run_program("stall", &program);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("timed out") && r.stdout.contains("after 3 attempts"),
        "{}",
        r.stdout
    );
    // The stall lasts 20 s per request; finishing well before proves the timeout cut it.
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[test]
fn notes_are_readable_from_outside_the_run() {
    let d = dir("notes");
    std::fs::write(
        d.join("main.ko"),
        r#"use notes

def main() -> None:
    notes.write("step", 3)
    notes.write("files", ["a.txt", "b's.txt"])
    notes.write("step", 4)
    n: int = notes.read("step", default=0) else:
        print("unreadable")
        return
    print(n, notes.run_id())

main()
"#,
    )
    .expect("program");
    let r = kora(&["run", "--run-id", "job-1", "main.ko"], &d);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "4 job-1\n");
    assert!(d.join(".kora/notes/job-1/notes.jsonl").is_file());
    let dir_arg = d.to_string_lossy().into_owned();
    let shown = kora(&["notes", "--dir", &dir_arg, "job-1"], Path::new("/"));
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert_eq!(shown.stdout, "step = 4\nfiles = [\"a.txt\",\"b's.txt\"]\n");
    let one = kora(&["notes", "job-1", "step"], &d);
    assert_eq!(
        (one.code, one.stdout.as_str()),
        (0, "4\n"),
        "{}",
        one.stderr
    );
    let list = kora(&["notes", "--dir", &dir_arg], Path::new("/"));
    assert_eq!(list.stdout, "job-1\n");
    let missing = kora(&["notes", "--dir", &dir_arg, "job-2"], Path::new("/"));
    assert_eq!(missing.code, 1);
    assert!(
        missing.stderr.contains("job-2 has no notes"),
        "{}",
        missing.stderr
    );
    let bad = kora(&["run", "--run-id", "../x", "main.ko"], &d);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
}

#[test]
fn relative_paths_are_the_programs_folder_and_sqlite_persists() {
    let d = dir("paths");
    std::fs::write(d.join("names.txt"), "Ada\nO'Brien\n").expect("data");
    std::fs::write(
        d.join("load.ko"),
        r#"use fs
use sql
use env

def main() -> None:
    db: sql.Db = sql.open("people.db") else (why, kind):
        print(why)
        return
    names: list[str] = fs.lines("names.txt") else (why, kind):
        print(why)
        return
    db.execute("CREATE TABLE IF NOT EXISTS people (name TEXT)")
    for n in names:
        db.execute("INSERT INTO people (name) VALUES (?)", [n])
    print(env.args())

main()
"#,
    )
    .expect("program");
    std::fs::write(
        d.join("show.ko"),
        r#"use sql

def main() -> None:
    db: sql.Db = sql.open("people.db") else (why, kind):
        print(why)
        return
    rows: list[tuple[str]] = db.query("SELECT name FROM people WHERE name = ?", ["O'Brien"]) else (why, kind):
        print(why)
        return
    print(rows)

main()
"#,
    )
    .expect("program");
    let load = d.join("load.ko").to_string_lossy().into_owned();
    let show = d.join("show.ko").to_string_lossy().into_owned();
    // Run from `/`: the files are found next to the program, not in the working directory.
    let r = kora(&["run", &load, "one", "--two"], Path::new("/"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "['one', '--two']\n");
    assert!(d.join("people.db").is_file());
    let r = kora(&["run", &show], Path::new("/"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "[(\"O'Brien\",)]\n");
}
