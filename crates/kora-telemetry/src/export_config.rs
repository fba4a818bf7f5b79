//! Where a run's spans are exported, resolved once per command: `--otlp URL`, then the
//! standard `OTEL_EXPORTER_OTLP_*` variables (the traces-only ones first), then `[telemetry]`
//! in `kora.toml`; and the settings that go with it (encoding, headers, timeout).

use std::time::Duration;

use kora_models::redact::{display_url, Redactor};

/// `OTEL_EXPORTER_OTLP_TIMEOUT`'s default: ten seconds a request, and for the run's end.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How spans are encoded on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf`: `application/x-protobuf`, the OTLP default.
    Protobuf,
    /// `http/json`: OTLP JSON, `application/json`.
    Json,
}

impl Protocol {
    /// Reads an `OTEL_EXPORTER_OTLP_PROTOCOL` value; gRPC is refused by name.
    pub fn parse(s: &str) -> Result<Protocol, String> {
        match s.trim() {
            "http/protobuf" => Ok(Protocol::Protobuf),
            "http/json" => Ok(Protocol::Json),
            "grpc" => Err("gRPC is not supported: use http/protobuf or http/json, which collectors serve on port 4318".into()),
            other => Err(format!("unknown protocol {other:?}: use http/protobuf or http/json")),
        }
    }
}

/// Where and how a run's spans are exported.
#[derive(Clone, PartialEq, Eq)]
pub struct ExportConfig {
    /// The full URL requests are posted to (`.../v1/traces`).
    pub url: String,
    /// Extra headers (a hosted collector's key): never printed.
    pub headers: Vec<(String, String)>,
    pub protocol: Protocol,
    /// Each request's timeout, and how long the run's end waits for the rest.
    pub timeout: Duration,
}

impl std::fmt::Debug for ExportConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportConfig")
            .field("url", &display_url(&self.url))
            .field("headers", &self.headers.len())
            .field("protocol", &self.protocol)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// The traces URL of a collector's base URL: `/v1/traces` added, unless already there.
