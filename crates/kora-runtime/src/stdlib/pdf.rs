//! `pdf`: page count, page text and page images of a PDF given as its bytes, computed by the
//! `pdf` helper, a separate confined process the embedder registers as the `helper` provider.
//!
//! The runtime names no helper crate: it sends `Data` through `external::Provider` and takes
//! back `Ok`, `Err` (the PDF is malformed) or `Failed` (the helper hung, crashed or is
//! missing). A call is an effect of kind `helper`; its answer is journaled, so a resume does
//! not start the helper again for a page it already read.

use std::rc::Rc;

use kora_check::std_api::StdFn;
use serde_json::{json, Value as Json};

use crate::durable::effect::Recordable;
use crate::error::RtResult;
use crate::eval::interp::Interp;
use crate::external::provider::Call;
use crate::external::Data;
use crate::value::bytes::Bytes;
use crate::value::native::Native;
use crate::value::{OutcomeTag, Value};

use super::image::Image;
use super::{ok, Args};

/// The sink a classified PDF must be released for before the helper sees it.
pub const SINK: &str = "pdf";

/// A helper's answer as the journal keeps it.
pub(super) enum Answer {
    Ok(Data),
    Failed(String),
}

impl Recordable for Answer {
    fn to_record(&self) -> Json {
        match self {
            Answer::Ok(d) => json!({ "ok": d.to_json() }),
            Answer::Failed(f) => json!({ "failed": f }),
        }
    }

    fn from_record(j: &Json) -> Option<Answer> {
        if let Some(d) = j.get("ok") {
            return Data::from_json(d).ok().map(Answer::Ok);
        }
        j.get("failed")
            .and_then(Json::as_str)
            .map(|f| Answer::Failed(f.to_string()))
    }
}

fn bytes_of(a: &Args) -> RtResult<Vec<u8>> {
    match a.get(0).and_then(Bytes::of) {
        Some(b) => Ok(b.to_vec()),
        None => a.bad(0, "the PDF's `bytes` (from `fs.bytes`)"),
    }
}

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    let data = bytes_of(&a)?;
    let (member, mut args) = match a.func {
        StdFn::PdfPages => ("pages", vec![]),
        StdFn::PdfText => ("text", vec![Data::Int(a.int(1, 0)?)]),
        _ => (
            "render",
            vec![Data::Int(a.int(1, 0)?), Data::Int(a.int(2, 72)?)],
        ),
    };
    args.insert(0, Data::Bytes(data));
    let name = format!("pdf.{member}");
    let target = format!("{} bytes", data_len(&args));
    let call = Call {
        module: "pdf",
        member,
        args,
        kwargs: Vec::new(),
        deadline: None,
    };
    let unavailable = "this build of Kora has no helper support, so `pdf` cannot run";
    Ok(
        match super::helper::request(it, &a, &target, &name, call, unavailable)? {
            Err(outcome) => outcome,
            Ok(d) => answer(member, d),
        },
    )
}

fn data_len(args: &[Data]) -> usize {
    match args.first() {
        Some(Data::Bytes(b)) => b.len(),
        _ => 0,
    }
}

/// The helper's data as the member's value; anything else is the helper breaking its word.
fn answer(member: &str, d: Data) -> Value {
    match (member, d) {
        ("pages", Data::Int(n)) => ok(Value::Int(n)),
        ("text", Data::Str(s)) => ok(Value::str(s)),
        ("render", Data::Bytes(png)) => match Image::from_bytes("<pdf page>", png) {
            Ok(img) => ok(Value::Native(Rc::new(Native::new(img)))),
            Err(why) => Value::outcome(
                OutcomeTag::Failed,
                Value::str(format!(
                    "the pdf helper sent a page that is not an image: {why}"
                )),
            ),
        },
        (m, other) => Value::outcome(
            OutcomeTag::Failed,
            Value::str(format!("the pdf helper answered `{m}` with {other:?}")),
        ),
    }
}
