//! `--report cost`: tokens per model and per agent, and money when `[budget.pricing]` is set.
//!
//! It sums the model-call spans of the same recording the trace file is
//! written from. A call's tokens include every attempt, so retries are paid
//! for in the report as they were at the provider.

use std::fmt::Write;

use kora_runtime::config::pricing::Pricing;
use kora_runtime::observe::trace::SpanKind;

use crate::recorder::SpanData;

#[derive(Default, Clone)]
struct Row {
    calls: u64,
    input: u64,
    output: u64,
    /// Calls among `calls` whose model has no price.
    unpriced: u64,
    money: f64,
}

/// The report's text (for stderr, so a program's own output stays clean).
pub fn report(spans: &[SpanData], pricing: Option<&Pricing>) -> String {
    let mut by_model: Vec<(String, Row)> = Vec::new();
    let mut by_agent: Vec<(String, Row)> = Vec::new();
    let (mut replayed, mut mocked, mut total_calls) = (0u64, 0u64, 0u64);
    let mut unpriced_models: Vec<String> = Vec::new();
    for s in spans.iter().filter(|s| s.kind == SpanKind::ModelCall) {
        match s.str("kora.answered_by") {
            Some("mock") => {
                mocked += 1;
                continue;
            }
            Some("cassette") => replayed += 1,
            Some("model") => {}
            _ => continue,
        }
        total_calls += 1;
        let model = s
            .str("gen_ai.request.model")
            .unwrap_or("unknown")
            .to_string();
        let agent = s
            .str("gen_ai.agent.name")
            .map_or_else(|| "(no agent)".to_string(), str::to_string);
        let input = s.int("gen_ai.usage.input_tokens").unwrap_or(0).max(0) as u64;
        let output = s.int("gen_ai.usage.output_tokens").unwrap_or(0).max(0) as u64;
        let price = pricing.and_then(|p| p.price(&model));
        if pricing.is_some() && price.is_none() && !unpriced_models.contains(&model) {
            unpriced_models.push(model.clone());
        }
        let money = price.map_or(0.0, |p| {
            (input as f64 * p.input + output as f64 * p.output) / 1e6
        });
        for (key, table) in [(model.clone(), &mut by_model), (agent, &mut by_agent)] {
            let row = match table.iter_mut().find(|(k, _)| *k == key) {
                Some((_, r)) => r,
                None => {
                    table.push((key, Row::default()));
                    &mut table.last_mut().expect("pushed").1
                }
            };
            row.calls += 1;
            row.input += input;
            row.output += output;
            row.money += money;
            row.unpriced += u64::from(price.is_none());
        }
    }
    let mut out = String::from("cost report\n");
    let cur = pricing.map(|p| p.currency.as_str());
    table(&mut out, "model", &by_model, cur);
    table(&mut out, "agent", &by_agent, cur);
    if total_calls == 0 {
        out.push_str("  no model calls were made\n");
    }
    if replayed > 0 {
        let _ = writeln!(
            out,
            "  {replayed} of {total_calls} calls were answered from the cassette: their tokens are as recorded, not spent by this run"
        );
    }
    if mocked > 0 {
        let _ = writeln!(out, "  {mocked} mocked calls are not counted");
    }
    match pricing {
        None => out.push_str("  set prices under [budget.pricing] in kora.toml to see money\n"),
        Some(_) => {
            for m in unpriced_models {
                let _ = writeln!(
                    out,
                    "  `{m}` has no price in [budget.pricing]: its cost is not counted"
                );
            }
        }
    }
    out
}

fn table(out: &mut String, what: &str, rows: &[(String, Row)], currency: Option<&str>) {
    if rows.is_empty() {
        return;
    }
    let width = rows
        .iter()
        .map(|(k, _)| k.len())
        .max()
        .unwrap_or(0)
        .max(what.len());
    let _ = write!(
        out,
        "  {what:<width$}  {:>5}  {:>12}  {:>13}",
        "calls", "input tokens", "output tokens"
    );
    if let Some(c) = currency {
        let _ = write!(out, "  {:>12}", format!("cost ({c})"));
    }
    out.push('\n');
    for (k, r) in rows {
        let _ = write!(
            out,
            "  {k:<width$}  {:>5}  {:>12}  {:>13}",
            r.calls, r.input, r.output
        );
        if currency.is_some() {
            let cost = if r.unpriced == r.calls {
                "-".to_string()
            } else {
                format!("{:.6}", r.money)
            };
            let _ = write!(out, "  {cost:>12}");
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorder::Recorder;
    use kora_runtime::config::pricing::Price;
    use kora_runtime::observe::trace::{AttrValue, SpanStatus, Tracer};
    use std::time::SystemTime;

    fn call(
        rec: &mut Recorder,
        model: &str,
        agent: Option<&str>,
        by: &'static str,
        i: i64,
        o: i64,
    ) {
        let t = SystemTime::now();
        let s = rec.open(SpanKind::ModelCall, "chat", None, t);
        rec.attr(s, "gen_ai.request.model", AttrValue::Str(model.into()));
        if let Some(a) = agent {
            rec.attr(s, "gen_ai.agent.name", AttrValue::Str(a.into()));
        }
        rec.attr(s, "kora.answered_by", AttrValue::Static(by));
        rec.attr(s, "gen_ai.usage.input_tokens", AttrValue::Int(i));
        rec.attr(s, "gen_ai.usage.output_tokens", AttrValue::Int(o));
        rec.close(s, t, SpanStatus::Ok, None);
    }

    #[test]
    fn sums_per_model_and_agent_and_prices_them() {
        let mut rec = Recorder::new();
        call(&mut rec, "a", Some("triage"), "model", 1_000_000, 0);
        call(&mut rec, "a", None, "cassette", 0, 500_000);
        call(&mut rec, "b", Some("triage"), "model", 10, 10);
        call(&mut rec, "a", None, "mock", 99, 99);
        let pricing = Pricing {
            currency: "USD".into(),
            models: vec![(
                "a".into(),
                Price {
                    input: 2.0,
                    output: 4.0,
                },
            )],
        };
        let rec = rec.finish(SystemTime::now());
        let text = report(&rec.spans, Some(&pricing));
        let line = |k: &str| {
            text.lines()
                .find(|l| l.trim_start().starts_with(k))
                .unwrap_or_else(|| panic!("no row {k}: {text}"))
                .split_whitespace()
                .collect::<Vec<_>>()
        };
        assert_eq!(line("a "), ["a", "2", "1000000", "500000", "4.000000"]);
        assert_eq!(line("b "), ["b", "1", "10", "10", "-"]);
        assert_eq!(line("triage"), ["triage", "2", "1000010", "10", "2.000000"]);
        assert!(
            text.contains("1 of 3 calls were answered from the cassette"),
            "{text}"
        );
        assert!(text.contains("1 mocked calls"), "{text}");
        assert!(text.contains("`b` has no price"), "{text}");
    }
}
