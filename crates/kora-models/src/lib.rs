//! Kora's model wire: request shapes for OpenAI-style and Ollama endpoints, SSE and NDJSON decoding,
//! retry classification with jittered backoff and `Retry-After`, and JSON Schema for a Kora type.
//! No interpreter, cassette or journal lives here: the runtime calls [`transport::call`] and maps
//! its `Reply` / `CallFailure` onto `Ok` / `Uncertain` / `Failed`.

pub mod cancel;
pub mod config;
mod failure;
pub mod image_tokens;
pub mod redact;
pub mod request;
pub mod response;
pub mod retry;
pub mod schema;
pub mod stream;
pub mod token_estimate;
pub mod transport;
mod usage_estimate;

pub use cancel::Cancel;
pub use config::{Api, ApiKey, ConfigError, ModelEntry, Settings, Structured};
pub use redact::Redactor;
pub use request::{build_body, ImageData, Request, ToolSpec, Turn};
pub use response::{decode_outcome, parse_reply, Decoded, MalformedReply, Reply, ToolCall, Usage};
pub use schema::{envelope_schema, json_schema, validate, Field, Shape};
pub use stream::{Assembler, NdjsonDecoder, SseDecoder, StreamDecoder, StreamError, StreamEvent};
pub use transport::{call, call_cancellable, Attempt, CallFailure};
