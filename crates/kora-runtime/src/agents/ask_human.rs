//! `ask_human(question)`: shows the question, reads one line of answer, as an effect a journal can replay.
//!
//! The answer comes from standard input whether or not it is a terminal, so a
//! test or a script can pipe answers in. Input that has ended (a closed stdin,
//! `< /dev/null`, a service with no console) is an error rather than an empty
//! answer: a program that asked a person something must not carry on as if
//! they had said "".

use kora_check::hir::AskHumanCall;

use crate::durable::effect::{Class, Effect, Kind};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::Value;

impl Interp<'_> {
    pub(crate) fn ask_human(&mut self, call: &AskHumanCall) -> RtResult<Value> {
        let asked = self.eval(&call.question)?;
        // A person is a sink like the terminal: a classified question is refused before it
        // is shown; an unverified one is only text and is shown as it is.
        if let Some(t) = crate::labels::label::deep(&asked).filter(|t| t.is_classified()) {
            return Err(RtError::new(
                codes::CLASSIFIED_TO_SINK,
                format!(
                    "`ask_human` cannot show a classified question ({} is in it): a person would read the secret; ask without it, or show `redact(question)`",
                    crate::labels::label::origin_text(t.secret_from)
                ),
            ));
        }
        let question = match &*crate::labels::label::plain(&asked) {
            Value::Str(s) => s.as_str().to_string(),
            other => {
                return Err(RtError::new(
                    codes::TYPE,
                    format!(
                        "`ask_human` shows a `str` question, got a `{}`",
                        other.type_name()
                    ),
                ))
            }
        };
        let effect = Effect {
            kind: Kind::AskHuman,
            class: Class::Effect,
            op: &call.site,
            call: "ask_human",
            target: &question,
        };
        // The question is program output, shown whether the answer is read or replayed: a
        // durable resume then prints the same bytes and skips those already shown, so a
        // person never sees a question twice.
        let shown = if question.ends_with('\n') {
            question.clone()
        } else {
            format!("{question}\n")
        };
        self.write(&shown)?;
        let _ = self.flush_out();
        self.host();
        let (Some(host), input) = (self.host.as_deref_mut(), &mut self.input) else {
            return Err(RtError::new(
                codes::CONFIG,
                "the run has no standard library state",
            ));
        };
        let durable = host.durable;
        let answer = host.effect(&effect, |_| {
            let Some(input) = input.as_mut() else {
                return Err(NO_INPUT.to_string());
            };
            let mut line = String::new();
            match input.read_line(&mut line) {
                Ok(0) => Err(NO_INPUT.to_string()),
                Ok(_) => {
                    let trimmed = line.trim_end_matches(['\n', '\r']);
                    Ok(trimmed.to_string())
                }
                Err(e) => Err(format!("cannot read the answer: {e}")),
            }
        })?;
        match answer {
            Ok(a) => Ok(Value::str(a)),
            Err(why) if durable && why == NO_INPUT => Err(RtError::new(
                codes::SUSPENDED,
                question.trim_end().to_string(),
            )),
            Err(why) => Err(RtError::new(
                codes::NO_HUMAN,
                format!("`ask_human` at {} got no answer: {why}", call.site),
            )),
        }
    }
}

const NO_INPUT: &str = "standard input is closed, so there is nobody to ask; run the program from a terminal, pipe the answer in (`echo yes | kora run main.ko`), or run it with `--durable` so it waits for `kora answer`";
