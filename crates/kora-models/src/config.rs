//! Model entries and transport settings: where a call goes, which body it speaks, which variable holds its key.

use std::fmt;
use std::time::Duration;

/// Which request body an entry speaks. Names a wire format, not a company.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Api {
    /// `POST {endpoint}/chat/completions` — what nearly every hosted provider and gateway speaks.
    #[default]
    OpenAi,
    /// `POST {endpoint}/api/chat` — Ollama's native shape.
    Ollama,
}

impl Api {
    /// Parses the `api` value of a `[models]` entry: `"openai"` or `"ollama"`.
    pub fn parse(s: &str) -> Result<Api, ConfigError> {
        match s {
            "openai" => Ok(Api::OpenAi),
            "ollama" => Ok(Api::Ollama),
            other => Err(ConfigError::UnknownApi(other.to_string())),
        }
    }
}

/// How a typed result is constrained on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Structured {
    /// The provider enforces a JSON Schema (`response_format: json_schema` / Ollama `format: {schema}`).
    #[default]
    JsonSchema,
    /// The provider only guarantees some JSON object; the schema is stated in the system prompt.
    JsonObject,
    /// Nothing is enforced; the schema is stated in the prompt and the answer is read leniently.
    Prompt,
}

impl Structured {
    /// Parses `"json_schema"`, `"json_object"` or `"prompt"`.
    pub fn parse(s: &str) -> Result<Structured, ConfigError> {
        match s {
            "json_schema" => Ok(Structured::JsonSchema),
            "json_object" => Ok(Structured::JsonObject),
            "prompt" => Ok(Structured::Prompt),
            other => Err(ConfigError::UnknownStructured(other.to_string())),
        }
    }
}

/// One `[models]` entry, written out in full.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelEntry {
    /// The model's name as its provider spells it; never parsed.
    pub name: String,
    /// Base URL, e.g. `https://api.openai.com/v1` or `http://localhost:11434`.
    pub endpoint: String,
    pub api: Api,
    /// The *name* of the environment variable that holds the key. The key itself is never configuration.
    pub api_key_env: Option<String>,
    pub structured: Structured,
    /// The most tokens one answer may have (`max_tokens`, Ollama's `num_predict`); `None`
    /// sends nothing, so the server's own limit holds.
    pub max_output_tokens: Option<u32>,
}

pub const OPENAI_ENDPOINT: &str = "https://api.openai.com/v1";
pub const OPENAI_KEY_ENV: &str = "OPENAI_API_KEY";
pub const OLLAMA_ENDPOINT: &str = "http://localhost:11434";

impl ModelEntry {
    /// An OpenAI-shaped entry with no key variable and schema-enforced results.
    pub fn new(name: impl Into<String>, endpoint: impl Into<String>) -> ModelEntry {
        ModelEntry {
            name: name.into(),
            endpoint: endpoint.into(),
            api: Api::OpenAi,
            api_key_env: None,
            structured: Structured::JsonSchema,
            max_output_tokens: None,
        }
    }

    /// Parses the `provider:model` shorthand: `openai:gpt-4o-mini`, `ollama:llama3:8b`.
    /// Everything after the first colon is the model name, copied verbatim.
    pub fn parse_shorthand(spec: &str) -> Result<ModelEntry, ConfigError> {
        let Some((provider, name)) = spec.split_once(':') else {
            return Err(ConfigError::BadShorthand(spec.to_string()));
        };
        if name.is_empty() {
            return Err(ConfigError::BadShorthand(spec.to_string()));
        }
        match provider {
            "openai" => Ok(ModelEntry {
                name: name.to_string(),
                endpoint: OPENAI_ENDPOINT.to_string(),
                api: Api::OpenAi,
                api_key_env: Some(OPENAI_KEY_ENV.to_string()),
                structured: Structured::JsonSchema,
                max_output_tokens: None,
            }),
            "ollama" => Ok(ModelEntry {
                name: name.to_string(),
                endpoint: OLLAMA_ENDPOINT.to_string(),
                api: Api::Ollama,
                api_key_env: None,
                structured: Structured::JsonSchema,
                max_output_tokens: None,
            }),
            other => Err(ConfigError::UnknownProvider(other.to_string())),
        }
    }

    /// The URL a chat request is posted to.
    pub fn url(&self) -> String {
        let base = self.endpoint.trim_end_matches('/');
        match self.api {
            Api::OpenAi => format!("{base}/chat/completions"),
            Api::Ollama => format!("{base}/api/chat"),
        }
    }

    /// Whether this entry points at OpenAI's own API, where sending no key is always a mistake.
    pub fn is_openai_itself(&self) -> bool {
        host_of(&self.endpoint).eq_ignore_ascii_case("api.openai.com")
    }

    /// Whether the endpoint is on this machine (no proxy is used for it).
    pub fn is_loopback(&self) -> bool {
        let host = host_of(&self.endpoint);
        host.eq_ignore_ascii_case("localhost")
            || host.starts_with("127.")
            || host == "[::1]"
            || host == "::1"
    }

