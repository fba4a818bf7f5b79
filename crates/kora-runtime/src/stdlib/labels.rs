//! Labels at the standard library's edge: which arguments are sinks, which results are
//! sources, and how the rest of a call carries labels through.
//!
//! Dangerous arguments (a file path, a URL, SQL text, an HTTP body) refuse classified and
//! unverified values. Text written to a file or a database is output, so classified leaves
//! become the placeholder. Results that come from outside (file contents, HTTP responses)
//! are unverified; `env.get` is classified; a parse into a type keeps confidentiality and
//! leaves only its strings unverified. Everything else flattens: the result carries every
//! label of its arguments (`json.encode(secret)` is secret).

use kora_check::std_api::StdFn;

use crate::error::{codes, RtError, RtResult};
use crate::eval::declassify::refuse_unverified;
use crate::eval::interp::Interp;
use crate::labels::label::{self, Tag};
use crate::value::{OutcomeTag, Value};

use super::Args;

impl Interp<'_> {
    /// `dispatch` once labels exist in the process.
    pub(super) fn dispatch_labeled(&mut self, mut a: Args) -> RtResult<Value> {
        use StdFn::*;
        let sink = match a.func {
            FsRead | FsLines | FsBytes | FsWrite | FsAppend | FsList | FsGlob | FsExists
            | FsRemove | FsMkdir | SqlOpen => Some("a file path"),
            HttpGet | HttpPost => Some("a URL"),
            DbQuery | DbExecute | DbExecuteMany => Some("SQL text"),
            _ => None,
        };
        if let (Some(what), Some(Some(v))) = (sink, a.vals.first()) {
            refuse_secret(v, what)?;
            refuse_unverified(v, what)?;
        }
        if a.func == HttpPost {
            if let Some(Some(v)) = a.vals.get(1) {
                refuse_secret(v, "the body of an HTTP request")?;
            }
        }
        let headers = match a.func {
            HttpGet => a.vals.get(1),
            HttpPost => a.vals.get(2),
            _ => None,
        };
        if let Some(Some(v)) = headers {
            refuse_header(v)?;
        }
        if matches!(a.func, PdfPages | PdfText | PdfRender) {
            // A helper is its own sink: the PDF leaves the interpreter for another process.
            if let Some(Some(v)) = a.vals.first() {
                if let Some(t) = label::unreleased(v, &|s| s == super::pdf::SINK) {
                    return Err(RtError::new(
                        codes::CLASSIFIED_TO_SINK,
                        format!(
                            "{} reaches the `pdf` helper (another process); release it with `declassify NAME for {}:` around the call",
                            label::origin_text(t.secret_from),
                            super::pdf::SINK
                        ),
                    ));
                }
            }
        }
        if a.func == HelperCall {
            // A package's helper is its own sink: header and payload leave for another process.
            for i in [1, 2] {
                if let Some(Some(v)) = a.vals.get(i) {
                    if let Some(t) = label::unreleased(v, &|s| s == super::helper::SINK) {
                        return Err(RtError::new(
                            codes::CLASSIFIED_TO_SINK,
                            format!(
                                "{} reaches the package's helper (another process) as its {}; release it with `declassify NAME for {}:` around the call",
                                label::origin_text(t.secret_from),
                                if i == 1 { "header" } else { "payload" },
                                super::helper::SINK
                            ),
                        ));
                    }
                }
            }
        }
        if matches!(
            a.func,
            FsWrite | FsAppend | DbQuery | DbExecute | DbExecuteMany
        ) {
            if let Some(Some(v)) = a.vals.get(1) {
                let shown = self.redacted(v);
                a.vals[1] = Some(shown);
            }
        }
        if a.func == NotesWrite {
            // A note's key is a name in a file other runs read: a secret may not be one.
            if let Some(Some(k)) = a.vals.first() {
                refuse_secret(k, "the key of a note")?;
                a.vals[0] = Some(label::reveal(k));
            }
            // The note keeps the label itself (see notes.rs).
            return self.dispatch_plain(a);
        }
        let mut tag: Option<Tag> = None;
        if let Some(r) = &a.recv {
            tag = label::join(tag, label::deep(r));
        }
        for v in a.vals.iter().flatten() {
            tag = label::join(tag, label::deep(v));
        }
        if tag.is_some() {
            a.recv = a.recv.as_ref().map(label::reveal);
            for v in a.vals.iter_mut().flatten() {
                *v = label::reveal(v);
            }
        }
        let site = a.site.clone();
        let func = a.func;
        let shuffled = match (func, a.vals.first()) {
            (RandomShuffle, Some(Some(v))) => Some(v.clone()),
            _ => None,
        };
        // An effect given a classified value may record it (`random.choice` of secrets):
        // a journal keeps such a result sealed.
        let secret_args = tag.is_some_and(|t| t.is_classified());
        if secret_args {
            self.host().sealing = true;
        }
        let r = self.dispatch_plain(a);
        if secret_args {
            self.host().sealing = false;
        }
        let r = r?;
        if func == RandomSeed {
            // A plain seed makes the draws plain again.
            self.host().rng_label = tag;
            return Ok(r);
        }
        let drawn = matches!(
            func,
            RandomRandom
                | RandomUniform
                | RandomRandint
                | RandomChoice
                | RandomShuffle
                | RandomSample
        );
        let tag = match self.host().rng_label {
            Some(seed) if drawn => {
                if let Some(list) = shuffled {
                    label_items(&list, seed);
                }
                label::join(tag, Some(seed))
            }
            _ => tag,
        };
        Ok(match func {
            // The value is the secret; why it is missing is not.
            EnvGet => match &r {
                Value::Outcome(o) if o.tag == OutcomeTag::Ok => label::wrap(
                    r,
                    Tag::classified(label::origin(&format!("the value of `env.get` at {site}"))),
                ),
                _ => r,
            },
            FsRead | FsLines | FsBytes | HttpGet | HttpPost => {
                let from = label::origin(&format!("what `{}` read at {site}", member(func)));
                let r = label::on_strings(r, Tag::unverified(from));
                label::wrap_opt(r, tag)
            }
            JsonParse | CsvParse | YamlParse | XmlParse => match tag {
                Some(t) => {
                    let r = label::on_strings(
                        r,
                        Tag {
                            bits: t.bits & label::UNVERIFIED,
                            ..t
                        },
                    );
                    if t.is_classified() {
                        label::wrap(
                            r,
                            Tag {
                                bits: label::CLASSIFIED,
                                untrusted_from: 0,
                                ..t
                            },
                        )
                    } else {
                        r
                    }
                }
                None => r,
            },
            _ => label::wrap_opt(r, tag),
        })
    }

    /// Text bound for a file or a database: classified leaves replaced by the placeholder.
    fn redacted(&self, v: &Value) -> Value {
        match label::deep(v) {
            Some(t) if t.is_classified() => match &*label::plain(v) {
                Value::Str(_) => Value::str(crate::value::format::to_string(&self.prog, v)),
                _ => redact_leaves(v),
            },
            _ => label::reveal(v),
        }
    }
}

