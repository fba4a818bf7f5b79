//! Error reporting: one parse reports every broken statement, each with its own span, code and teaching message.

mod common;
use common::{codes, stmt};
use kora_syntax::{parse, LineIndex, Span};

fn lines_of(src: &str) -> Vec<u32> {
    let idx = LineIndex::new(src);
    parse(src)
        .diagnostics
        .iter()
        .map(|d| idx.line(d.span().start))
        .collect()
}

#[test]
fn three_bad_statements_give_three_diagnostics() {
    let src = "x = 1 +\ny = (2, 3\nz = 4\nif w\n    pass\nok = True\n";
    let p = parse(src);
    assert_eq!(p.diagnostics.len(), 3, "{:#?}", p.diagnostics);
    assert_eq!(lines_of(src), vec![1, 2, 4]);
    // The good statements around them survive.
    let shapes: Vec<String> = p.module.stmts.iter().map(stmt).collect();
    assert!(shapes.contains(&"(= [z] 4)".to_string()), "{shapes:?}");
    assert!(shapes.contains(&"(= [ok] True)".to_string()), "{shapes:?}");
}

#[test]
fn errors_inside_blocks_are_each_reported() {
    let src = "def f() -> int:\n    a = = 1\n    b = 2\n    c = )\n    return 1 1\n";
    assert_eq!(lines_of(src), vec![2, 4, 5]);
}

#[test]
fn header_messages_teach() {
    let d = &parse("if x y:\n    pass\n").diagnostics;
    assert_eq!(d.len(), 1);
    assert_eq!(
        d[0].message,
        "expected `:` after the `if` condition, found name `y`"
    );
    assert_eq!(d[0].span(), Span::new(5, 6));
    assert!(d[0].help.is_some());

    let d = &parse("while x\n    pass\n").diagnostics;
    assert!(d[0]
        .message
        .starts_with("expected `:` after the `while` condition"));
    let d = &parse("for x xs:\n    pass\n").diagnostics;
    assert!(
        d[0].message
            .starts_with("expected `in` after the loop variable"),
        "{}",
        d[0].message
    );
    let d = &parse("def f()\n    pass\n").diagnostics;
    assert!(d[0]
        .message
        .starts_with("expected `:` after the function signature"));
}

#[test]
fn layout_errors() {
    let src = "if x:\n \tpass\n";
    let d = parse(src).diagnostics;
    assert_eq!(codes(&d), vec!["E0020"]);
    assert_eq!(d[0].message, "mixed tabs and spaces in indentation");
    assert_eq!(&src[d[0].span().range()], " \t");

    let d = parse("if x:\n\tif y:\n\t\tpass\n        z = 1\n").diagnostics;
    assert_eq!(codes(&d), vec!["E0021"]);

    let d = parse("if x:\n    a = 1\n  b = 2\n").diagnostics;
    assert_eq!(codes(&d), vec!["E0022"]);
    assert_eq!(
        d[0].message,
        "unindent does not match any outer indentation level"
    );

    let d = parse("a = 1\n    b = 2\n").diagnostics;
    assert_eq!(codes(&d), vec!["E0023"]);
    let d = parse("if a:\nb = 2\n").diagnostics;
    assert_eq!(codes(&d), vec!["E0024"]);
}

#[test]
fn bracket_errors() {
    assert_eq!(codes(&parse("x = (1, 2\n").diagnostics), vec!["E0025"]);
    assert_eq!(codes(&parse("x = [1, 2)\n").diagnostics), vec!["E0026"]);
    assert_eq!(codes(&parse("x = 1)\n").diagnostics), vec!["E0027"]);
    // An unclosed bracket does not swallow the statements after it.
    let src = "x = foo(1,\ny = 2\nz = 3 3\n";
    assert_eq!(lines_of(src), vec![1, 3]);
}

