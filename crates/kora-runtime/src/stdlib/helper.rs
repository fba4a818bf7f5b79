//! `helper.call(op, header, payload)`: one stdio/v1 request to the calling package's own helper
//! (`[package.helper]`), a confined process the embedder registers under the `helper` provider.
//!
//! The package is read from the call's site, so a package can only ever reach its own helper.
//! The call is an effect of kind `helper`: the grant check refuses it unless the importer
//! granted the package `helper = true`, and its answer is journaled like `pdf`'s.

use kora_check::std_api::StdFn;

use crate::durable::effect::Kind;
use crate::error::RtResult;
use crate::eval::interp::Interp;
use crate::external::convert;
use crate::external::provider::Call;
use crate::external::{Data, Reply};
use crate::value::bytes::Bytes;
use crate::value::{OutcomeTag, Value};

use super::pdf::Answer;
use super::{err, ok, Args};

/// The sink a classified header or payload must be released for (`declassify x for helper:`).
pub const SINK: &str = "helper";

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    debug_assert_eq!(a.func, StdFn::HelperCall);
    let op = a.str(0)?.to_string();
    let header = match a.get(1) {
        Some(v) => match convert::to_data(&it.prog, v) {
            Ok(d) => d,
            Err(why) => return Ok(err(format!("the header cannot be sent to a helper: {why}"))),
        },
        None => Data::Dict(Vec::new()),
    };
    let payload = match a.get(2).and_then(Bytes::of) {
        Some(b) => b.to_vec(),
        None => return a.bad(2, "the payload's `bytes`"),
    };
    let Some(package) = crate::grants::package_of(&a.site).map(str::to_string) else {
        return Ok(Value::outcome(
            OutcomeTag::Failed,
            Value::str("`helper.call` runs only in a package that declares a helper"),
        ));
    };
    let name = format!("helper.call({op})");
    let target = format!("{package}'s helper");
    let call = Call {
        module: &package,
        member: &op,
        args: vec![header, Data::Bytes(payload)],
        kwargs: Vec::new(),
        deadline: None,
    };
    let unavailable = "this build of Kora has no helper support";
    Ok(match request(it, &a, &target, &name, call, unavailable)? {
        Err(outcome) => outcome,
        Ok(d) => match convert::to_value(&d) {
            Ok(v) => ok(v),
            Err(why) => Value::outcome(
                OutcomeTag::Failed,
                Value::str(format!("the helper's answer cannot be a value: {why}")),
            ),
        },
    })
}

/// One request to a helper through the effect pipeline (grants, journal, budget): the data it
/// answered, or the outcome the call returns instead (`Err` it answered, `Failed` it broke).
pub(super) fn request(
    it: &mut Interp,
    a: &Args,
    target: &str,
    name: &str,
    call: Call<'_>,
    unavailable: &str,
) -> RtResult<Result<Data, Value>> {
    let provider = it.externals.as_ref().and_then(|r| r.get("helper")).cloned();
    let host = it.host();
    let r = host.effect(&a.effect(Kind::Helper, target, name), |_s| {
        let Some(p) = provider else {
            return Ok(Answer::Failed(unavailable.into()));
        };
        match p.call(call) {
            Reply::Ok(d) => Ok(Answer::Ok(d)),
            Reply::Err(e) => Err(e),
            Reply::Failed(f) => Ok(Answer::Failed(f)),
        }
    })?;
    Ok(match r {
        Err(why) => Err(err(why)),
        Ok(Answer::Failed(why)) => Err(Value::outcome(OutcomeTag::Failed, Value::str(why))),
        Ok(Answer::Ok(d)) => Ok(d),
    })
}
