//! The machine's key for what Kora keeps of classified values: `~/.kora/key`, made once, readable by its owner only.
//!
//! A journal or a notes file may outlive the run and be copied anywhere; the key
//! stays in the person's home folder. `$HOME` decides where that is (tests point
//! it at a folder of their own). The key is made the first time a classified value
//! has to be kept, so a run that never meets one never touches the home folder.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The key's length: a key for HMAC-SHA256 and, through it, for sealing.
pub const KEY_LEN: usize = 32;

/// The key, or why there is none (read once per process).
pub fn key() -> Result<&'static [u8; KEY_LEN], String> {
    static KEY: OnceLock<Result<[u8; KEY_LEN], String>> = OnceLock::new();
    KEY.get_or_init(|| {
        let dir = home()?.join(".kora");
        load_or_make(&dir)
    })
    .as_ref()
    .map_err(Clone::clone)
}

fn home() -> Result<PathBuf, String> {
    ["HOME", "USERPROFILE"]
        .iter()
        .filter_map(std::env::var_os)
        .find(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            "there is no home folder ($HOME is not set) to keep kora's key in, so a classified value cannot be kept; set HOME".to_string()
        })
}

/// Reads the key under `dir`, making it (and `dir`) first if there is none.
pub fn load_or_make(dir: &Path) -> Result<[u8; KEY_LEN], String> {
    let path = dir.join("key");
    match std::fs::read_to_string(&path) {
        Ok(text) => return parse(&text, &path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot read kora's key {}: {e}", path.display())),
    }
    make_dir(dir)?;
    let mut key = [0u8; KEY_LEN];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut key)
        .map_err(|_| "the system gave no random bytes for kora's key".to_string())?;
    let text: String = key.iter().map(|b| format!("{b:02x}")).collect::<String>() + "\n";
    // Written aside and linked into place: two processes making it at once agree on one key,
    // and nobody reads a half-written one.
    let tmp = dir.join(format!("key.{}.new", std::process::id()));
    let io = |e: std::io::Error| format!("cannot write kora's key {}: {e}", path.display());
    {
        let mut f = private_file(&tmp).map_err(io)?;
        f.write_all(text.as_bytes()).map_err(io)?;
        f.sync_all().map_err(io)?;
    }
    let linked = std::fs::hard_link(&tmp, &path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(key),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read kora's key {}: {e}", path.display()))?;
            parse(&text, &path)
        }
        Err(e) => Err(io(e)),
    }
}

fn parse(text: &str, path: &Path) -> Result<[u8; KEY_LEN], String> {
    let hex = text.trim();
    let mut key = [0u8; KEY_LEN];
    let ok = hex.len() == 2 * KEY_LEN
        && key.iter_mut().enumerate().all(|(i, b)| {
            match u8::from_str_radix(hex.get(2 * i..2 * i + 2).unwrap_or("zz"), 16) {
                Ok(v) => {
                    *b = v;
                    true
                }
                Err(_) => false,
            }
        });
    if ok {
        Ok(key)
    } else {
        Err(format!(
            "kora's key {} is damaged (it should be {} hex digits); restore it from a backup, since what was sealed with it cannot be read without it",
            path.display(),
            2 * KEY_LEN
        ))
    }
}

fn make_dir(dir: &Path) -> Result<(), String> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

fn private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_made_once_private_and_read_back() {
        let dir = std::env::temp_dir().join(format!("kora-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let first = load_or_make(&dir.join(".kora")).expect("made");
        let again = load_or_make(&dir.join(".kora")).expect("read");
        assert_eq!(first, again);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.join(".kora/key"))
                .expect("key")
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(dir.join(".kora/key"), "not a key\n").expect("damage");
        let e = load_or_make(&dir.join(".kora")).expect_err("damaged");
        assert!(e.contains("damaged"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
