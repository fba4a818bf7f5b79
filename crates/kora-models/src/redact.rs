//! The one redaction pass over provider text: what a reason, a span attribute or a log line
//! may say about a call never includes the API key, an `Authorization` value, or the
//! password of an endpoint URL.
//!
//! Providers quote requests back: OpenAI's 401 says which key it was given, proxies echo
//! headers, and a `user:pass@` endpoint is sent as a `Basic` header that a gateway may
//! print. Everything the transport reports (and what the runtime builds from a reply's
//! text) passes through [`Redactor::clean`] once, where the secrets are known: the key read
//! from `api_key_env`, the endpoint's userinfo (raw, percent-decoded, and in the base64 form
//! `Basic` carries), and any `Bearer`/`Basic` credential, whoever's it is.

use std::borrow::Cow;

use base64::{engine::general_purpose::STANDARD as B64, Engine as _};

use crate::config::{ApiKey, ModelEntry};

/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// The secrets of one model entry, and the scan that removes them from text.
#[derive(Clone, Default)]
pub struct Redactor {
    secrets: Vec<String>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Redactor({} secrets)", self.secrets.len())
    }
}

impl Redactor {
    /// The secrets of `entry`: its key (read from its variable now) and its URL's userinfo.
    pub fn for_entry(entry: &ModelEntry) -> Redactor {
        let key = entry.api_key().ok().flatten();
        Redactor::with_key(entry, key.as_ref())
    }

    /// As `for_entry`, with the key already read.
    pub fn with_key(entry: &ModelEntry, key: Option<&ApiKey>) -> Redactor {
        let mut r = Redactor::default();
        if let Some(k) = key {
            r.add(k.expose());
        }
        r.add_url(&entry.endpoint);
        r
    }

    /// Adds one secret value (a header value an exporter sends, say).
    pub fn add(&mut self, secret: &str) {
        let s = secret.trim();
        if !s.is_empty() && !self.secrets.iter().any(|x| x == s) {
            self.secrets.push(s.to_string());
            // Longest first, so a secret containing another is removed whole.
            self.secrets.sort_by_key(|x| std::cmp::Reverse(x.len()));
        }
    }

    /// Adds the userinfo of `url`: as written, percent-decoded, and as `Basic` sends it.
    pub fn add_url(&mut self, url: &str) {
        let Some(info) = userinfo(url) else { return };
        let decoded = percent_decode(info);
        let (user, password) = match decoded.split_once(':') {
            Some((u, p)) => (u.to_string(), Some(p.to_string())),
            None => (decoded.clone(), None),
        };
        // `Basic` carries `user:password`, percent-decoded, in base64.
        let basic = B64.encode(format!("{user}:{}", password.as_deref().unwrap_or("")));
        self.add(&basic);
        self.add(info);
        self.add(&decoded);
        if let Some(p) = password {
            self.add(&p);
            if let Some((_, raw)) = info.split_once(':') {
                self.add(raw);
            }
        }
    }

    /// `text` with every known secret and every `Bearer`/`Basic` credential replaced.
    pub fn clean<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let out = self.clean_secrets(text);
        match credentials(&out) {
            Some(cleaned) => Cow::Owned(cleaned),
            None => out,
        }
    }

    /// `text` with the configured secrets replaced, and nothing else: for a model's answer,
    /// where "Bearer <token>" may be what was asked for (a code sample) rather than a leak.
    pub fn clean_secrets<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = Cow::Owned(out.replace(s.as_str(), REDACTED));
            }
        }
        out
    }

    /// Whether there is any configured secret to look for.
    pub fn has_secrets(&self) -> bool {
        !self.secrets.is_empty()
    }

    /// `clean` applied to `text` where it stands; nothing is allocated when nothing changes.
    pub fn clean_in_place(&self, text: &mut String) {
        if let Cow::Owned(c) = self.clean(text) {
            *text = c;
        }
    }

    /// `clean` into an owned string.
    pub fn cleaned(&self, text: &str) -> String {
        self.clean(text).into_owned()
    }
}

/// The userinfo of a URL (`user:pass` in `https://user:pass@host/`), when it has one.
fn userinfo(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority
        .rsplit_once('@')
        .map(|(info, _)| info)
        .filter(|i| !i.is_empty())
}

