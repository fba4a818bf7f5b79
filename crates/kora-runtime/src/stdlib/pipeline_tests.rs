//! The standard library's effects reach the pipeline with their class and structural op id, and can be replayed.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::Value as Json;

use crate::durable::effect::{Class, Effect, Observer, State, Verdict};

#[derive(Clone, Default)]
struct Log(Rc<RefCell<Vec<String>>>);

struct Watch {
    log: Log,
    /// Answers `time.now` from a record instead of the clock.
    frozen_clock: Option<Json>,
}

impl Observer for Watch {
    fn prepared(&mut self, e: &Effect) -> Verdict {
        match (&self.frozen_clock, e.call) {
            (Some(j), "time.now") => Verdict::Replay(j.clone()),
            _ => Verdict::Proceed,
        }
    }
    fn transition(&mut self, e: &Effect, s: State) {
        if s == State::Prepared {
            let class = match e.class {
                Class::Pure => "pure",
                Class::Read => "read",
                Class::Effect => "effect",
                Class::WorldChanging => "world-changing",
            };
            self.log
                .0
                .borrow_mut()
                .push(format!("{} {} {} {}", e.op, e.call, class, e.target));
        }
    }
    fn terminal(&mut self, e: &Effect, ok: bool, record: &dyn Fn() -> Json) {
        if e.call == "fs.read" {
            self.log
                .0
                .borrow_mut()
                .push(format!("end {ok} {}", record()));
        }
    }
}

fn run(source: &str, frozen_clock: Option<Json>) -> (String, Vec<String>) {
    let d = std::env::temp_dir().join(format!(
        "kora-pipeline-{}-{}",
        std::process::id(),
        source.len()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    let p = d.join("main.ko");
    std::fs::write(&p, source).expect("program");
    let checked = kora_check::check_program(&p, &kora_check::Disk).expect("checks");
    let prog = checked.program.expect("no errors");
    let log = Log::default();
    let mut out = Vec::new();
    {
        let mut it = crate::eval::Interp::new(prog, &mut out);
        it.set_run(super::RunSettings {
            run_id: Some("t".into()),
            args: Vec::new(),
            observers: vec![Box::new(Watch {
                log: log.clone(),
                frozen_clock,
            })],
            ..Default::default()
        });
        it.run_main().expect("runs");
    }
    let lines = log.0.borrow().clone();
    (String::from_utf8(out).expect("utf-8"), lines)
}

#[test]
fn effects_carry_class_and_structural_op_ids() {
    let (out, log) = run(
        "use fs\nuse time\nuse json\n\ndef save(text: str) -> None:\n    fs.write(\"a.txt\", text)\n\nsave(json.encode([1]))\nprint(fs.read(\"a.txt\"))\nt = time.now()\n",
        None,
    );
    assert_eq!(out, "Ok('[1]')\n");
    assert_eq!(
        log,
        vec![
            "main.ko:save#0 fs.write world-changing a.txt",
            "main.ko:<module>#3 fs.read read a.txt",
            "end true {\"ok\":\"[1]\"}",
            "main.ko:<module>#4 time.now effect clock",
        ],
        "json.encode is pure and never reaches the pipeline"
    );
}

#[test]
fn a_recorded_clock_is_replayed_not_read() {
    let ns = "1700000000000000000";
    let (out, _) = run(
        "use time\nprint(time.now())\n",
        Some(serde_json::json!({ "ok": ns })),
    );
    assert_eq!(out, "2023-11-14 22:13:20+00:00\n");
}
