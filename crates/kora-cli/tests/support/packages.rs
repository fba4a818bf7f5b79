//! Packages made by the tests themselves: a program folder's `kora` run with its own
//! `KORA_HOME`, package folders, local git repositories and their `file://` URLs.

use std::path::Path;

use super::{collect, kora_cmd, Run};

/// `kora ARGS` in `cwd`, with `KORA_HOME` (and `HOME`) inside `home`.
pub fn kora(cwd: &Path, home: &Path, args: &[&str]) -> Run {
    collect(
        kora_cmd()
            .args(args)
            .current_dir(cwd)
            .env("KORA_HOME", home.join("kora"))
            .env("HOME", home.join("home")),
        None,
    )
}

pub fn write(path: &Path, text: &str) {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).expect("folder");
    }
    std::fs::write(path, text).expect("write");
}

/// A package folder: `kora.toml` with `[package]` (plus `extra` lines) and its files.
pub fn package(dir: &Path, name: &str, extra: &str, files: &[(&str, &str)]) {
    write(
        &dir.join("kora.toml"),
        &format!("[package]\nname = \"{name}\"\nversion = \"0.1.0\"\n{extra}"),
    );
    for (f, text) in files {
        write(&dir.join(f), text);
    }
}

pub fn ok(r: &Run) {
    assert_eq!(r.code, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
}

/// Runs `git ARGS` in `dir`, as a fixed author, and insists it worked.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "tag.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

pub fn have_git() -> bool {
    std::process::Command::new("git")
        .arg("--version")
        .output()
        .is_ok()
}

/// A repository holding package `weather` whose `lib.ko` says `says`, tagged `v1`.
pub fn weather_repo(dir: &Path, says: &str) -> String {
    package(
        dir,
        "weather",
        "",
        &[(
            "lib.ko",
            &format!("def today() -> str:\n    return \"{says}\"\n"),
        )],
    );
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", says]);
    git(dir, &["tag", "-f", "v1"]);
    git(dir, &["rev-parse", "HEAD"])
}

/// `file://` URL of a folder.
pub fn url(dir: &Path) -> String {
    format!("file://{}", dir.display())
}

/// Commits `lib` as the repository's `lib.ko` and tags it `tag`; returns the commit.
pub fn release(repo: &Path, lib: &str, tag: &str) -> String {
    write(&repo.join("lib.ko"), lib);
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "-q", "-m", tag]);
    git(repo, &["tag", tag]);
    git(repo, &["rev-parse", "HEAD"])
}