    /// Reads the key this entry asks for.
    ///
    /// - no `api_key_env`, any endpoint but OpenAI's own: `Ok(None)` — no Authorization header is sent;
    /// - no `api_key_env` on `api.openai.com`: an error suggesting `OPENAI_API_KEY`;
    /// - `api_key_env` names a variable that is unset or empty: an error naming that variable.
    pub fn api_key(&self) -> Result<Option<ApiKey>, ConfigError> {
        self.api_key_from(|var| std::env::var(var).ok())
    }

    /// [`ModelEntry::api_key`] with the environment supplied by the caller (for tests and embedding).
    pub fn api_key_from(
        &self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<ApiKey>, ConfigError> {
        match &self.api_key_env {
            None if self.is_openai_itself() => Err(ConfigError::NoKeyConfigured {
                model: self.name.clone(),
                suggested: OPENAI_KEY_ENV.to_string(),
            }),
            None => Ok(None),
            Some(var) => match lookup(var) {
                Some(v) if !v.trim().is_empty() => Ok(Some(ApiKey(v.trim().to_string()))),
                _ => Err(ConfigError::KeyUnset {
                    model: self.name.clone(),
                    var: var.clone(),
                }),
            },
        }
    }
}

/// The `host[:port]` part of a URL, without userinfo; empty when there is none.
fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if authority.starts_with('[') {
        // IPv6 literal: keep the brackets, drop the port.
        return authority.split_inclusive(']').next().unwrap_or(authority);
    }
    authority.split(':').next().unwrap_or("")
}

/// An API key read from the environment. Its value never appears in `Debug` or `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(value: impl Into<String>) -> ApiKey {
        ApiKey(value.into())
    }
    /// The secret itself, for the Authorization header and nothing else.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Transport knobs. `timeout_secs`, `call_timeout_secs` and `max_retries` come from
/// `[models]`; the rest are fixed in production and exist so tests can run the retry rules
/// in milliseconds. `docs/models.md` ("Retries and timeouts") is the user's account of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// The longest a request may stay silent: to connect, to be answered, between two reads
    /// of a stream (fractional seconds allowed). Default 60.
    pub timeout_secs: f64,
    /// The longest one call may take in all: every attempt, every wait between them and
    /// every piece of a stream. Default 300.
    pub call_timeout_secs: f64,
    /// Retries after the first attempt; 0 disables retrying. Default 3.
    pub max_retries: u32,
    /// The longest a provider's `Retry-After` may hold a thread. Default 30 s.
    pub retry_after_cap: Duration,
    /// Base of the exponential backoff (full jitter). Default 0.5 s.
    pub backoff_base: Duration,
    /// Ceiling of one computed backoff. Default 8 s.
    pub backoff_max: Duration,
}

/// What `[models] timeout_secs` may be: a tenth of a second to an hour.
pub const TIMEOUT_RANGE: (f64, f64) = (0.1, 3600.0);
/// What `[models] call_timeout_secs` may be: a tenth of a second to a day.
pub const CALL_TIMEOUT_RANGE: (f64, f64) = (0.1, 86_400.0);
/// What `[models] max_retries` may be.
pub const MAX_RETRIES: u32 = 10;

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            timeout_secs: 60.0,
            call_timeout_secs: 300.0,
            max_retries: 3,
            retry_after_cap: Duration::from_secs(30),
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(8),
        }
    }
}

/// `secs` as a duration when it lies in `range`, else `fallback`.
fn within(secs: f64, range: (f64, f64), fallback: u64) -> Duration {
    if secs >= range.0 && secs <= range.1 {
        Duration::try_from_secs_f64(secs).unwrap_or(Duration::from_secs(fallback))
    } else {
        Duration::from_secs(fallback)
    }
}

impl Settings {
    /// The silence timeout as a `Duration`; a value outside its range (which `kora.toml`
    /// refuses) falls back to the default.
    pub fn timeout(&self) -> Duration {
        within(self.timeout_secs, TIMEOUT_RANGE, 60)
    }

    /// The whole-call timeout as a `Duration`, with the same fallback rule.
    pub fn call_timeout(&self) -> Duration {
        within(self.call_timeout_secs, CALL_TIMEOUT_RANGE, 300)
    }
}

