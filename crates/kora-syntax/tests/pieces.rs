//! The fast parse (a first run with empty errors, large files piece by piece in parallel) against one
//! fully recording run over the whole file: the same tree and the same diagnostics, always.

mod common;

use std::path::{Path, PathBuf};

use proptest::prelude::*;

use kora_syntax::parser::{parse_module_in_pieces, parse_module_whole};
use kora_syntax::{parse, Parsed};
use kora_testkit::edits::{edit, ITEMS, PIECES};

fn same(got: &Parsed, want: &Parsed, what: &str) {
    assert_eq!(got.module, want.module, "tree differs: {what}");
    assert_eq!(
        got.diagnostics, want.diagnostics,
        "diagnostics differ: {what}"
    );
}

/// Items besides the shared clean ones: the clauses that attach to the line above (`elif`,
/// `else`, `case`, `on`), a decorator, and pieces with syntax errors.
const MORE: [&str; 9] = [
    "if x:\n    pass\n",
    "elif y:\n    pass\n",
    "else:\n    pass\n",
    "case 1:\n    pass\n",
    "on token(piece):\n    print(piece)\n",
    "@cache\n",
    "x = (1,\n",
    "    y = 2\n",
    "test \"adds\":\n    assert 1 + 1 == 2\nparallel for n in [1, 2]:\n    print(n)\n",
];

const ALL: usize = ITEMS.len() + MORE.len();

fn program(picks: &[usize]) -> String {
    picks
        .iter()
        .map(|&i| {
            let i = i % ALL;
            ITEMS
                .get(i)
                .copied()
                .unwrap_or_else(|| MORE[i - ITEMS.len()])
        })
        .collect()
}

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "ko") {
            out.push(p);
        }
    }
}

/// Every program of the repository (the conformance and diagnostics golden data, the
/// fidelity programs, the examples and benchmarks), cut at every statement and at a few
/// coarser sizes.
#[test]
fn every_program_in_the_repository_parses_the_same_in_pieces() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["tests", "examples", "benches"] {
        sources(&root.join(dir), &mut files);
    }
    assert!(files.len() > 300, "found only {} programs", files.len());
    let mut cut = 0;
    for f in &files {
        let Ok(src) = std::fs::read_to_string(f) else {
            continue;
        };
        let want = parse_module_whole(&src);
        same(&parse(&src), &want, &f.display().to_string());
        for piece in [1, 5, 40] {
            let (got, used) = parse_module_in_pieces(&src, piece);
            same(
                &got,
                &want,
                &format!("{} in pieces of {piece}", f.display()),
            );
            cut += usize::from(used);
        }
    }
    // Most programs are clean and have several statements, so they really took the piece path.
    assert!(cut > 300, "only {cut} parses were cut into pieces");
}

/// The benchmark's generated program, at a size that takes the piece path by default.
#[test]
fn a_large_generated_program_is_parsed_in_pieces_by_default() {
    let block = "type Item{i}:\n    id: int\n    tags: list[str] = []\n\n\ndef score{i}(x: int, items: list[Item{i}]) -> int:\n    total = x * 2 + {i}\n    for it in items:\n        if it.id > 10 and \"a\" in it.tags:\n            total = total + it.id\n        else:\n            total = total - 1\n    match total % 3:\n        case 0:\n            return total\n        case _:\n            return total - 1\n\n\nif {i} > 2:\n    v{i} = f\"n{{x}}\"\nelif {i} < 0:\n    pass\nelse:\n    v{i} = [k for k in range({i})]\n";
    let src: String = (0..400)
        .map(|i| block.replace("{i}", &i.to_string()))
        .collect();
    let want = parse_module_whole(&src);
    assert!(want.diagnostics.is_empty(), "{:?}", want.diagnostics);
    same(&parse(&src), &want, "the default cut");
    let (got, used) = parse_module_in_pieces(&src, 2048);
    assert!(used, "a clean 10,000-line program is parsed in pieces");
    same(&got, &want, "pieces of 2048 tokens");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn random_programs_parse_the_same_in_pieces(
        picks in proptest::collection::vec(0usize..ALL, 1..12),
        at in 0usize..3000,
        del in 0usize..8,
        ins in 0usize..PIECES.len() + 1,
        piece in 1usize..30,
    ) {
        let base = program(&picks);
        let src = match PIECES.get(ins) {
            Some(p) => edit(&base, at, del, p),
            None => base,
        };
        let want = parse_module_whole(&src);
        let (got, _) = parse_module_in_pieces(&src, piece);
        prop_assert_eq!(&got.module, &want.module, "{:?}", src);
        prop_assert_eq!(&got.diagnostics, &want.diagnostics, "{:?}", src);
        let quick = parse(&src);
        prop_assert_eq!(&quick.module, &want.module, "{:?}", src);
        prop_assert_eq!(&quick.diagnostics, &want.diagnostics, "{:?}", src);
    }
}