/// Puts `tag` on every item of the list `v` in place: an order drawn from a labelled seed.
fn label_items(v: &Value, tag: Tag) {
    if let Value::List(l) = &*label::plain(v) {
        for x in l.borrow_mut().iter_mut() {
            *x = label::wrap(std::mem::take(x), tag);
        }
    }
}

/// `v` with each classified leaf replaced by the placeholder string, other labels dropped.
fn redact_leaves(v: &Value) -> Value {
    label::map_leaves(v, &mut |x| match x {
        x if label::tag_of(x).is_some_and(Tag::is_classified) => Value::str(label::placeholder()),
        other => label::plain(other).into_owned(),
    })
}

fn member(f: StdFn) -> String {
    let m = kora_check::std_api::member(f);
    match m.owner {
        kora_check::std_api::Owner::Module(md) => format!("{}.{}", md.name(), m.name),
        _ => m.name.to_string(),
    }
}

/// Refuses classified request headers unless a `declassify x for http:` block is open for
/// every classified part: a token in `Authorization` is the usual and legitimate case, and
/// the release is what makes it visible to a reviewer (`kora audit`).
fn refuse_header(v: &Value) -> RtResult<()> {
    match label::unreleased(v, &|sink| sink == HTTP_SINK) {
        Some(t) => Err(RtError::new(
            codes::CLASSIFIED_TO_SINK,
            format!(
                "{} cannot be sent in an HTTP header: it would leave the program; to send a credential, send it inside `declassify NAME for {HTTP_SINK}:`",
                label::origin_text(t.secret_from)
            ),
        )),
        None => Ok(()),
    }
}

/// The sink name a release gives to let classified values into HTTP request headers.
pub const HTTP_SINK: &str = "http";

/// Refuses a classified value where it would leave the program as part of an operation's
/// target (a path, a URL, SQL text) or an HTTP body: no `[sinks]` name covers these.
fn refuse_secret(v: &Value, what: &str) -> RtResult<()> {
    if !label::any() {
        return Ok(());
    }
    match label::deep(v) {
        Some(t) if t.is_classified() => Err(RtError::new(
            codes::CLASSIFIED_TO_SINK,
            format!(
                "{} cannot be used as {what}: it would leave the program; keep secrets out of paths, URLs, SQL text and request bodies (pass them as SQL parameters, or send them to a model inside `declassify`)",
                label::origin_text(t.secret_from)
            ),
        )),
        _ => Ok(()),
    }
}
