//! Every Kora statement and expression form, with the exact tree each produces.

mod common;
use common::{parse_ok, sexp};
use kora_syntax::ast::StmtKind;

#[test]
fn use_forms() {
    assert_eq!(sexp("use json"), "(use json)");
    assert_eq!(sexp("use json as j"), "(use json as j)");
    assert_eq!(sexp("use \"./lib/x.ko\" as x"), "(use \"./lib/x.ko\" as x)");
    assert_eq!(
        sexp("use python statistics as stats"),
        "(use python statistics as stats)"
    );
    assert_eq!(sexp("use mcp github as gh"), "(use mcp github as gh)");
}

#[test]
fn records_and_aliases() {
    let src = "type Expense:\n    \"A receipt line.\"\n    amount: float\n    note: str = \"\"\n    tags: list[str] = []\n";
    assert_eq!(
        sexp(src),
        "(type Expense (amount float _) (note str \"\") (tags list[str] []))"
    );
    let p = parse_ok(src);
    let StmtKind::Record(r) = &p.module.stmts[0].kind else {
        panic!("expected a record");
    };
    assert_eq!(r.doc.as_deref(), Some("A receipt line."));
    assert_eq!(
        sexp("type Risk = \"low\" | \"medium\" | \"high\""),
        "(type Risk = (| \"low\" \"medium\" \"high\"))"
    );
    assert_eq!(
        sexp("type J = json.Value | None"),
        "(type J = (| json.Value None))"
    );
    assert_eq!(
        sexp("type R = Result[dict[str, int]]"),
        "(type R = Result[dict[str int]])"
    );
}

#[test]
fn functions_tools_and_agents() {
    assert_eq!(
        sexp("tool lookup(q: str) -> dict[str, int]:\n    \"\"\"Looks up q.\"\"\"\n    return {}"),
        "(tool lookup (q:str) dict[str int] [\"Looks up q.\" (return (dict ))])"
    );
    assert_eq!(
        sexp("agent triage(t: Ticket) -> Result[Ticket]: isolated\n    return analyze(t, \"triage\")"),
        "(agent-isolated triage (t:Ticket) Result[Ticket] [(return (analyze t \"triage\"))])"
    );
    assert_eq!(
        sexp("agent a() -> str:\n    pass"),
        "(agent a () str [pass])"
    );
    assert_eq!(
        sexp("agent r(p: str) -> str: model(\"vision\")\n    pass"),
        "(agent-model:\"vision\" r (p:str) str [pass])"
    );
    assert_eq!(
        sexp("agent r() -> str: isolated model(\"v\")\n    pass"),
        "(agent-isolated-model:\"v\" r () str [pass])"
    );
    assert_eq!(
        sexp("with model(\"vision\"):\n    x = 1"),
        "(model (\"vision\") [(= [x] 1)])"
    );
    // `model` stays an ordinary name elsewhere.
    assert_eq!(sexp("model = 1"), "(= [model] 1)");
}

#[test]
fn outcome_bindings_with_else() {
    assert_eq!(
        sexp("e: Expense = analyze(d, \"x\") else:\n    return None"),
        "(: e Expense (analyze d \"x\") (else [(return None)]))"
    );
    assert_eq!(
        sexp("e: Expense = analyze(d, \"x\") else (why, kind):\n    print(why, kind)\n    return None"),
        "(: e Expense (analyze d \"x\") (else (why kind) [(call print why kind) (return None)]))"
    );
}

#[test]
fn analyze_stream_and_handlers() {
    assert_eq!(
        sexp("a: str = analyze(q, \"p\") stream"),
        "(: a str (analyze-stream q \"p\"))"
    );
    assert_eq!(
        sexp("x = analyze(q, \"p\") on token(piece):\n    print(piece)"),
        "(= [x] (analyze q \"p\") (on token (piece) [(call print piece)]))"
    );
    assert_eq!(
        sexp("x = analyze(q, \"p\", tools=[t])\n    on tool_call(name, args):\n        return \"no\"\n    on token(p):\n        pass"),
        "(= [x] (analyze q \"p\" tools=[t]) (on tool_call (name args) [(return \"no\")]) (on token (p) [pass]))"
    );
    assert_eq!(
        sexp("analyze(q, \"p\") on token(p): print(p)"),
        "(analyze q \"p\") (on token (p) [(call print p)])"
    );
    assert_eq!(
        sexp("h = ask_human(\"ok?\")"),
        "(= [h] (ask_human \"ok?\"))"
    );
    assert_eq!(sexp("c = classified(token)"), "(= [c] (classified token))");
}

