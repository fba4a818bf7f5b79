//! `env`: environment variables as results (a missing one is `Err` naming it) and the program's arguments.
//!
//! The defect fixed: `os.environ["KEY"]` raises and `os.getenv` returns a
//! silent `None`. Every value read here is `classified` (`labels.rs`), so a
//! journal keeps only a keyed digest of it and a resume reads it again.

use kora_check::std_api::StdFn;

use super::{err, ok, str_list, Args};
use crate::durable::effect::{Kind, Observation};
use crate::error::RtResult;
use crate::eval::interp::Interp;
use crate::value::Value;

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    match a.func {
        StdFn::EnvArgs => Ok(arguments(it.host().args.clone())),
        StdFn::EnvGet => {
            let name = a.str(0)?.to_string();
            let call = a.name();
            let r = it.host().effect(&a.effect(Kind::Env, &name, &call), |s| {
                let v = std::env::var(&name).map_err(|e| match e {
                    std::env::VarError::NotPresent => {
                        format!("the environment variable {name} is not set")
                    }
                    std::env::VarError::NotUnicode(_) => {
                        format!("the environment variable {name} is not valid UTF-8")
                    }
                })?;
                s.observe(Observation::Value);
                s.classified(Some(v.as_bytes()));
                Ok(v)
            })?;
            Ok(match r {
                Ok(v) => ok(Value::str(v)),
                Err(why) => err(why),
            })
        }
        _ => unreachable!("env::call got {:?}", a.func),
    }
}

/// The program's arguments, plain: a person typed them, and a path given on the command line
/// must reach `fs.read` without a release. Under the label-transparency mode they carry the
/// mode's label like every literal, so the differential test covers values that arrive as
/// arguments too.
fn arguments(args: Vec<String>) -> Value {
    use crate::labels::label::{self, Tag};
    use kora_check::literal_labels::LiteralLabel;
    let Some(mode) = kora_check::literal_labels::get() else {
        return str_list(args);
    };
    let items = args
        .into_iter()
        .enumerate()
        .map(|(i, a)| {
            let origin = label::origin(&format!("program argument {}", i + 1));
            let tag = match mode {
                LiteralLabel::Unverified => Tag::unverified(origin),
                LiteralLabel::Classified => Tag::classified(origin),
            };
            label::wrap(Value::str(a), tag)
        })
        .collect();
    Value::list(items)
}
