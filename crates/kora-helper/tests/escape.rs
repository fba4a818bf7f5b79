//! The seccomp escape battery: a small C program (built here with the system `cc`) tries each
//! way out of a helper's confinement; confined, every one is refused, and with the grant the
//! record allows, the allowed ones succeed.

#![cfg(target_os = "linux")]

use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use kora_helper::confine::confine;
use kora_helper::Needs;

const EPERM: i32 = 1;

fn build(dir: &Path) -> Option<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/escape/escape.c");
    let out = dir.join("escape");
    match Command::new("cc")
        .arg("-O1")
        .arg("-o")
        .arg(&out)
        .arg(&src)
        .status()
    {
        Ok(s) if s.success() => Some(out),
        Ok(s) => panic!("cc failed to build the escape battery: {s}"),
        Err(_) => {
            eprintln!("skipped: no `cc` on this machine to build the escape battery");
            None
        }
    }
}

/// What the case reported: `Ok(())` allowed, `Err(errno)` refused, `Err(-signal)` killed.
fn run(
    bin: &Path,
    case: &str,
    arg: &str,
    needs: Option<Needs>,
    stdout: Option<File>,
) -> Result<(), i32> {
    let mut cmd = Command::new(bin);
    cmd.args([case, arg]).stderr(Stdio::piped());
    cmd.stdout(stdout.map_or_else(Stdio::null, Stdio::from));
    if let Some(n) = needs {
        confine(&mut cmd, n).expect("the filter compiles");
    }
    let out = cmd.output().expect("the battery runs");
    let said = String::from_utf8_lossy(&out.stderr).to_string();
    if let Some(sig) = std::os::unix::process::ExitStatusExt::signal(&out.status) {
        return Err(-sig);
    }
    match out.status.code() {
        Some(0) => Ok(()),
        Some(1) => Err(said
            .trim()
            .strip_prefix("refused ")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{case}: odd report {said:?}"))),
        other => panic!("{case}: exit {other:?}: {said}"),
    }
}

const NONE: Option<Needs> = Some(Needs {
    net: false,
    write: false,
});
const NET: Option<Needs> = Some(Needs {
    net: true,
    write: false,
});
const WRITE: Option<Needs> = Some(Needs {
    net: false,
    write: true,
});
const ALL: Option<Needs> = Some(Needs {
    net: true,
    write: true,
});

struct Setup {
    _tmp: TempDir,
    dir: PathBuf,
    bin: PathBuf,
}

struct TempDir(PathBuf);
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn setup(name: &str) -> Option<Setup> {
    let dir = std::env::temp_dir().join(format!("kora-escape-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    let tmp = TempDir(dir.clone());
    let bin = build(&dir)?;
    Some(Setup {
        _tmp: tmp,
        dir,
        bin,
    })
}

fn path(s: &Setup, name: &str) -> String {
    s.dir.join(name).to_string_lossy().into_owned()
}

#[test]
fn without_net_no_inet_socket_and_no_connect() {
    let Some(s) = setup("net") else { return };
    let listener = TcpListener::bind("127.0.0.1:0").expect("listens");
    let port = listener.local_addr().expect("addr").port().to_string();
    for (case, arg) in [
        ("tcp_socket", ""),
        ("udp6_socket", ""),
        ("connect", port.as_str()),
        ("fork_exec", ""),
    ] {
        assert_eq!(
            run(&s.bin, case, arg, NONE, None),
            Err(EPERM),
            "{case} confined"
        );
        assert_eq!(
            run(&s.bin, case, arg, WRITE, None),
            Err(EPERM),
            "{case} with write only"
        );
        assert_eq!(run(&s.bin, case, arg, NET, None), Ok(()), "{case} with net");
    }
    // A Unix socket reaches nothing by itself: computing helpers may use one.
    assert_eq!(run(&s.bin, "unix_socket", "", NONE, None), Ok(()));
}

#[test]
fn without_write_no_file_is_created_changed_or_moved() {
    let Some(s) = setup("write") else { return };
    let existing = path(&s, "existing.txt");
    for (case, target) in [
        ("create", path(&s, "created.txt")),
        ("openat2", path(&s, "openat2.txt")),
        ("creat", path(&s, "creat.txt")),
        ("open_rdwr", existing.clone()),
        ("rename", existing.clone()),
        ("unlink", existing.clone()),
        ("truncate", existing.clone()),
    ] {
        std::fs::write(&existing, "kept").expect("writes");
        assert_eq!(
            run(&s.bin, case, &target, NONE, None),
            Err(EPERM),
            "{case} confined"
        );
        assert_eq!(
            run(&s.bin, case, &target, NET, None),
            Err(EPERM),
            "{case} with net only"
        );
        assert_eq!(
            std::fs::read_to_string(&existing).expect("still there"),
            "kept",
            "{case}"
        );
        if case != "open_rdwr" && case != "rename" && case != "unlink" && case != "truncate" {
            assert!(!Path::new(&target).exists(), "{case} made {target}");
        }
        assert_eq!(
            run(&s.bin, case, &target, WRITE, None),
            Ok(()),
            "{case} with write"
        );
    }
    std::fs::write(&existing, "kept").expect("writes");
    assert_eq!(
        run(&s.bin, "read", &existing, NONE, None),
        Ok(()),
        "reading stays allowed"
    );
}

#[test]
fn an_inherited_descriptor_carries_no_bytes_past_rlimit_fsize() {
    let Some(s) = setup("fsize") else { return };
    let out = s.dir.join("inherited.txt");
    let f = File::create(&out).expect("creates");
    assert_eq!(run(&s.bin, "fsize", "", NONE, Some(f)), Err(libc::EFBIG));
    assert_eq!(std::fs::metadata(&out).expect("exists").len(), 0);
    let f = File::create(&out).expect("creates");
    assert_eq!(run(&s.bin, "fsize", "", WRITE, Some(f)), Ok(()));
    assert_eq!(std::fs::metadata(&out).expect("exists").len(), 4096);
}

#[test]
fn ptrace_io_uring_and_x32_are_refused_whatever_the_grant() {
    let Some(s) = setup("always") else { return };
    // Unconfined, TRACEME succeeds: the refusal below is the filter's, not Yama's.
    assert_eq!(run(&s.bin, "ptrace_traceme", "", None, None), Ok(()));
    for case in ["ptrace_parent", "ptrace_traceme", "io_uring", "x32"] {
        for needs in [NONE, NET, WRITE, ALL] {
            assert_eq!(
                run(&s.bin, case, "", needs, None),
                Err(EPERM),
                "{case} with {needs:?}"
            );
        }
    }
    // Unconfined, the same calls either run or fail for a reason of the kernel's own (x32
    // compiled out gives ENOSYS), never with the filter's EPERM.
    for case in ["io_uring", "x32"] {
        assert_ne!(
            run(&s.bin, case, "", None, None),
            Err(EPERM),
            "{case} unconfined"
        );
    }
}