pub fn traces_url(base: &str) -> String {
    let base = base.trim();
    if base.trim_end_matches('/').ends_with("/v1/traces") {
        return base.to_string();
    }
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

fn is_http(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://")) && url.len() > "http://".len()
}

impl ExportConfig {
    /// What the command line, the environment and `[telemetry]` ask for, in that order of
    /// strength; `Ok(None)` when nothing asks for export. `Err` names the setting that is
    /// wrong (the run goes on without export).
    pub fn resolve(
        flag: Option<&str>,
        toml_endpoint: Option<&str>,
        toml_protocol: Option<&str>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<ExportConfig>, String> {
        let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let disabled = var("OTEL_SDK_DISABLED")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
            || var("OTEL_TRACES_EXPORTER").is_some_and(|v| v.trim().eq_ignore_ascii_case("none"));
        // Turning export off in the environment does not overrule an explicit `--otlp`.
        if disabled && flag.is_none() {
            return Ok(None);
        }
        let (url, from) = if let Some(f) = flag {
            (traces_url(f), "--otlp".to_string())
        } else if let Some(u) = var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
            (
                u.trim().to_string(),
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT".into(),
            )
        } else if let Some(u) = var("OTEL_EXPORTER_OTLP_ENDPOINT") {
            (traces_url(&u), "OTEL_EXPORTER_OTLP_ENDPOINT".into())
        } else if let Some(u) = toml_endpoint {
            (traces_url(u), "[telemetry] endpoint".into())
        } else {
            return Ok(None);
        };
        if !is_http(&url) {
            return Err(format!(
                "{from} is not an http:// or https:// URL: {:?}",
                display_url(&url)
            ));
        }
        let protocol = match var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
            .map(|p| (p, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
            .or_else(|| {
                var("OTEL_EXPORTER_OTLP_PROTOCOL").map(|p| (p, "OTEL_EXPORTER_OTLP_PROTOCOL"))
            }) {
            Some((p, name)) => Protocol::parse(&p).map_err(|e| format!("{name}: {e}"))?,
            None => match toml_protocol {
                Some(p) => Protocol::parse(p).map_err(|e| format!("[telemetry] protocol: {e}"))?,
                None => Protocol::Protobuf,
            },
        };
        let timeout = match var("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
            .map(|t| (t, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"))
            .or_else(|| {
                var("OTEL_EXPORTER_OTLP_TIMEOUT").map(|t| (t, "OTEL_EXPORTER_OTLP_TIMEOUT"))
            }) {
            Some((t, name)) => match t.trim().parse::<u64>() {
                Ok(ms) if (1..=600_000).contains(&ms) => Duration::from_millis(ms),
                _ => {
                    return Err(format!(
                        "{name}={t:?} is not a timeout: give milliseconds from 1 to 600000"
                    ))
                }
            },
            None => DEFAULT_TIMEOUT,
        };
        let mut headers = Vec::new();
        for name in [
            "OTEL_EXPORTER_OTLP_HEADERS",
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        ] {
            if let Some(h) = var(name) {
                for (k, v) in parse_headers(&h).map_err(|e| format!("{name}: {e}"))? {
                    // The traces-only variable overrides the general one, key by key.
                    headers.retain(|(old, _): &(String, String)| !old.eq_ignore_ascii_case(&k));
                    headers.push((k, v));
                }
            }
        }
        Ok(Some(ExportConfig {
            url,
            headers,
            protocol,
            timeout,
        }))
    }

    pub(crate) fn redactor(&self) -> Redactor {
        let mut r = Redactor::default();
        r.add_url(&self.url);
        for (_, v) in &self.headers {
            r.add(v);
        }
        r
    }
}

/// `key1=value1,key2=value2`, values percent-decoded. An entry without `=` or with an empty
/// key is an error naming its position (never its value, which may be a key).
pub fn parse_headers(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (i, part) in text.split(',').enumerate() {
        if part.trim().is_empty() {
            continue;
        }
        let Some((k, v)) = part.split_once('=') else {
            return Err(format!(
                "entry {} has no `=`: write key=value,key=value",
                i + 1
            ));
        };
        let k = k.trim();
        if k.is_empty() || !k.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
            return Err(format!("entry {} has no usable header name", i + 1));
        }
        let v = percent_decode(v.trim());
        if v.bytes().any(|b| b == b'\r' || b == b'\n') {
            return Err(format!("entry {} has a line break in its value", i + 1));
        }
        out.push((k.to_string(), v));
    }
    Ok(out)
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            ) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_string())
        }
    }

    #[test]
    fn the_flag_beats_the_environment_which_beats_the_file() {
        let e = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-key=a%3Db,other = 1 "),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "X-KEY=c"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
        ]);
        let c = ExportConfig::resolve(Some("http://flag:4318/"), Some("http://file"), None, &e)
            .unwrap()
            .unwrap();
        assert_eq!(c.url, "http://flag:4318/v1/traces");
        assert_eq!(c.protocol, Protocol::Json);
        assert_eq!(c.timeout, Duration::from_millis(2500));
        assert_eq!(
            c.headers,
            vec![("other".into(), "1".into()), ("X-KEY".into(), "c".into())]
        );
        let c = ExportConfig::resolve(None, Some("http://file"), None, &e)
            .unwrap()
            .unwrap();
        assert_eq!(c.url, "http://env:4318/v1/traces");
        let traces = env(&[
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://t:1/custom/path",
            ),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
        ]);
        let c = ExportConfig::resolve(None, None, None, &traces)
            .unwrap()
            .unwrap();
        assert_eq!(c.url, "http://t:1/custom/path", "used as given");
        let c = ExportConfig::resolve(
            None,
            Some("http://file/v1/traces"),
            Some("http/json"),
            &env(&[]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (c.url.as_str(), c.protocol),
            ("http://file/v1/traces", Protocol::Json)
        );
        assert_eq!(c.timeout, DEFAULT_TIMEOUT);
        assert!(ExportConfig::resolve(None, None, None, &env(&[]))
            .unwrap()
            .is_none());
        let off = env(&[
            ("OTEL_SDK_DISABLED", "true"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
        ]);
        assert!(ExportConfig::resolve(None, None, None, &off)
            .unwrap()
            .is_none());
    }

    #[test]
    fn bad_settings_name_themselves_and_never_a_header_value() {
        let grpc = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]);
        let e = ExportConfig::resolve(None, None, None, &grpc).unwrap_err();
        assert!(
            e.contains("OTEL_EXPORTER_OTLP_PROTOCOL") && e.contains("4318"),
            "{e}"
        );
        let bad = env(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=s3cret,broken"),
        ]);
        let e = ExportConfig::resolve(None, None, None, &bad).unwrap_err();
        assert!(e.contains("entry 2") && !e.contains("s3cret"), "{e}");
        let e = ExportConfig::resolve(
            None,
            None,
            None,
            &env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318")]),
        )
        .unwrap_err();
        assert!(e.contains("OTEL_EXPORTER_OTLP_ENDPOINT"), "{e}");
        let e = ExportConfig::resolve(
            None,
            None,
            None,
            &env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://e"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon"),
            ]),
        )
        .unwrap_err();
        assert!(e.contains("OTEL_EXPORTER_OTLP_TIMEOUT"), "{e}");
    }

    proptest! {
        #[test]
        fn header_text_never_panics(s in ".{0,60}") {
            let _ = parse_headers(&s);
        }
    }
}
