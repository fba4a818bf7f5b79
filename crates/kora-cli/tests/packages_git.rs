//! Git dependencies end to end through `kora`: repositories made by the test itself, fetched
//! over `file://` URLs into a temp `KORA_HOME`. Locking, a moved tag, both checksum logs,
//! `kora update`, `kora vendor`, `kora install`, and fetching in parallel.

mod support;

use std::path::PathBuf;

use support::packages::{git, have_git, kora, ok, package, release, url, weather_repo, write};
use support::temp_dir;

/// `root/weather` (a repository whose `lib.ko` says "sunny", tagged `v1`) and `root/app/main.ko`
/// printing it; the dependency itself is each test's to declare. `None` without git.
fn weather_app(name: &str) -> Option<(PathBuf, PathBuf, PathBuf, String)> {
    if !have_git() {
        eprintln!("skipped: no git");
        return None;
    }
    let root = temp_dir("kora-pkg", name);
    let repo = root.join("weather");
    let first = weather_repo(&repo, "sunny");
    let app = root.join("app");
    write(
        &app.join("main.ko"),
        "use weather\n\nprint(weather.today())\n",
    );
    Some((root, repo, app, first))
}

#[test]
fn a_git_dependency_is_locked_and_a_moved_tag_changes_nothing_until_the_logs_refuse_it() {
    let Some((root, repo, app, first)) = weather_app("git") else {
        return;
    };
    write(
        &app.join("kora.toml"),
        &format!(
            "[dependencies]\nweather = {{ git = \"file://{}\", tag = \"v1\" }}\n",
            repo.display()
        ),
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "sunny\n");
    let lock = std::fs::read_to_string(app.join("kora.lock")).expect("kora.lock written");
    assert!(
        lock.contains(&first) && lock.contains("tree = \"sha256:"),
        "{lock}"
    );
    let sums = std::fs::read_to_string(app.join("kora.sums")).expect("kora.sums written");
    assert!(sums.contains(&first) && sums.contains("tag:v1"), "{sums}");
    assert!(
        root.join("kora/sums/kora.sums").is_file(),
        "the machine's log"
    );

    // The tag is force-pushed to another commit: the locked commit is still what runs.
    write(
        &repo.join("lib.ko"),
        "def today() -> str:\n    return \"stolen\"\n",
    );
    git(&repo, &["commit", "-q", "-am", "evil"]);
    git(&repo, &["tag", "-f", "v1"]);
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "sunny\n");
    // Even from a cold cache.
    std::fs::remove_dir_all(root.join("kora/cache")).expect("cache removed");
    git(&repo, &["tag", "keep", &first]);
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "sunny\n");

    // The lockfile deleted: the moved tag is fetched and refused by the project's log...
    std::fs::remove_file(app.join("kora.lock")).expect("lock removed");
    let r = kora(&app, &root, &["run", "main.ko"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("the tag was moved") && r.stderr.contains("kora.sums"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("stolen"));
    // ...and, in a fresh project with no log of its own, by the machine's.
    let other = root.join("other");
    std::fs::create_dir_all(&other).expect("dir");
    std::fs::copy(app.join("kora.toml"), other.join("kora.toml")).expect("copy");
    std::fs::copy(app.join("main.ko"), other.join("main.ko")).expect("copy");
    let r = kora(&other, &root, &["run", "main.ko"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("the tag was moved") && r.stderr.contains("sums"),
        "{}",
        r.stderr
    );
    assert!(
        !other.join("kora.lock").exists(),
        "nothing refused is locked"
    );
}

#[test]
fn update_refuses_a_bump_that_asks_for_more_until_accepted() {
    let Some((root, repo, app, v1)) = weather_app("update") else {
        return;
    };
    ok(&kora(
        &app,
        &root,
        &["add", "weather", "--git", &url(&repo), "--tag", "v1"],
    ));
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "sunny\n");
    // v2 reads the environment and releases a classified value.
    let v2 = release(
        &repo,
        "use env\n\n\ndef today() -> str:\n    key: str = env.get(\"WEATHER_KEY\") else:\n        return \"rainy\"\n    declassify key for fast:\n        return \"rainy\"\n    return \"rainy\"\n",
        "v2",
    );
    ok(&kora(
        &app,
        &root,
        &["add", "weather", "--git", &url(&repo), "--tag", "v2"],
    ));
    // The lock still rules until an update.
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "sunny\n");
    let lock_before = std::fs::read_to_string(app.join("kora.lock")).expect("lock");
    let r = kora(&app, &root, &["update"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("refused")
            && r.stdout.contains("+ uses `env` (needs the grant `env`)")
            && r.stdout.contains("+ lib.ko: declassify key for fast"),
        "{}",
        r.stdout
    );
    assert!(r.stderr.contains("--accept"), "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(app.join("kora.lock")).expect("lock"),
        lock_before,
        "a refused update leaves the lock"
    );
    assert!(lock_before.contains(&v1));
    let r = kora(&app, &root, &["run", "main.ko"]);
    assert_eq!(r.stdout, "sunny\n");
    // Accepted: locked at v2, and the run reads it.
    let r = kora(&app, &root, &["update", "weather", "--accept"]);
    ok(&r);
    assert!(r.stdout.contains("accepted"), "{}", r.stdout);
    let lock = std::fs::read_to_string(app.join("kora.lock")).expect("lock");
    assert!(lock.contains(&v2) && lock.contains("tag v2"), "{lock}");
    let r = kora(&app, &root, &["run", "main.ko"]);
    assert_eq!(r.code, 1, "env is not granted: {}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("package `weather`"), "{}", r.stderr);
    // A bump that asks for nothing more goes through without --accept.
    let v3 = release(
        &repo,
        "use env\n\n\ndef today() -> str:\n    key: str = env.get(\"WEATHER_KEY\") else:\n        return \"snowy\"\n    declassify key for fast:\n        return \"snowy\"\n    return \"snowy\"\n",
        "v3",
    );
    ok(&kora(
        &app,
        &root,
        &[
            "add",
            "weather",
            "--git",
            &url(&repo),
            "--tag",
            "v3",
            "--grant",
            "env",
        ],
    ));
    let r = kora(&app, &root, &["update"]);
    ok(&r);
    assert!(std::fs::read_to_string(app.join("kora.lock"))
        .expect("lock")
        .contains(&v3));
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "snowy\n");
    let r = kora(&app, &root, &["update"]);
    ok(&r);
    assert!(r.stdout.contains("weather: up to date"), "{}", r.stdout);
    let r = kora(&app, &root, &["update", "rain"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("no git dependency `rain`"),
        "{}",
        r.stderr
    );
}

#[test]
fn vendor_then_build_with_the_cache_and_the_origin_gone() {
    let Some((root, repo, app, _)) = weather_app("vendor") else {
        return;
    };
    ok(&kora(
        &app,
        &root,
        &["add", "weather", "--git", &url(&repo), "--tag", "v1"],
    ));
    ok(&kora(&app, &root, &["run", "main.ko"]));
    let r = kora(&app, &root, &["vendor"]);
    ok(&r);
    assert!(r.stdout.contains("vendor/weather"), "{}", r.stdout);
    assert!(app.join("vendor/weather/lib.ko").is_file());
    std::fs::remove_dir_all(root.join("kora/cache")).expect("cache removed");
    std::fs::remove_dir_all(&repo).expect("origin removed");
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "sunny\n");
    ok(&kora(&app, &root, &["check", "main.ko"]));
    assert!(!root.join("kora/cache").exists(), "nothing fetched");
    // `kora test` of the folder runs the program's tests, not the vendored package's.
    write(
        &app.join("vendor/weather/lib_test.ko"),
        "test \"vendored\":\n    assert False\n",
    );
    let t = kora(&app, &root, &["test"]);
    assert!(!t.stdout.contains("vendored"), "{}", t.stdout);
    std::fs::remove_file(app.join("vendor/weather/lib_test.ko")).expect("rm");
    // A vendored file changed by hand is refused against the lock.
    write(
        &app.join("vendor/weather/lib.ko"),
        "def today() -> str:\n    return \"tampered\"\n",
    );
    let r = kora(&app, &root, &["run", "main.ko"]);
    assert_eq!(r.code, 2, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("vendor/weather does not match kora.lock"),
        "{}",
        r.stderr
    );
    assert!(!r.stdout.contains("tampered"));
}

#[test]
fn install_fetches_exactly_the_locked_commits() {
    let Some((root, repo, app, v1)) = weather_app("install") else {
        return;
    };
    // A second repository: the two are fetched side by side.
    let clouds = root.join("clouds");
    package(&clouds, "clouds", "", &[("lib.ko", "KIND = \"cirrus\"\n")]);
    git(&clouds, &["init", "-q"]);
    git(&clouds, &["add", "-A"]);
    git(&clouds, &["commit", "-q", "-m", "c"]);
    write(
        &app.join("main.ko"),
        "use weather\nuse clouds\n\nprint(weather.today(), clouds.KIND)\n",
    );
    ok(&kora(
        &app,
        &root,
        &["add", "weather", "--git", &url(&repo), "--tag", "v1"],
    ));
    ok(&kora(
        &app,
        &root,
        &["add", "clouds", "--git", &url(&clouds), "--branch", "main"],
    ));
    ok(&kora(&app, &root, &["check", "main.ko"]));
    std::fs::remove_dir_all(root.join("kora/cache")).expect("cache removed");
    // The tag moves; install still fetches the locked commit.
    write(
        &repo.join("lib.ko"),
        "def today() -> str:\n    return \"stolen\"\n",
    );
    git(&repo, &["commit", "-q", "-am", "evil"]);
    git(&repo, &["tag", "-f", "v1"]);
    git(&repo, &["tag", "keep", &v1]);
    let r = kora(&app, &root, &["install"]);
    ok(&r);
    assert!(
        r.stdout.contains(&v1[..12]) && r.stdout.contains("clouds "),
        "{}",
        r.stdout
    );
    std::fs::remove_dir_all(&repo).expect("origin removed");
    std::fs::remove_dir_all(&clouds).expect("origin removed");
    let r = kora(&app, &root, &["run", "main.ko"]);
    ok(&r);
    assert_eq!(r.stdout, "sunny cirrus\n");
    let r = kora(&root, &root, &["install"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no kora.toml"), "{}", r.stderr);
}

/// A repository at `dir` holding package `name` (its `kora.toml` carrying `deps` after
/// `[dependencies]`), its `lib.ko` being `lib`, tagged `v1`.
fn tagged(dir: &std::path::Path, name: &str, deps: &str, lib: &str) {
    package(
        dir,
        name,
        &format!("\n[dependencies]\n{deps}"),
        &[("lib.ko", lib)],
    );
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", name]);
    git(dir, &["tag", "v1"]);
}

/// A `git` that, for `fetch`, leaves a mark and waits until the number of marks is even before
/// running the real one: two fetches meet only if they are under way at once. A fetch that
/// waited alone for 30 s says so in `alone` and goes on.
const BARRIER_GIT: &str = r#"#!/bin/sh
case " $* " in
*" fetch "*)
    : > "$KORA_TEST_BARRIER/start.$$"
    i=0
    while [ $i -lt 600 ]; do
        n=$(ls "$KORA_TEST_BARRIER" | grep -c '^start\.')
        [ $((n % 2)) -eq 0 ] && break
        sleep 0.05
        i=$((i + 1))
    done
    [ $i -ge 600 ] && echo "$*" >> "$KORA_TEST_BARRIER/alone"
    ;;
esac
exec "$KORA_TEST_REAL_GIT" "$@"
"#;

#[test]
fn run_fetches_the_packages_it_reaches_in_parallel_level_by_level() {
    if !have_git() {
        eprintln!("skipped: no git");
        return;
    }
    let root = temp_dir("kora-pkg", "parallel");
    for (name, leaf) in [("alpha", "gamma"), ("beta", "delta")] {
        tagged(
            &root.join(leaf),
            leaf,
            "",
            &format!("def name() -> str:\n    return \"{leaf}\"\n"),
        );
        tagged(
            &root.join(name),
            name,
            &format!(
                "{leaf} = {{ git = \"{}\", tag = \"v1\" }}\n",
                url(&root.join(leaf))
            ),
            &format!(
                "use {leaf}\n\n\ndef name() -> str:\n    return \"{name}+\" + {leaf}.name()\n"
            ),
        );
    }
    let app = root.join("app");
    write(
        &app.join("kora.toml"),
        &format!(
            "[dependencies]\nalpha = {{ git = \"{}\", tag = \"v1\" }}\nbeta = {{ git = \"{}\", tag = \"v1\" }}\nunused = {{ git = \"{}\", tag = \"v1\" }}\n",
            url(&root.join("alpha")),
            url(&root.join("beta")),
            url(&root.join("nowhere")),
        ),
    );
    write(
        &app.join("main.ko"),
        "use alpha\nuse beta\n\nprint(alpha.name(), beta.name())\n",
    );
    let real = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("git"))
        .find(|g| g.is_file())
        .expect("git on PATH");
    let bin = root.join("bin");
    write(&bin.join("git"), BARRIER_GIT);
    std::process::Command::new("chmod")
        .args(["+x"])
        .arg(bin.join("git"))
        .status()
        .expect("chmod");
    let barrier = root.join("barrier");
    std::fs::create_dir_all(&barrier).expect("barrier");
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    let r = support::collect(
        support::kora_cmd()
            .args(["run", "main.ko"])
            .current_dir(&app)
            .env("KORA_HOME", root.join("kora"))
            .env("HOME", root.join("home"))
            .env("PATH", path)
            .env("KORA_TEST_BARRIER", &barrier)
            .env("KORA_TEST_REAL_GIT", &real),
        None,
    );
    ok(&r);
    assert_eq!(r.stdout, "alpha+gamma beta+delta\n");
    let fetches = std::fs::read_dir(&barrier)
        .expect("barrier")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("start."))
        })
        .count();
    assert_eq!(fetches, 4, "one fetch per package reached");
    let alone = std::fs::read_to_string(barrier.join("alone")).unwrap_or_default();
    assert!(alone.is_empty(), "fetched one at a time:\n{alone}");
    // Every parallel fetch was locked and logged; the unused one was never fetched.
    let lock = std::fs::read_to_string(app.join("kora.lock")).expect("kora.lock");
    let sums = std::fs::read_to_string(app.join("kora.sums")).expect("kora.sums");
    for name in ["alpha", "beta", "gamma", "delta"] {
        assert!(
            lock.contains(&format!("name = \"{name}\"")),
            "{name}:\n{lock}"
        );
        assert!(sums.contains(&url(&root.join(name))), "{name}:\n{sums}");
    }
    assert!(!lock.contains("unused") && !sums.contains("nowhere"));
    let repos = std::fs::read_dir(root.join("kora/cache/git"))
        .expect("cache")
        .count();
    assert_eq!(repos, 4);
    // Locked and cached: the next run fetches nothing.
    let again = kora(&app, &root, &["run", "main.ko"]);
    ok(&again);
    assert_eq!(again.stdout, r.stdout);
}
