//! Keeping a classified value in a file without its text: a keyed digest when it can be read again, sealed when it must be replayed.
//!
//! Both use the machine key (`machine_key.rs`). A keyed digest (HMAC-SHA256 over the
//! value and where it was used) lets a resume check that a value it reads again is the one
//! the run saw, without the file saying what it was. A sealed value is encrypted with
//! ChaCha20-Poly1305 under a subkey drawn for it (HMAC of the machine key over 16 random
//! bytes) and a random nonce, bound to where it belongs (the associated data), so a sealed
//! record moved to another slot or another run does not open.

use base64::Engine as _;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305, NONCE_LEN};
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};

use super::machine_key::KEY_LEN;

const SALT_LEN: usize = 16;
/// Marks the format of a sealed value, so a later change of scheme can be told apart.
const PREFIX: &str = "k1:";

/// Names a key without saying anything about it: the first bytes of its HMAC over a fixed text.
/// A keyed digest starts with it, so a check against another machine's key says so.
pub fn key_id(key: &[u8; KEY_LEN]) -> String {
    let k = hmac::Key::new(hmac::HMAC_SHA256, key);
    hmac::sign(&k, b"kora key id").as_ref()[..4]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `KEYID:` and the HMAC-SHA256 of `value` in context `context` (hex).
pub fn keyed_digest(key: &[u8; KEY_LEN], context: &str, value: &[u8]) -> String {
    let k = hmac::Key::new(hmac::HMAC_SHA256, key);
    let mut ctx = hmac::Context::with_key(&k);
    ctx.update(&(context.len() as u64).to_le_bytes());
    ctx.update(context.as_bytes());
    ctx.update(value);
    let mac: String = ctx
        .sign()
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("{}:{mac}", key_id(key))
}

/// Whether a keyed digest was made with this key.
pub fn same_key(key: &[u8; KEY_LEN], digest: &str) -> bool {
    digest.split(':').next() == Some(key_id(key).as_str())
}

fn subkey(key: &[u8; KEY_LEN], salt: &[u8]) -> Result<LessSafeKey, String> {
    let k = hmac::Key::new(hmac::HMAC_SHA256, key);
    let derived = hmac::sign(&k, salt);
    UnboundKey::new(&CHACHA20_POLY1305, derived.as_ref())
        .map(LessSafeKey::new)
        .map_err(|_| "cannot make a sealing key".to_string())
}

/// `plain` encrypted for context `context`: `k1:` and base64 of salt, nonce, ciphertext and tag.
pub fn seal(key: &[u8; KEY_LEN], context: &str, plain: &[u8]) -> Result<String, String> {
    let mut head = [0u8; SALT_LEN + NONCE_LEN];
    SystemRandom::new()
        .fill(&mut head)
        .map_err(|_| "the system gave no random bytes to seal a value".to_string())?;
    let (salt, nonce) = head.split_at(SALT_LEN);
    let sealer = subkey(key, salt)?;
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| "bad nonce".to_string())?;
    let mut body = plain.to_vec();
    sealer
        .seal_in_place_append_tag(nonce, Aad::from(context.as_bytes()), &mut body)
        .map_err(|_| "cannot seal the value".to_string())?;
    let mut all = head.to_vec();
    all.extend_from_slice(&body);
    Ok(format!(
        "{PREFIX}{}",
        base64::engine::general_purpose::STANDARD_NO_PAD.encode(all)
    ))
}

/// The plain bytes of a sealed value, if it was sealed with this key for this context.
pub fn open(key: &[u8; KEY_LEN], context: &str, sealed: &str) -> Result<Vec<u8>, String> {
    let bad = || {
        "a sealed value does not open with this machine's key (the journal was copied from another machine, its key changed, or the value was altered)".to_string()
    };
    let text = sealed.strip_prefix(PREFIX).ok_or_else(bad)?;
    let all = base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(text)
        .map_err(|_| bad())?;
    if all.len() < SALT_LEN + NONCE_LEN {
        return Err(bad());
    }
    let (head, body) = all.split_at(SALT_LEN + NONCE_LEN);
    let (salt, nonce) = head.split_at(SALT_LEN);
    let opener = subkey(key, salt)?;
    let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| bad())?;
    let mut body = body.to_vec();
    let plain = opener
        .open_in_place(nonce, Aad::from(context.as_bytes()), &mut body)
        .map_err(|_| bad())?;
    Ok(plain.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; KEY_LEN] = [7; KEY_LEN];

    #[test]
    fn a_sealed_value_opens_only_in_its_own_context_with_its_own_key() {
        let s = seal(&KEY, "run r slot a/0", b"hunter2").expect("sealed");
        assert!(!s.contains("hunter2"));
        assert_eq!(open(&KEY, "run r slot a/0", &s).expect("opens"), b"hunter2");
        assert!(
            open(&KEY, "run r slot a/1", &s).is_err(),
            "moved to another slot"
        );
        assert!(
            open(&[8; KEY_LEN], "run r slot a/0", &s).is_err(),
            "another key"
        );
        let mut altered = s.clone().into_bytes();
        let last = altered.len() - 1;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        let altered = String::from_utf8(altered).expect("text");
        assert!(open(&KEY, "run r slot a/0", &altered).is_err());
        assert_ne!(
            seal(&KEY, "c", b"x").expect("a"),
            seal(&KEY, "c", b"x").expect("b")
        );
    }

    #[test]
    fn a_keyed_digest_depends_on_key_context_and_value() {
        let d = keyed_digest(&KEY, "env", b"v");
        assert_eq!(d.len(), 8 + 1 + 64);
        assert!(same_key(&KEY, &d) && !same_key(&[1; KEY_LEN], &d));
        assert_eq!(d, keyed_digest(&KEY, "env", b"v"));
        assert_ne!(d, keyed_digest(&KEY, "env", b"w"));
        assert_ne!(d, keyed_digest(&KEY, "en", b"vv"));
        assert_ne!(d, keyed_digest(&[1; KEY_LEN], "env", b"v"));
    }
}