#[test]
fn lexical_errors() {
    // Ints have no size limit; only a decimal literal longer than CPython reads is refused.
    assert!(parse("x = 99999999999999999999\n").diagnostics.is_empty());
    assert!(parse("x = 9223372036854775808\n").diagnostics.is_empty());
    assert!(parse("x = 0xffff_ffff_ffff_ffff_ffff\n")
        .diagnostics
        .is_empty());
    let d = parse(&format!("x = {}\n", "9".repeat(4301))).diagnostics;
    assert_eq!(codes(&d), vec!["E0004"]);
    assert_eq!(d[0].message, "integer literal has too many digits");
    assert!(parse(&format!("x = {}\n", "9".repeat(4300)))
        .diagnostics
        .is_empty());
    assert!(parse("x = -9223372036854775808\n").diagnostics.is_empty());
    let d = parse("s = 'abc\nt = 1\n").diagnostics;
    assert_eq!(codes(&d), vec!["E0002"]);
    assert_eq!(d[0].message, "unterminated string");
    assert_eq!(codes(&parse("s = '''abc\n").diagnostics), vec!["E0002"]);
    assert_eq!(codes(&parse("s = '\\xZZ'\n").diagnostics), vec!["E0003"]);
    assert_eq!(codes(&parse("x = 1__0\n").diagnostics), vec!["E0005"]);
    assert_eq!(codes(&parse("x = 012\n").diagnostics), vec!["E0006"]);
    assert_eq!(codes(&parse("x = b'\u{e9}'\n").diagnostics), vec!["E0007"]);
    assert_eq!(codes(&parse("x = b'\\777'\n").diagnostics), vec!["E0003"]);
    assert!(parse("x = b'a\\xff'\n").diagnostics.is_empty());
    assert_eq!(codes(&parse("x = f'{}'\n").diagnostics), vec!["E0008"]);
    assert_eq!(codes(&parse("x = f'a } b'\n").diagnostics), vec!["E0008"]);
    // The span of a bad conversion covers a whole (multi-byte) character.
    let src = "x = f'{a!\u{e9}}'\n";
    let d = parse(src).diagnostics;
    assert_eq!(codes(&d), vec!["E0008"]);
    assert_eq!(&src[d[0].span().range()], "!\u{e9}");
    assert_eq!(codes(&parse("x = $ + 1\n").diagnostics), vec!["E0001"]);
    assert_eq!(codes(&parse("x = a ! b\n").diagnostics), vec!["E0001"]);
}

#[test]
fn fstring_expression_errors_point_into_the_string() {
    let src = "x = f'{a +}'\n";
    let d = parse(src).diagnostics;
    assert_eq!(d.len(), 1);
    assert!(
        d[0].message.contains("the end of the f-string field"),
        "{}",
        d[0].message
    );
    assert_eq!(d[0].span().start, 10);
}

#[test]
fn grammar_level_errors() {
    let cases: &[(&str, &str)] = &[
        ("f() = 1\n", "E0031"),
        ("1 = x\n", "E0031"),
        ("a, f() = 1, 2\n", "E0031"),
        ("a.b: int = 1\n", "E0032"),
        ("with open(p) as f:\n    pass\n", "E0033"),
        ("class A:\n    pass\n", "E0034"),
        ("try:\n    pass\n", "E0034"),
        ("raise ValueError(x)\n", "E0034"),
        ("def f(**kw):\n    pass\n", "E0035"),
        ("def f(a, *, b):\n    pass\n", "E0035"),
        ("def f(a=1, b):\n    pass\n", "E0036"),
        ("f(a=1, 2)\n", "E0037"),
        ("x = analyze\n", "E0038"),
        ("x = analyze[T](d, 'p')\n", "E0038"),
        ("on token(p):\n    pass\n", "E0040"),
        ("x = classified(a, b)\n", "E0038"),
        ("x = analyze(a) else:\n    pass\n", "E0039"),
        ("return x on token(p):\n    pass\n", "E0040"),
        ("else:\n    pass\n", "E0041"),
        ("case Ok(x):\n    pass\n", "E0042"),
        ("x = a[1:2, 3]\n", "E0044"),
        ("if (n := len(xs)) > 2:\n    pass\n", "E0044"),
        ("print(y := 3)\n", "E0044"),
        ("@cache\ndef f(x: int) -> int:\n    return x\n", "E0034"),
        ("@app.route('/')\ndef f() -> None:\n    pass\n", "E0034"),
    ];
    for (src, code) in cases {
        let d = parse(src).diagnostics;
        assert_eq!(codes(&d), vec![*code], "for {src:?}: {d:#?}");
        assert!(d[0].help.is_some(), "no help for {src:?}");
    }
}

