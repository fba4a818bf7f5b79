//! Every keyword the lexer and parser know is offered by completion and coloured by the VS Code
//! grammar, and `first` is coloured nowhere (it is a keyword in one position only).

use std::path::Path;

use kora_lsp::completion::{KEYWORDS, REJECTED};

fn repo(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

/// The words inside `open"WORD"` occurrences (`#[token("def")]`, `kw("match")`).
fn quoted_after(text: &str, open: &str) -> Vec<String> {
    text.match_indices(open)
        .filter_map(|(i, _)| {
            let rest = &text[i + open.len()..];
            let end = rest.find('"')?;
            let w = &rest[..end];
            w.chars()
                .all(|c| c.is_ascii_alphabetic() || c == '_')
                .then(|| w.to_string())
        })
        .filter(|w| !w.is_empty())
        .collect()
}

fn has_word(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + word.len()..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        !ident(before) && !ident(after)
    })
}

#[test]
fn every_keyword_is_completed_and_highlighted() {
    let tokens = repo("crates/kora-syntax/src/token.rs");
    let hard = quoted_after(&tokens, "#[token(\"");
    assert!(
        hard.contains(&"def".to_string()),
        "no keywords found in token.rs"
    );
    let mut soft = Vec::new();
    for f in
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../kora-syntax/src/parser"))
            .expect("parser dir")
    {
        let text = std::fs::read_to_string(f.expect("entry").path()).expect("parser file");
        soft.extend(quoted_after(&text, "kw(\""));
    }
    assert!(
        soft.contains(&"match".to_string()),
        "no soft keywords found"
    );
    let grammar = repo("editors/vscode/syntaxes/kora.tmLanguage.json");
    for w in hard.iter().chain(&soft).filter(|w| *w != "first") {
        assert!(
            KEYWORDS.contains(&w.as_str()) || REJECTED.contains(&w.as_str()),
            "`{w}` is a keyword but completion does not offer it"
        );
        assert!(
            has_word(&grammar, w),
            "`{w}` is missing from the TextMate grammar"
        );
    }
    for w in KEYWORDS {
        assert!(
            has_word(&grammar, w),
            "`{w}` is missing from the TextMate grammar"
        );
    }
    assert!(soft.contains(&"first".to_string()));
    assert!(!has_word(&grammar, "first"), "`first` must not be coloured");
    assert!(!KEYWORDS.contains(&"first"));
}
