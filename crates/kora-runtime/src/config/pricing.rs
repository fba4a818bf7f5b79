//! `[budget.pricing]` in `kora.toml`: what a million tokens cost per model, for the cost report.
//!
//! Money is a display layer only (never a limit), so a price is two numbers
//! per model and an optional currency label; anything else under `[budget]`
//! is refused by name, like every other unknown key.

/// The prices of the models a project uses.
#[derive(Debug, Clone, PartialEq)]
pub struct Pricing {
    /// Shown beside amounts (`USD` unless `currency = "..."` says otherwise).
    pub currency: String,
    /// Model name as the provider spells it (`gen_ai.request.model`) → its price.
    pub models: Vec<(String, Price)>,
}

/// Price per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

impl Pricing {
    pub fn price(&self, model: &str) -> Option<Price> {
        self.models
            .iter()
            .find(|(m, _)| m == model)
            .map(|(_, p)| *p)
    }
}

/// Reads the `[budget]` table; `Err((key path, message))` names what is wrong.
pub fn parse_budget(budget: &toml::Table) -> Result<Option<Pricing>, (String, String)> {
    let mut pricing = None;
    for (k, v) in budget {
        if k != "pricing" {
            return Err((
                k.clone(),
                format!("unknown key `[budget].{k}` (known: pricing)"),
            ));
        }
        let Some(t) = v.as_table() else {
            return Err((
                k.clone(),
                "`[budget].pricing` must be a table: write `[budget.pricing]`".into(),
            ));
        };
        pricing = Some(parse_pricing(t)?);
    }
    Ok(pricing)
}

fn parse_pricing(t: &toml::Table) -> Result<Pricing, (String, String)> {
    let mut p = Pricing {
        currency: "USD".into(),
        models: Vec::new(),
    };
    for (k, v) in t {
        if k == "currency" {
            p.currency = v
                .as_str()
                .filter(|s| !s.trim().is_empty())
                .ok_or_else(|| {
                    (
                        k.clone(),
                        "`[budget.pricing].currency` must be a label such as \"USD\"".to_string(),
                    )
                })?
                .to_string();
            continue;
        }
        let bad = |why: &str| {
            (
                k.clone(),
                format!(
                    "`[budget.pricing].\"{k}\"` {why}: write `\"{k}\" = {{ input = 0.15, output = 0.60 }}` (per million tokens)"
                ),
            )
        };
        let Some(entry) = v.as_table() else {
            return Err(bad("must be a table of prices"));
        };
        for key in entry.keys() {
            if key != "input" && key != "output" {
                return Err(bad(&format!(
                    "has an unknown key `{key}` (known: input, output)"
                )));
            }
        }
        let num = |name: &str| -> Result<f64, (String, String)> {
            let v = entry
                .get(name)
                .ok_or_else(|| bad(&format!("has no `{name}` price")))?;
            v.as_float()
                .or_else(|| v.as_integer().map(|i| i as f64))
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| bad(&format!("`{name}` must be a number of at least 0")))
        };
        p.models.push((
            k.clone(),
            Price {
                input: num("input")?,
                output: num("output")?,
            },
        ));
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(s: &str) -> Result<Option<Pricing>, (String, String)> {
        let t: toml::Table = s.parse().expect("toml");
        parse_budget(t["budget"].as_table().expect("table"))
    }

    #[test]
    fn prices_per_model_and_currency() {
        let p = budget("[budget.pricing]\ncurrency = \"EUR\"\n\"gpt-4o-mini\" = { input = 0.15, output = 1 }\n")
            .expect("valid")
            .expect("pricing");
        assert_eq!(p.currency, "EUR");
        assert_eq!(
            p.price("gpt-4o-mini"),
            Some(Price {
                input: 0.15,
                output: 1.0
            })
        );
    }

    #[test]
    fn unknown_and_bad_keys_are_named() {
        let e = budget("[budget]\nmax_dollars = 3\n").expect_err("unknown");
        assert!(e.1.contains("max_dollars"), "{}", e.1);
        let e = budget("[budget.pricing]\nm = { input = 1, ouput = 2 }\n").expect_err("typo");
        assert!(e.1.contains("ouput"), "{}", e.1);
        let e = budget("[budget.pricing]\nm = { input = -1, output = 2 }\n").expect_err("negative");
        assert!(e.1.contains("at least 0"), "{}", e.1);
    }
}