#[test]
fn python_forms_are_named() {
    let d = parse("if (n := 3) > 2:\n    pass\n").diagnostics;
    assert_eq!(d[0].message, "Kora has no assignment expression (`:=`)");
    assert!(d[0]
        .help
        .as_deref()
        .is_some_and(|h| h.contains("`n = ...`")));
    let d = parse("@cache\ndef f() -> None:\n    pass\n").diagnostics;
    assert!(d[0].message.contains("decorators"), "{:?}", d[0].message);
    // The decorated function itself still parses.
    let p = parse("@cache\ndef f() -> None:\n    pass\n");
    assert!(p
        .module
        .stmts
        .iter()
        .any(|s| matches!(s.kind, kora_syntax::ast::StmtKind::Def(_))));
    // `:=` inside an f-string field is a format spec, as in Python.
    assert!(parse("print(f'{x:=10}')\n").diagnostics.is_empty());
}

#[test]
fn every_diagnostic_has_a_help_line_and_a_known_code() {
    let src = "x = (1 +\nif x y:\n  pass\nclass A:\n  pass\ns = 'abc\nx = 1)\n  z = 1\n";
    for d in parse(src).diagnostics {
        assert!(d.help.is_some(), "{d:?}");
        let n: u32 = d.code[1..].parse().unwrap_or(999);
        assert!(
            d.code.starts_with('E') && (1..=99).contains(&n),
            "{}",
            d.code
        );
    }
}

#[test]
fn broken_match_arms_recover() {
    let src = "match x:\n    case Ok(a) if:\n        pass\n    case _:\n        y = 1\n";
    let p = parse(src);
    assert_eq!(p.diagnostics.len(), 1);
    let shapes: Vec<String> = p.module.stmts.iter().map(stmt).collect();
    assert_eq!(
        shapes,
        vec!["(match x (case ERROR [pass]) (case _ [(= [y] 1)]))"]
    );
}

#[test]
fn broken_headers_keep_their_bodies() {
    let p = parse("def f(a b) -> int:\n    return 1\nfor in xs:\n    x = 2\n");
    assert_eq!(p.diagnostics.len(), 2);
    let shapes: Vec<String> = p.module.stmts.iter().map(stmt).collect();
    assert_eq!(
        shapes,
        vec!["(def f () _ [(return 1)])", "(for ERROR ERROR [(= [x] 2)])"]
    );
}

#[test]
fn else_if_is_read_as_elif() {
    let p = parse("if a:\n    x = 1\nelse if b:\n    x = 2\nelse:\n    x = 3\n");
    assert_eq!(codes(&p.diagnostics), vec!["E0043"]);
    assert_eq!(
        stmt(&p.module.stmts[0]),
        "(if a [(= [x] 1)] b [(= [x] 2)] else [(= [x] 3)])"
    );
}

#[test]
fn an_unterminated_string_is_not_also_an_unclosed_bracket() {
    let d = parse("print(\"hello)\nx = 1\n").diagnostics;
    assert_eq!(codes(&d), vec!["E0002"]);
    let d = parse("def f(:\n    pass\n").diagnostics;
    assert_eq!(codes(&d), vec!["E0030"]);
}
