//! The runtime's `helper` provider: `pdf.pages/text/render` calls as stdio/v1 requests to the
//! confined pdf helper, the PDF's bytes as the payload (never a path); and each package's own
//! helper (`[package.helper]`), reached by `helper.call` under the package's id.

use std::time::Duration;

use kora_runtime::external::provider::{Call, Provider, Reply, ToolInfo};
use kora_runtime::external::Data;
use serde_json::{json, Value as Json};

use crate::config::PdfConfig;
use crate::needs::Needs;
use crate::process::{Helper, HelperSpec, Outcome};

pub struct HelperProvider {
    pdf: Helper,
    /// Package helpers by package id.
    packages: std::collections::BTreeMap<String, Helper>,
}

impl HelperProvider {
    pub fn new(pdf: PdfConfig) -> HelperProvider {
        HelperProvider {
            pdf: Helper::new(HelperSpec {
                name: "pdf".into(),
                program: pdf.helper,
                args: Vec::new(),
                // Reading a PDF needs neither the network nor writing a file.
                needs: Needs::default(),
                timeout: pdf.timeout,
            }),
            packages: Default::default(),
        }
    }

    /// Adds the helper of package `spec.name`.
    pub fn add_package(&mut self, spec: HelperSpec) {
        self.packages.insert(spec.name.clone(), Helper::new(spec));
    }

    pub fn timeout(&self) -> Duration {
        self.pdf.spec().timeout
    }
}

fn int(args: &[Data], i: usize) -> Option<i64> {
    match args.get(i) {
        Some(Data::Int(n)) => Some(*n),
        _ => None,
    }
}

impl Provider for HelperProvider {
    fn kind(&self) -> &'static str {
        "helper"
    }

    fn check(&self, name: &str) -> Result<(), String> {
        match name {
            "pdf" => Ok(()),
            p if self.packages.contains_key(p) => Ok(()),
            other => Err(format!("package `{other}` has no helper set up")),
        }
    }

    fn sink(&self, name: &str) -> String {
        format!("helper:{name}")
    }

    fn tools(
        &self,
        _name: &str,
        _deadline: Option<std::time::Instant>,
    ) -> Result<Vec<ToolInfo>, String> {
        Ok(Vec::new())
    }

    fn local(&self) -> bool {
        true
    }

    fn call(&self, call: Call<'_>) -> Reply {
        if call.module != "pdf" {
            return self.package_call(call);
        }
        let mut args = call.args;
        let payload = match args.first_mut() {
            Some(Data::Bytes(b)) => std::mem::take(b),
            _ => return Reply::Failed("a pdf call carries the PDF's bytes first".into()),
        };
        let header = match call.member {
            "pages" => json!({}),
            "text" => json!({ "page": int(&args, 1) }),
            "render" => json!({ "page": int(&args, 1), "dpi": int(&args, 2) }),
            other => return Reply::Failed(format!("`pdf.{other}` is not a pdf operation")),
        };
        match self.pdf.call(call.member, header, payload, call.deadline) {
            Outcome::Ok(h, p) => match call.member {
                "pages" => match h.get("pages").and_then(Json::as_i64) {
                    Some(n) => Reply::Ok(Data::Int(n)),
                    None => Reply::Failed(format!("the pdf helper answered `pages` with {h}")),
                },
                "text" => match String::from_utf8(p) {
                    Ok(s) => Reply::Ok(Data::Str(s)),
                    Err(_) => Reply::Failed("the pdf helper sent text that is not UTF-8".into()),
                },
                _ => Reply::Ok(Data::Bytes(p)),
            },
            Outcome::Err(e) => Reply::Err(e),
            Outcome::Failed(f) => Reply::Failed(f),
        }
    }
}

impl HelperProvider {
    /// `helper.call(op, header, payload)` of a package: the header as plain JSON.
    fn package_call(&self, call: Call<'_>) -> Reply {
        let Some(h) = self.packages.get(call.module) else {
            return Reply::Failed(format!("package `{}` has no helper", call.module));
        };
        let mut args = call.args.into_iter();
        let header = match args.next().map(|d| plain_json(&d)) {
            Some(Ok(j)) => j,
            Some(Err(why)) => return Reply::Err(format!("the header cannot be JSON: {why}")),
            None => json!({}),
        };
        let payload = match args.next() {
            Some(Data::Bytes(b)) => b,
            _ => return Reply::Failed("a helper call carries its payload's bytes".into()),
        };
        match h.call(call.member, header, payload, call.deadline) {
            Outcome::Ok(h, p) => Reply::Ok(Data::Tuple(vec![json_data(&h), Data::Bytes(p)])),
            Outcome::Err(e) => Reply::Err(e),
            Outcome::Failed(f) => Reply::Failed(f),
        }
    }
}

/// A value's data as plain JSON (what a helper written in any language reads).
fn plain_json(d: &Data) -> Result<Json, String> {
    Ok(match d {
        Data::None => Json::Null,
        Data::Bool(b) => Json::Bool(*b),
        Data::Int(i) => json!(i),
        Data::BigInt(s) => return Err(format!("{s} is past 64 bits")),
        Data::Float(f) => json!(f),
        Data::Str(s) => Json::String(s.clone()),
        Data::Bytes(_) => return Err("bytes go in the payload, not the header".into()),
        Data::List(xs) | Data::Tuple(xs) | Data::Set(xs) => {
            Json::Array(xs.iter().map(plain_json).collect::<Result<_, _>>()?)
        }
        Data::Dict(kv) => {
            let mut m = serde_json::Map::new();
            for (k, v) in kv {
                let Data::Str(k) = k else {
                    return Err("a header's keys are strings".into());
                };
                m.insert(k.clone(), plain_json(v)?);
            }
            Json::Object(m)
        }
    })
}

fn json_data(j: &Json) -> Data {
    match j {
        Json::Null => Data::None,
        Json::Bool(b) => Data::Bool(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Data::Int(i),
            None => Data::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Data::Str(s.clone()),
        Json::Array(xs) => Data::List(xs.iter().map(json_data).collect()),
        Json::Object(m) => Data::Dict(
            m.iter()
                .map(|(k, v)| (Data::Str(k.clone()), json_data(v)))
                .collect(),
        ),
    }
}
