//! The members of a `bytes` value (`b.decode()`); the type itself is the value layer's.

use kora_check::std_api::StdFn;

use crate::error::{codes, RtError, RtResult};
use crate::value::bytes::Bytes;
use crate::value::Value;

use super::{err, ok, Args};

pub(super) fn call(a: Args) -> RtResult<Value> {
    let Some(b) = a.recv.as_ref().and_then(Bytes::of) else {
        return Err(RtError::new(
            codes::TYPE,
            format!("`{}` needs a `bytes`", a.name()),
        ));
    };
    match a.func {
        StdFn::BytesDecode => Ok(match std::str::from_utf8(&b) {
            Ok(s) => ok(Value::str(s)),
            Err(e) => err(format!(
                "the bytes are not UTF-8: byte {} (0x{:02x}) starts no character",
                e.valid_up_to(),
                b[e.valid_up_to()]
            )),
        }),
        other => Err(RtError::new(
            codes::TYPE,
            format!("`{other:?}` is not a member of `bytes`"),
        )),
    }
}
