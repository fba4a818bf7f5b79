//! Property tests: reading `kora.toml` never panics, and every refusal names the file and a line inside it.
//!
//! `Config::parse` walks the parsed tables by hand and finds lines by searching the
//! text, so mutated real configurations (cut short, a character replaced) reach the
//! places where an index or a slice could go wrong far more often than random text.

use proptest::prelude::*;
use std::path::Path;

use crate::config::Config;

const SEEDS: &[&str] = &[
    "[models]\ndefault = \"fast\"\ntimeout_secs = 60\nmax_retries = 3\nmax_tool_turns = 8\nfast = { name = \"gpt-4o-mini\", endpoint = \"http://127.0.0.1:9/v1\", api_key_env = \"K\", api = \"openai\", structured = \"json_schema\", max_output_tokens = 256 }\nlocal = \"ollama:llama3.2\"\n",
    "[budget.pricing]\ncurrency = \"USD\"\n\"gpt-4o-mini\" = { input = 0.15, output = 0.60 }\n[sinks]\nlocal = [\"llama\"]\n[output]\nclassified = \"[hidden]\"\n",
    "# comment\n[models]\ndefault = { name = \"m\", endpoint = \"http://h\", api = \"ollama\" }\n[mcp]\n[dependencies]\n[package]\n",
];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        crate::stdlib::parse_fuzz::mutated(SEEDS),
        "[\\[\\]{}=,.\"#a-z0-9_ \n-]{0,80}"
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn reading_never_panics_and_errors_point_inside_the_file(s in text()) {
        let path = Path::new("kora.toml");
        if let Err(e) = Config::parse(path, &s) {
            prop_assert_eq!(e.path.as_path(), path);
            prop_assert!(!e.message.is_empty());
            let lines = s.split('\n').count();
            if let Some(l) = e.line {
                prop_assert!(l >= 1 && l <= lines, "line {} of {}: {}", l, lines, e.message);
            }
        }
    }
}
