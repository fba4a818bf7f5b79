//! `reparse` against a whole parse: the same tree whenever it answers, and an answer for the edits an editor sends most.

mod common;

use proptest::prelude::*;

use kora_syntax::parse;
use kora_syntax::reparse::reparse;
use kora_testkit::edits::{edit, ITEMS, PIECES};

fn program(picks: &[usize]) -> String {
    picks.iter().map(|&i| ITEMS[i % ITEMS.len()]).collect()
}

/// Text an edit may insert: pieces that open or close brackets, strings and blocks.

#[test]
fn an_edit_inside_one_body_is_reparsed_alone() {
    let old = program(&[0, 1, 2, 3, 4, 5, 7]);
    let at = old.find("x * 2 + 1").unwrap_or(0) + 8;
    let new = edit(&old, at, 1, "42");
    let p = parse(&old);
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    let got = reparse(&p, &old, &new).expect("a body edit is reparsed");
    assert_eq!(got.module, parse(&new).module);
    // An edit that opens a bracket is refused, never misparsed.
    let broken = edit(&old, at, 0, "(");
    assert!(reparse(&p, &old, &broken).is_none());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn reparse_is_a_whole_parse(
        picks in proptest::collection::vec(0usize..ITEMS.len(), 1..8),
        at in 0usize..2000,
        del in 0usize..12,
        piece in 0usize..PIECES.len(),
    ) {
        let old = program(&picks);
        let p = parse(&old);
        prop_assert!(p.diagnostics.is_empty(), "the items parse: {:?}", p.diagnostics);
        let new = edit(&old, at, del, PIECES[piece]);
        if let Some(got) = reparse(&p, &old, &new) {
            let full = parse(&new);
            prop_assert!(full.diagnostics.is_empty(), "reparse answered for a text with errors: {:?}", full.diagnostics);
            prop_assert_eq!(got.module, full.module);
        }
    }
}
