//! The language features over an in-memory document: what hover, definition, completion and the
//! outline answer for closures, records, methods and broken files.

use std::collections::HashMap;
use std::path::PathBuf;

use kora_lsp::analysis::{analyze, Analysis};
use kora_lsp::completion::{self, Site};
use kora_lsp::definition::definition;
use kora_lsp::hover::hover;

fn analysis_of(src: &str) -> Analysis {
    let path = PathBuf::from("/nonexistent/kora-lsp-test/main.ko");
    let open = HashMap::from([(path.clone(), src.to_string())]);
    analyze(&path, &open, None)
}

fn offset(src: &str, needle: &str, nth: usize) -> usize {
    src.match_indices(needle)
        .nth(nth)
        .map(|(i, _)| i)
        .unwrap_or_else(|| panic!("`{needle}` not in the source"))
}

const SRC: &str = r#"type Box:
    """Holds one thing."""
    label: str
    weight: float

def make(label: str) -> Box:
    total = 0
    def add(n: int) -> int:
        return total + n
    return Box(label, float(add(1)))

b = make("x")
name = b.label
words = name.split()
"#;

#[test]
fn hover_shows_types_fields_and_record_docs() {
    let a = analysis_of(SRC);
    let (text, _) = hover(&a, offset(SRC, "name =", 0)).expect("hover on name");
    assert!(text.contains("name: str"), "{text}");
    let (text, _) = hover(&a, offset(SRC, "label\nwords", 0)).expect("hover on a field");
    assert!(
        text.contains("label: str") && text.contains("field of `Box`"),
        "{text}"
    );
    let (text, _) = hover(&a, offset(SRC, "Box(label", 0)).expect("hover on the type");
    assert!(
        text.contains("type Box:") && text.contains("weight: float"),
        "{text}"
    );
    let (text, _) = hover(&a, offset(SRC, "label: str)", 0)).expect("hover on a parameter");
    assert!(text.contains("parameter"), "{text}");
}

#[test]
fn definitions_reach_captured_variables_and_fields() {
    let a = analysis_of(SRC);
    // `total` inside `add` is captured from `make`.
    let d = definition(&a, offset(SRC, "total + n", 0)).expect("captured variable");
    assert_eq!(d.span.start as usize, offset(SRC, "total = 0", 0));
    let d = definition(&a, offset(SRC, "label\nwords", 0)).expect("field");
    assert_eq!(d.span.start as usize, offset(SRC, "label: str\n", 0));
    let d = definition(&a, offset(SRC, "make(\"x\")", 0)).expect("function");
    assert_eq!(d.span.start as usize, offset(SRC, "make(label", 0));
}

#[test]
fn completion_knows_methods_of_inferred_types() {
    let src = format!("{SRC}n = words.\n");
    let at = src.len() - 1;
    let (start, site) = completion::site(&src, at);
    assert_eq!(start, at);
    let Site::Member { dot } = site else {
        panic!("not a member site")
    };
    let mut patched = src.clone();
    patched.insert_str(at, "__kora_completion__");
    let items = completion::members(&analysis_of(&patched), dot);
    let labels: Vec<_> = items.iter().map(|i| i.label.as_str()).collect();
    assert!(
        labels.contains(&"append") && labels.contains(&"sort"),
        "{labels:?}"
    );
    // Locals of `make` are offered inside it, not outside.
    let a = analysis_of(SRC);
    let inside = completion::names(&a, offset(SRC, "return Box", 0));
    assert!(inside.iter().any(|i| i.label == "total"));
    let outside = completion::names(&a, offset(SRC, "name = ", 0));
    assert!(!outside.iter().any(|i| i.label == "total"));
}

#[test]
fn a_broken_file_still_has_an_outline_and_types() {
    let src = "def f(x: int) -> int:\n    return x +\n\ny = 2\nz = y * 3\n";
    let a = analysis_of(src);
    let entry = a.entry().expect("entry");
    assert!(entry.diagnostics.iter().any(|d| d.code.starts_with("E00")));
    let names: Vec<_> = kora_lsp::symbols::document_symbols(entry)
        .into_iter()
        .map(|s| s.name)
        .collect();
    assert_eq!(names, vec!["f", "y", "z"]);
    assert!(hover(&a, offset(src, "y * 3", 0)).is_some());
}

