//! `[telemetry]` of `kora.toml`: where a run's spans are exported over OTLP/HTTP, if anywhere.
//!
//! Only the collector's address and the encoding live here. Headers (an API key for a
//! hosted collector) come from `OTEL_EXPORTER_OTLP_HEADERS`, never from this checked-in
//! file, for the same reason `[models]` names a key's variable rather than the key.

/// The parsed `[telemetry]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TelemetrySettings {
    /// `endpoint = "http://localhost:4318"`: the collector's base URL (`/v1/traces` is added).
    pub endpoint: Option<String>,
    /// `protocol = "http/protobuf"` (the default) or `"http/json"`.
    pub protocol: Option<String>,
}

/// The encodings an OTLP/HTTP exporter may use.
pub const PROTOCOLS: &[&str] = &["http/protobuf", "http/json"];

/// Reads `[telemetry]`; an error is (the key, the message).
pub fn parse(table: &toml::Table) -> Result<TelemetrySettings, (String, String)> {
    let mut t = TelemetrySettings::default();
    let Some(tel) = table.get("telemetry").and_then(|t| t.as_table()) else {
        return Ok(t);
    };
    for (k, v) in tel {
        match k.as_str() {
            "endpoint" => {
                let url = v
                    .as_str()
                    .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
                    .ok_or_else(|| {
                        (
                            k.clone(),
                            "`[telemetry].endpoint` must be a collector's http:// or https:// URL, e.g. \"http://localhost:4318\"".to_string(),
                        )
                    })?;
                t.endpoint = Some(url.to_string());
            }
            "protocol" => {
                let p = v
                    .as_str()
                    .filter(|p| PROTOCOLS.contains(p))
                    .ok_or_else(|| {
                        (
                            k.clone(),
                            format!(
                                "`[telemetry].protocol` must be one of {} (gRPC is not supported)",
                                PROTOCOLS.join(", ")
                            ),
                        )
                    })?;
                t.protocol = Some(p.to_string());
            }
            _ => {
                return Err((
                    k.clone(),
                    format!(
                        "unknown key `[telemetry].{k}` (known: endpoint, protocol; headers come from OTEL_EXPORTER_OTLP_HEADERS)"
                    ),
                ))
            }
        }
    }
    Ok(t)
}
