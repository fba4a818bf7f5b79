//! The runtime's `helper` provider: `pdf.pages/text/render` calls as stdio/v1 requests to the
//! confined pdf helper, the PDF's bytes as the payload (never a path).

use std::time::Duration;

use kora_runtime::external::provider::{Call, Provider, Reply, ToolInfo};
use kora_runtime::external::Data;
use serde_json::{json, Value as Json};

use crate::config::PdfConfig;
use crate::needs::Needs;
use crate::process::{Helper, HelperSpec, Outcome};

pub struct HelperProvider {
    pdf: Helper,
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
        }
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
            other => Err(format!("no helper named `{other}`")),
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
            return Reply::Failed(format!("no helper named `{}`", call.module));
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
