//! `bytes` end to end through the `kora` binary: `fs.bytes` returns it, the checker knows its
//! type, and it behaves as Python's (`len`, indexing, slicing, iteration, `==`, its text,
//! `bytes(...)`, `decode`, `b"..."` literals and `in`).

mod support;

use support::{run_in, temp_dir};

fn project(name: &str, program: &str, blob: &[u8]) -> std::path::PathBuf {
    let d = temp_dir("kora-bytes", name);
    std::fs::write(d.join("main.ko"), program).expect("program");
    std::fs::write(d.join("blob.bin"), blob).expect("blob");
    d
}

#[test]
fn fs_bytes_returns_bytes_that_behave_like_pythons() {
    let program = r#"use fs

def main() -> None:
    data: bytes = fs.bytes("blob.bin") else (why, kind):
        print(kind, why)
        return
    print(len(data), data[0], data[-1], data[1:3])
    print(data)
    print(list(data)[:4])
    total = 0
    for b in data:
        total += b
    print(total)
    print(data == bytes([0, 97, 98, 255, 39]), data == bytes([0]))
    match bytes("héllo", "utf-8").decode():
        case Ok(t):
            print(t, len(bytes("héllo", "utf-8")))
        case _:
            print("no text")
    match data.decode():
        case Ok(t):
            print("decoded", t)
        case Err(why):
            print(why)

main()
"#;
    let d = project("behave", program, b"\x00ab\xff'");
    let r = run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout,
        "5 0 39 b'ab'\nb\"\\x00ab\\xff'\"\n[0, 97, 98, 255]\n489\nTrue False\nhéllo 6\nthe bytes are not UTF-8: byte 3 (0xff) starts no character\n"
    );
}

#[test]
fn the_checker_knows_fs_bytes_is_bytes_not_a_list() {
    let program = r#"use fs

data: list[int] = fs.bytes("blob.bin") else:
    print("no file")
"#;
    let d = project("typed", program, b"x");
    let r = run_in(&d, &["check", "main.ko"]);
    assert_ne!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(all.contains("main.ko:3"), "{all}");
    assert!(all.contains("bytes"), "{all}");
}

#[test]
fn bad_bytes_arguments_are_errors_naming_the_rule() {
    for (arg, want) in [
        ("[1, 300]", "bytes must be in range(0, 256)"),
        ("\"text\"", "string argument without an encoding"),
        ("[\"a\"]", "cannot be interpreted as an integer"),
    ] {
        let program = format!("print(bytes({arg}))\n");
        let d = project("bad", &program, b"");
        let r = run_in(&d, &["run", "main.ko"]);
        assert_eq!(r.code, 1, "{arg}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(want), "{arg}: {}", r.stderr);
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
    }
}

#[test]
fn bytes_literals_in_and_concatenation_behave_like_pythons() {
    let program = r#"use fs

magic = b"%PDF" b"-1.4\n"
print(magic, len(magic), magic[0])
print(b'\x00\xff\101' == bytes([0, 255, 65]), rb"\x" == bytes([92, 120]), b"\u0041")
data: bytes = fs.bytes("blob.bin") else:
    exit(3)
print(data[:5] == magic[:5], b"PDF" in data, b"" in data, 37 in data, 7 in data, b"PDG" not in data)
x: bytes = b""
print(x, len(x), bool(x), bool(b"a"))
print(b"ab" + b"c", b"ab" * 2, 2 * b"x", b"ab" * -1)
"#;
    let d = project("literal", program, b"%PDF-1.7 rest");
    let r = run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert_eq!(
        r.stdout,
        "b'%PDF-1.4\\n' 9 37\nTrue True b'\\\\u0041'\nTrue True True True False True\nb'' 0 False True\nb'abc' b'abab' b'xx' b''\n"
    );
    // An int past a byte, or text, on the left of `in`: Python's errors.
    for (left, want) in [
        ("300", "byte must be in range(0, 256)"),
        ("\"P\"", "a bytes-like object is required, not 'str'"),
    ] {
        let d = project("in-bad", &format!("print({left} in b\"PDF\")\n"), b"");
        let r = run_in(&d, &["run", "main.ko"]);
        assert_eq!(r.code, 1, "{left}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(want), "{left}: {}", r.stderr);
    }
    // Only ASCII is written in a bytes literal; the diagnostic points at the character.
    let d = project("nonascii", "x = b\"café\"\n", b"");
    let r = run_in(&d, &["check", "main.ko"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    let all = format!("{}{}", r.stdout, r.stderr);
    assert!(
        all.contains("E0007") && all.contains("main.ko:1:10"),
        "{all}"
    );
}