#[test]
fn match_and_patterns() {
    let src = "\
match r:
    case Ok(x) if x.risk == \"low\":
        pass
    case Uncertain(reason) | Failed(reason):
        pass
    case Expense(amount=a, note=n):
        pass
    case (a, b) | [a, b]:
        pass
    case -1 | 2.5 | \"s\" | True | None:
        pass
    case Ok(_) as whole:
        pass
    case a, b:
        pass
    case (x):
        pass
    case _:
        pass
";
    let want = "(match r \
(case Ok(x) if (cmp (. x risk) == \"low\") [pass]) \
(case (| Uncertain(reason) Failed(reason)) [pass]) \
(case Expense(amount=a note=n) [pass]) \
(case (| (seq a b) (seq a b)) [pass]) \
(case (| -1 2.5 \"s\" True None) [pass]) \
(case (as Ok(_) whole) [pass]) \
(case (seq a b) [pass]) \
(case x [pass]) \
(case _ [pass]))";
    assert_eq!(sexp(src), want);
    assert_eq!(
        sexp("match a, b:\n    case _:\n        pass"),
        "(match (tuple a b) (case _ [pass]))"
    );
}

#[test]
fn budget_context_mock() {
    assert_eq!(
        sexp("budget(max_tokens=1000, max_calls=5):\n    pass"),
        "(budget (max_tokens=1000 max_calls=5) [pass])"
    );
    assert_eq!(
        sexp("with budget(max_steps=3):\n    pass"),
        "(budget (max_steps=3) [pass])"
    );
    assert_eq!(
        sexp("with context(max_input_tokens=100, reserve_output_tokens=10):\n    pass"),
        "(context (max_input_tokens=100 reserve_output_tokens=10) [pass])"
    );
    assert_eq!(
        sexp("with mock analyze -> Ok(Expense(amount=1.0)):\n    pass"),
        "(mock analyze (call Ok (call Expense amount=1.0)) [pass])"
    );
    assert_eq!(
        sexp("with mock ask_human -> \"yes\":\n    pass"),
        "(mock ask_human \"yes\" [pass])"
    );
}

#[test]
fn declassify_test_parallel() {
    assert_eq!(
        sexp("declassify secret for model:\n    pass"),
        "(declassify secret model [pass])"
    );
    assert_eq!(
        sexp("test \"adds\":\n    assert add(1, 2) == 3"),
        "(test \"adds\" [(assert (cmp (call add 1 2) == 3) _)])"
    );
    assert_eq!(
        sexp("parallel for x in xs:\n    break x"),
        "(parallel-for x xs [(break x)])"
    );
    assert_eq!(
        sexp("parallel for x in xs first:\n    pass"),
        "(parallel-for-first x xs [pass])"
    );
    assert_eq!(sexp("for first in xs:\n    pass"), "(for first xs [pass])");
}

#[test]
fn parallel_for_assignment_forms() {
    assert_eq!(
        sexp("rs = parallel for x in xs:\n    return x"),
        "(= rs (parallel-for x xs [(return x)]))"
    );
    assert_eq!(
        sexp("rs: list[int] = parallel for x in xs:\n    return x"),
        "(= rs: <type> (parallel-for x xs [(return x)]))"
    );
    assert_eq!(
        sexp("w = parallel for x in xs first:\n    return x"),
        "(= w (parallel-for-first x xs [(return x)]))"
    );
    // `first` stays an ordinary name everywhere else, also beside the assignment form.
    assert_eq!(sexp("first = 1"), "(= [first] 1)");
    assert_eq!(
        sexp("first = parallel for x in first:\n    return x"),
        "(= first (parallel-for x first [(return x)]))"
    );
}

#[test]
fn nested_kora_blocks() {
    let src = "\
test \"triage\":
    with mock analyze -> Ok(Ticket(risk=\"low\")):
        budget(max_tokens=10):
            parallel for t in tickets:
                r: Ticket = analyze(t, \"rate\") else:
                    continue
";
    assert_eq!(
        sexp(src),
        "(test \"triage\" [(mock analyze (call Ok (call Ticket risk=\"low\")) [(budget (max_tokens=10) \
[(parallel-for t tickets [(: r Ticket (analyze t \"rate\") (else [continue]))])])])])"
    );
}
