//! Property tests: the parsers behind json, yaml, xml and csv never panic, whatever the text.
//!
//! Inputs are arbitrary strings and mutations of valid documents (a cut, a
//! byte swapped), which reach deeper into each grammar than random text.

use proptest::prelude::*;

use kora_check::types::Ty;

const SEEDS: &[&str] = &[
    r#"{"a": [1, 2.5, {"b": null}], "c": "x\u00e9", "d": true}"#,
    "name: x\nlist: [1, 2]\nmap: {a: &x 1, b: *x}\nblock: |\n  text\n",
    "<?xml version=\"1.0\"?><a x=\"1\"><b>t &amp; u</b><![CDATA[z]]><c/></a>",
    "id,name,note\n1,\"a, b\",\"q \"\"x\"\"\"\n2,c,\n",
];

/// A seed cut short with one character replaced.
pub(crate) fn mutated(seeds: &'static [&'static str]) -> impl Strategy<Value = String> {
    (
        0..seeds.len(),
        any::<usize>(),
        any::<usize>(),
        any::<char>(),
    )
        .prop_map(|(i, cut, at, c)| {
            let s: Vec<char> = seeds[i].chars().collect();
            let mut v: Vec<char> = s[..cut % (s.len() + 1)].to_vec();
            if !v.is_empty() {
                let at = at % v.len();
                v[at] = c;
            }
            v.into_iter().collect()
        })
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        mutated(SEEDS),
        "[\\[\\]{}:,\"'&<>!/a-z0-9 \n-]{0,64}"
    ]
}

fn with_interp(f: impl FnOnce(&mut crate::eval::Interp)) {
    let d = std::env::temp_dir().join(format!("kora-fuzz-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&d);
    let p = d.join("main.ko");
    let _ = std::fs::write(&p, "x = 1\n");
    let checked = kora_check::check_program(&p, &kora_check::Disk).expect("checks");
    let prog = checked.program.expect("no errors");
    let mut sink = Vec::new();
    let mut it = crate::eval::Interp::new(prog, &mut sink);
    f(&mut it);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn json_never_panics(s in text()) {
        let _ = super::json::parse_untyped(&s);
    }

    #[test]
    fn yaml_never_panics(s in text()) {
        let _ = super::yaml::load_for_tests(&s);
    }

    #[test]
    fn xml_never_panics(s in text()) {
        let _ = super::xml::parse_for_tests(&s);
    }

    #[test]
    fn csv_never_panics(s in text(), header in any::<bool>()) {
        with_interp(|it| {
            for ty in [Ty::Any, Ty::List(Box::new(Ty::Tuple(vec![Ty::Int, Ty::Str])))] {
                let _ = super::csv::parse_for_tests(it, &s, header, &ty);
            }
        });
    }

    #[test]
    fn csv_cells_and_replacements_never_panic(s in text()) {
        for ty in [Ty::Int, Ty::Float, Ty::Bool, Ty::Union(vec![Ty::Int, Ty::None])] {
            let _ = super::csv::cell(&s, &ty);
        }
        let _ = super::re::python_repl_for_tests(&s);
    }
}