#[test]
fn an_mcp_servers_cached_tools_are_completed_and_their_arguments_checked() {
    let dir = PathBuf::from("/nonexistent/kora-lsp-test");
    let path = dir.join("main.ko");
    let cache = r#"{"tools": [
        {"name": "read_text_file", "inputSchema": {"type": "object",
            "properties": {"path": {"type": "string"}, "head": {"type": "integer"}}, "required": ["path"]}},
        {"name": "list-directory", "inputSchema": {"type": "object", "properties": {}}}]}"#;
    let src = "use mcp fs as fs\nuse python statistics as st\nr = fs.read_text_file(path=3)\nx = fs.\ny = st.\n";
    let analysis = |text: &str| {
        let open = HashMap::from([
            (path.clone(), text.to_string()),
            (dir.join(".kora/mcp/fs.json"), cache.to_string()),
        ]);
        analyze(&path, &open, None)
    };
    let complete = |nth: usize| -> Vec<(String, Option<String>)> {
        let at = offset(src, ".\n", nth);
        let (_, site) = completion::site(src, at + 1);
        let Site::Member { dot } = site else {
            panic!("not a member site")
        };
        let mut patched = src.to_string();
        patched.insert_str(at + 1, "__kora_completion__");
        completion::members(&analysis(&patched), dot)
            .into_iter()
            .map(|i| (i.label, i.detail))
            .collect()
    };
    let fs = complete(0);
    let labels: Vec<&str> = fs.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(
        labels,
        ["tools", "read_text_file", "list_directory"],
        "{fs:?}"
    );
    let detail = fs[1].1.as_deref().unwrap_or("");
    assert!(
        detail.contains("path: str") && detail.contains("head: int = ..."),
        "{detail}"
    );
    // A Python module's members are not known before it runs.
    assert!(complete(1).is_empty());
    // The same listing checks arguments as the user types.
    let a = analysis("use mcp fs as fs\nr = fs.read_text_file(path=3)\n");
    let entry = a.entry().expect("entry");
    assert!(
        entry.diagnostics.iter().any(|d| d.code == "E0204"),
        "{:?}",
        entry.diagnostics
    );
}

#[test]
fn definition_and_hover_go_into_a_path_dependency() {
    let root = std::env::temp_dir().join(format!("kora-lsp-pkg-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("greet")).expect("dir");
    std::fs::create_dir_all(root.join("app")).expect("dir");
    std::fs::write(
        root.join("greet/kora.toml"),
        "[package]\nname = \"greet\"\n",
    )
    .expect("write");
    let lib =
        "def hello(name: str) -> str:\n    return name\n\n\ntype Config:\n    greeting: str\n";
    std::fs::write(root.join("greet/lib.ko"), lib).expect("write");
    std::fs::write(
        root.join("app/kora.toml"),
        "[dependencies]\ngreet = { path = \"../greet\" }\n",
    )
    .expect("write");
    let src = "use greet\n\nprint(greet.hello(\"x\"))\n\n\ndef say(c: greet.Config) -> str:\n    return c.greeting\n";
    let path = std::fs::canonicalize(root.join("app"))
        .expect("dir")
        .join("main.ko");
    std::fs::write(&path, src).expect("write");
    let a = analyze(&path, &HashMap::new(), None);
    // On `use greet`: the package's lib.ko.
    let d = definition(&a, offset(src, "greet", 0)).expect("the package");
    assert!(a.files[d.file].path.ends_with("greet/lib.ko"));
    // On `greet.hello`: the function in the package.
    let d = definition(&a, offset(src, "hello", 0)).expect("the function");
    assert!(a.files[d.file].path.ends_with("greet/lib.ko"));
    assert_eq!(d.span.start as usize, lib.find("hello").expect("name"));
    // On `Config` in the annotation `greet.Config`: the package's record, and its fields.
    let d = definition(&a, offset(src, "Config)", 0)).expect("the record");
    assert!(a.files[d.file].path.ends_with("greet/lib.ko"));
    assert_eq!(d.span.start as usize, lib.find("Config").expect("record"));
    let (text, _) = hover(&a, offset(src, "Config)", 0)).expect("hover on the record");
    assert!(text.contains("greeting: str"), "{text}");
    let _ = std::fs::remove_dir_all(&root);
}