/// `url` as messages show it: the userinfo left out.
pub fn display_url(url: &str) -> Cow<'_, str> {
    let Some(info) = userinfo(url) else {
        return Cow::Borrowed(url);
    };
    let at = url.find(info).unwrap_or(0);
    let mut out = String::with_capacity(url.len());
    out.push_str(&url[..at]);
    out.push_str(&url[at + info.len() + 1..]);
    Cow::Owned(out)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Where the next `Bearer ` / `Basic ` (any case) starting a word begins at or after `from`,
/// and the word's length with its space.
fn next_scheme(bytes: &[u8], from: usize) -> Option<(usize, usize)> {
    (from..bytes.len()).find_map(|i| {
        if i > 0 && bytes[i - 1].is_ascii_alphanumeric() {
            return None;
        }
        ["bearer ", "basic "].iter().find_map(|w| {
            bytes
                .get(i..i + w.len())
                .filter(|b| b.eq_ignore_ascii_case(w.as_bytes()))
                .map(|_| (i, w.len()))
        })
    })
}

/// `text` with the credential after each `Bearer ` / `Basic ` (any case) replaced; `None`
/// when there is none. Nothing is allocated for text that holds none.
fn credentials(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let (mut from, mut search) = (0, 0);
    while let Some((start, len)) = next_scheme(bytes, search) {
        let token_at = start + len;
        let token_len = text[token_at..]
            .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | ',' | ';' | '}' | ']'))
            .unwrap_or(text.len() - token_at);
        if token_len > 0 && &text[token_at..token_at + token_len] != REDACTED {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len()));
            o.push_str(&text[from..token_at]);
            o.push_str(REDACTED);
            from = token_at + token_len;
        }
        search = token_at + token_len;
    }
    let mut o = out?;
    o.push_str(&text[from..]);
    Some(o)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(endpoint: &str) -> ModelEntry {
        ModelEntry::new("m", endpoint)
    }

    #[test]
    fn keys_passwords_and_credentials_are_removed() {
        let e = entry("https://ann:p%40ss-w0rd@gw.example/v1");
        let r = Redactor::with_key(&e, Some(&ApiKey::new("sk-live-123456")));
        let basic = B64.encode("ann:p@ss-w0rd");
        let said = format!(
            "Incorrect API key provided: sk-live-123456 (Authorization: Bearer sk-live-123456); \
             got Basic {basic} for https://ann:p%40ss-w0rd@gw.example/v1 and p@ss-w0rd"
        );
        let clean = r.cleaned(&said);
        for secret in ["sk-live-123456", "p%40ss-w0rd", "p@ss-w0rd", basic.as_str()] {
            assert!(!clean.contains(secret), "{secret} in {clean}");
        }
        assert!(
            clean.contains("Incorrect API key provided: [redacted]"),
            "{clean}"
        );
        // Someone else's credential, never configured here, goes too.
        assert_eq!(
            r.cleaned("header was 'Bearer abc.def', fine"),
            "header was 'Bearer [redacted]', fine"
        );
        assert_eq!(r.clean("nothing secret"), "nothing secret");
        assert!(matches!(r.clean("nothing secret"), Cow::Borrowed(_)));
        // "Basically" is not a credential.
        assert_eq!(r.cleaned("Basically fine"), "Basically fine");
    }

    #[test]
    fn urls_are_shown_without_userinfo() {
        assert_eq!(
            display_url("https://u:pw@host:8443/v1/chat/completions"),
            "https://host:8443/v1/chat/completions"
        );
        assert_eq!(
            display_url("http://127.0.0.1:9/v1"),
            "http://127.0.0.1:9/v1"
        );
        assert_eq!(display_url("http://host/a@b"), "http://host/a@b");
    }

    proptest! {
        #[test]
        fn a_secret_never_survives(secret in "[A-Za-z0-9._~-]{1,40}", before in ".{0,40}", after in ".{0,40}") {
            let mut r = Redactor::default();
            r.add(&secret);
            let clean = r.cleaned(&format!("{before}{secret}{after}"));
            prop_assert!(!clean.contains(&secret) || secret.len() < REDACTED.len() && REDACTED.contains(&secret));
        }

        #[test]
        fn credentials_never_panic(text in ".{0,80}") {
            let _ = Redactor::default().cleaned(&text);
        }
    }
}