/// A configuration problem found before anything is sent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    BadShorthand(String),
    UnknownProvider(String),
    UnknownApi(String),
    UnknownStructured(String),
    /// OpenAI's own endpoint with no `api_key_env`.
    NoKeyConfigured {
        model: String,
        suggested: String,
    },
    /// The configured key variable is unset or empty. Carries the variable's name, never a value.
    KeyUnset {
        model: String,
        var: String,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::BadShorthand(s) => write!(
                f,
                "'{s}' is not a model spec: write provider:model (openai:gpt-4o-mini, ollama:llama3) or an entry with name and endpoint"
            ),
            ConfigError::UnknownProvider(p) => write!(
                f,
                "unknown provider '{p}' in a provider:model spec: use openai or ollama, or write the entry out with name, endpoint and api"
            ),
            ConfigError::UnknownApi(a) => {
                write!(f, "unknown api '{a}': expected \"openai\" or \"ollama\"")
            }
            ConfigError::UnknownStructured(s) => write!(
                f,
                "unknown structured mode '{s}': expected \"json_schema\", \"json_object\" or \"prompt\""
            ),
            ConfigError::NoKeyConfigured { model, suggested } => write!(
                f,
                "model '{model}' points at api.openai.com but names no key variable: add api_key_env = \"{suggested}\" and export {suggested}"
            ),
            ConfigError::KeyUnset { model, var } => write!(
                f,
                "environment variable {var} is not set (it holds the API key for model '{model}')"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shorthand_openai() {
        let e = ModelEntry::parse_shorthand("openai:gpt-4o-mini").unwrap();
        assert_eq!(e.name, "gpt-4o-mini");
        assert_eq!(e.endpoint, "https://api.openai.com/v1");
        assert_eq!(e.api, Api::OpenAi);
        assert_eq!(e.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
        assert_eq!(e.url(), "https://api.openai.com/v1/chat/completions");
    }

    #[test]
    fn shorthand_ollama_keeps_colons_in_name() {
        let e = ModelEntry::parse_shorthand("ollama:llama3:8b").unwrap();
        assert_eq!(e.name, "llama3:8b");
        assert_eq!(e.api, Api::Ollama);
        assert_eq!(e.api_key_env, None);
        assert_eq!(e.url(), "http://localhost:11434/api/chat");
    }

    #[test]
    fn shorthand_errors() {
        assert!(matches!(
            ModelEntry::parse_shorthand("gpt-4o"),
            Err(ConfigError::BadShorthand(_))
        ));
        assert!(matches!(
            ModelEntry::parse_shorthand("openai:"),
            Err(ConfigError::BadShorthand(_))
        ));
        let err = ModelEntry::parse_shorthand("anthropic:claude").unwrap_err();
        assert!(err.to_string().contains("anthropic"));
    }

    #[test]
    fn url_trims_trailing_slash() {
        let e = ModelEntry::new("m", "http://127.0.0.1:8080/v1/");
        assert_eq!(e.url(), "http://127.0.0.1:8080/v1/chat/completions");
        assert!(e.is_loopback());
        assert!(!e.is_openai_itself());
    }

    #[test]
    fn no_key_variable_means_no_key_off_openai() {
        let e = ModelEntry::new("local", "http://localhost:8000/v1");
        assert_eq!(e.api_key_from(|_| None).unwrap(), None);
    }

    #[test]
    fn openai_without_key_variable_is_an_error() {
        let e = ModelEntry::new("gpt-4o", "https://api.openai.com/v1");
        let err = e.api_key_from(|_| Some("x".into())).unwrap_err();
        assert!(err.to_string().contains("OPENAI_API_KEY"), "{err}");
    }

    #[test]
    fn unset_variable_is_named() {
        let mut e = ModelEntry::new("free", "https://openrouter.ai/api/v1");
        e.api_key_env = Some("OPENROUTER_API_KEY".into());
        let err = e.api_key_from(|_| None).unwrap_err();
        assert!(err.to_string().contains("OPENROUTER_API_KEY"), "{err}");
        let err = e.api_key_from(|_| Some("  ".into())).unwrap_err();
        assert!(err.to_string().contains("OPENROUTER_API_KEY"));
    }

    #[test]
    fn key_value_never_in_debug() {
        let mut e = ModelEntry::new("m", "https://api.openai.com/v1");
        e.api_key_env = Some("K".into());
        let key = e
            .api_key_from(|_| Some("sk-secret-123".into()))
            .unwrap()
            .unwrap();
        assert_eq!(key.expose(), "sk-secret-123");
        let dbg = format!("{key:?} {e:?}");
        assert!(!dbg.contains("sk-secret"), "{dbg}");
    }

    #[test]
    fn host_parsing() {
        assert_eq!(
            host_of("https://user:pw@api.openai.com:443/v1"),
            "api.openai.com"
        );
        assert_eq!(host_of("http://[::1]:11434"), "[::1]");
        assert_eq!(host_of("localhost:1234"), "localhost");
        assert_eq!(host_of(""), "");
    }

    #[test]
    fn parse_enums_and_settings() {
        assert_eq!(Api::parse("ollama").unwrap(), Api::Ollama);
        assert!(Api::parse("Ollama").is_err());
        assert_eq!(Structured::parse("prompt").unwrap(), Structured::Prompt);
        let s = Settings::default();
        assert_eq!(s.timeout(), Duration::from_secs(60));
        assert_eq!(s.max_retries, 3);
        let odd = Settings {
            timeout_secs: f64::NAN,
            ..Settings::default()
        };
        assert_eq!(odd.timeout(), Duration::from_secs(60));
        let small = Settings {
            timeout_secs: 0.25,
            ..Settings::default()
        };
        assert_eq!(small.timeout(), Duration::from_millis(250));
        let huge = Settings {
            timeout_secs: 1e30,
            call_timeout_secs: f64::INFINITY,
            ..Settings::default()
        };
        assert_eq!(huge.timeout(), Duration::from_secs(60));
        assert_eq!(huge.call_timeout(), Duration::from_secs(300));
    }
}
