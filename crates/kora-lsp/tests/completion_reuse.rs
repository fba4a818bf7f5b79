//! Completion right after a typed `.` answers from the analysis of the text before the dot;
//! a property test checks it offers exactly what a fresh check of the new text would.

use std::str::FromStr;

use proptest::prelude::*;
use tower_lsp_server::ls_types::Uri;

use kora_lsp::completion;
use kora_lsp::documents::{path_of, Documents};

const BASE: &str = r#"type Box:
    label: str
    weight: float
    tags: list[str] = []

def make(label: str, n: int) -> Box:
    total = n * 2 + 1
    return Box(label, float(total))

b = make("x", 3)
xs = [b, make("y", 4)]
d = {"a": 1}
name = b.label
"#;

/// What may stand before the `.`: a record, a field, a list, an index, a call, a dict, a string, a module-less name.
const RECEIVERS: &[&str] = &[
    "b",
    "b.label",
    "xs",
    "xs[0]",
    "make(\"z\", 1)",
    "d",
    "name",
    "b.tags",
    "nothing_here",
];

fn members(items: Vec<tower_lsp_server::ls_types::CompletionItem>) -> Vec<String> {
    let mut v: Vec<String> = items.into_iter().map(|i| i.label).collect();
    v.sort();
    v
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn members_from_the_kept_analysis_equal_a_fresh_check(
        digit in 0u8..10,
        receiver in 0..RECEIVERS.len(),
        at_end in any::<bool>(),
        blanks in 0usize..2,
    ) {
        let docs = Documents::default();
        let uri = Uri::from_str("file:///nonexistent/kora-lsp-reuse/main.ko").expect("uri");
        let path = path_of(&uri);
        // An unrelated edit first, then the probe line typed without its dot, then the dot.
        let base = BASE.replacen("n * 2 + 1", &format!("n * 2 + {digit}"), 1);
        let probe = format!("probe = {}", RECEIVERS[receiver]);
        let before = if at_end {
            format!("{base}{probe}\n")
        } else {
            base.replacen("name = b.label\n", &format!("{probe}\nname = b.label\n"), 1)
        };
        docs.open(uri.clone(), base.clone(), 1);
        let _ = docs.analysis(&path);
        docs.edit(&uri, 2, |t| *t = before.clone());
        let _ = docs.analysis(&path);
        let dot = before.find(&probe).expect("probe") + probe.len();
        let typed = ".".to_string() + &" ".repeat(blanks);
        let mut after = before.clone();
        after.insert_str(dot, &typed);
        docs.edit(&uri, 3, |t| *t = after.clone());
        let offset = dot + typed.len();
        let kept = docs.analysis_without(&path, &after, dot, offset).expect("the text before the dot was analysed");
        let reused = members(completion::members(&kept, dot));
        let mut patched = after.clone();
        patched.insert_str(offset, "__kora_completion__");
        let fresh = members(completion::members(&docs.analysis_of_text(&path, patched), dot));
        prop_assert_eq!(reused, fresh);
        // A text that differs anywhere else is never answered from the kept analysis.
        let mut other = after.clone();
        other.push_str("z = 1\n");
        prop_assert!(docs.analysis_without(&path, &other, dot, offset).is_none());
    }
}
