//! The Python workers of a run, as the runtime's `Provider` for `use python MODULE`.
//!
//! A call's answer: the result (`Ok`), the exception with its type, message and last
//! traceback frame (`Err`), a result Kora cannot hold (`Err` naming its Python type), or no
//! answer (`Failed`: a timeout or a crash, after which the worker is replaced). A module that
//! cannot be imported is reported once, on stderr, with the interpreter that tried; its later
//! calls fail at once, without another worker trying.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use serde_json::{Map, Value as Json};

use kora_runtime::external::provider::Call;
use kora_runtime::external::{Data, Provider, Reply, ToolInfo};

use crate::config::PythonConfig;
use crate::pool::{Lent, Pool};

pub struct PythonProvider {
    pub pool: Pool,
    import_errors: Mutex<HashMap<String, String>>,
}

impl PythonProvider {
    pub fn new(cfg: PythonConfig) -> PythonProvider {
        PythonProvider {
            pool: Pool::new(cfg),
            import_errors: Mutex::new(HashMap::new()),
        }
    }

    pub fn warnings(&self) -> &[String] {
        &self.pool.cfg.warnings
    }

    fn deadline(&self, run: Option<Instant>) -> Instant {
        let own = Instant::now() + self.pool.cfg.timeout;
        run.map_or(own, |r| r.min(own))
    }

    fn answer(&self, module: &str, func: &str, reply: &Json) -> Reply {
        if let Some(ok) = reply.get("ok") {
            return match Data::from_json(ok) {
                Ok(d) => Reply::Ok(d),
                Err(why) => Reply::Failed(format!("protocol error: the worker sent {why}")),
            };
        }
        if let Some(e) = reply.get("exc") {
            let text = |k: &str| e.get(k).and_then(Json::as_str).unwrap_or("").to_string();
            let (ty, msg, frame) = (text("type"), text("message"), text("frame"));
            let mut why = if msg.is_empty() {
                ty
            } else {
                format!("{ty}: {msg}")
            };
            if !frame.is_empty() {
                why.push_str(&format!(" (at {frame})"));
            }
            return Reply::Err(why);
        }
        if let Some(t) = reply.get("bad").and_then(Json::as_str) {
            return Reply::Err(format!(
                "`{module}.{func}` returned a value of type `{t}`, which Kora cannot hold: a Python call returns None, bool, int, float, str, bytes, list, tuple, dict, set, a dataclass or a namedtuple"
            ));
        }
        if let Some(e) = reply.get("import") {
            let text = |k: &str| e.get(k).and_then(Json::as_str).unwrap_or("").to_string();
            let exe = Some(text("executable"))
                .filter(|e| !e.is_empty())
                .unwrap_or_else(|| self.pool.cfg.interpreter.display().to_string());
            let why = format!(
                "cannot import the Python module `{module}` with {exe}: {}: {}",
                text("type"),
                text("message")
            );
            let mut seen = self.import_errors.lock().unwrap_or_else(|p| p.into_inner());
            if !seen.contains_key(module) {
                eprintln!("kora: {why}");
                seen.insert(module.to_string(), why.clone());
            }
            return Reply::Failed(why);
        }
        Reply::Failed(format!("protocol error: the worker answered {}", reply))
    }
}

impl Provider for PythonProvider {
    fn kind(&self) -> &'static str {
        "python"
    }

    fn check(&self, name: &str) -> Result<(), String> {
        let ok = !name.is_empty()
            && name.split('.').all(|p| {
                p.chars()
                    .next()
                    .is_some_and(|c| c.is_alphabetic() || c == '_')
                    && p.chars().all(|c| c.is_alphanumeric() || c == '_')
            });
        if ok {
            Ok(())
        } else {
            Err(format!("`{name}` is not a Python module name"))
        }
    }

    fn sink(&self, _name: &str) -> String {
        "python".to_string()
    }

    fn tools(&self, name: &str, _deadline: Option<Instant>) -> Result<Vec<ToolInfo>, String> {
        Err(format!("the Python module `{name}` offers no tools to a model: wrap its functions in `tool` declarations"))
    }

    fn local(&self) -> bool {
        true
    }

    fn call(&self, call: Call<'_>) -> Reply {
        if let Some(why) = self
            .import_errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(call.module)
        {
            return Reply::Failed(why.clone());
        }
        let deadline = self.deadline(call.deadline);
        let args = Json::Array(call.args.iter().map(Data::to_json).collect());
        let kwargs = Json::Object(
            call.kwargs
                .iter()
                .map(|(k, v)| (k.clone(), v.to_json()))
                .collect::<Map<_, _>>(),
        );
        let mut w = match self.pool.lend(deadline) {
            Lent::Worker(w) => w,
            Lent::None(why) => return Reply::Failed(why),
        };
        match w.call(call.module, call.member, args, kwargs, deadline) {
            Ok(reply) => {
                self.pool.give_back(w);
                self.answer(call.module, call.member, &reply)
            }
            Err(lost) => {
                drop(w);
                self.pool.lost();
                Reply::Failed(format!(
                    "the Python worker running `{}.{}` {}; it was replaced",
                    call.module,
                    call.member,
                    match lost {
                        crate::worker::Lost::Timeout(d) => format!(
                            "gave no answer within {:.1} s and was killed",
                            d.as_secs_f64()
                        ),
                        crate::worker::Lost::Died(why) => format!("died during the call: {why}"),
                    }
                ))
            }
        }
    }
}
