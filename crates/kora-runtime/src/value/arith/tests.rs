//! Operators against a table of CPython 3.11 results (`cases.tsv`, from `scripts/gen_arith_cases.py`).

use super::*;
use crate::eval::builtins::tests::TestCaller;
use crate::value::format::repr_string;

fn parse(v: &str) -> Value {
    let (kind, lit) = v.split_once(':').expect("kind:literal");
    match kind {
        "i" => Value::Int(lit.parse().expect("int")),
        "f" => Value::Float(lit.parse().expect("float")),
        _ => Value::Bool(lit == "True"),
    }
}

fn op_of(s: &str) -> BinOp {
    match s {
        "+" => BinOp::Add,
        "-" => BinOp::Sub,
        "*" => BinOp::Mul,
        "/" => BinOp::Div,
        "//" => BinOp::FloorDiv,
        "%" => BinOp::Mod,
        "**" => BinOp::Pow,
        "&" => BinOp::BitAnd,
        "|" => BinOp::BitOr,
        "^" => BinOp::BitXor,
        "<<" => BinOp::Shl,
        _ => BinOp::Shr,
    }
}

#[test]
fn binary_matches_cpython_table() {
    let p = TestCaller::new().program;
    let mut n = 0;
    for line in include_str!("cases.tsv").lines() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let cols: Vec<&str> = line.split('\t').collect();
        let (op, a, b, want) = (op_of(cols[0]), parse(cols[1]), parse(cols[2]), cols[3]);
        let got = match binary(op, &a, &b) {
            Ok(v) => repr_string(&p, &v),
            Err(e) if e.code == codes::MEMORY && want == "E1019" => "E1019".to_string(),
            Err(e) => format!("{}: {}", e.code, e.message),
        };
        assert_eq!(got, want, "{} {} {}", cols[1], cols[0], cols[2]);
        // `+=` on numbers must agree with the binary operator.
        let mut t = a.clone();
        let got = match inplace(op, &mut t, &b) {
            Ok(()) => repr_string(&p, &t),
            Err(e) if e.code == codes::MEMORY && want == "E1019" => "E1019".to_string(),
            Err(e) => format!("{}: {}", e.code, e.message.replace("=:", ":")),
        };
        assert_eq!(got, want, "{} {}= {}", cols[1], cols[0], cols[2]);
        n += 1;
    }
    assert!(n > 1000, "only {n} cases");
}

fn show(v: &Value) -> String {
    repr_string(&TestCaller::new().program, v)
}

fn err(r: RtResult<Value>) -> String {
    match r {
        Ok(v) => show(&v),
        Err(e) => format!("{}: {}", e.code, e.message),
    }
}

#[test]
fn sequence_and_set_operators() {
    let l = |v: Vec<i64>| Value::list(v.into_iter().map(Value::Int).collect());
    let set = |v: Vec<i64>| {
        Value::set(
            v.into_iter()
                .map(|i| crate::value::Key(Value::Int(i)))
                .collect(),
        )
    };
    assert_eq!(
        err(binary(BinOp::Add, &Value::str("ab"), &Value::str("c"))),
        "'abc'"
    );
    assert_eq!(
        err(binary(BinOp::Mul, &Value::str("ab"), &Value::Int(3))),
        "'ababab'"
    );
    assert_eq!(
        err(binary(BinOp::Mul, &Value::Int(-1), &Value::str("ab"))),
        "''"
    );
    assert_eq!(
        err(binary(BinOp::Mul, &l(vec![1, 2]), &Value::Bool(true))),
        "[1, 2]"
    );
    assert_eq!(err(binary(BinOp::Add, &l(vec![1]), &l(vec![2]))), "[1, 2]");
    assert_eq!(
        err(binary(BinOp::Add, &l(vec![1]), &Value::tuple(vec![]))),
        "E1008: can only concatenate list (not \"tuple\") to list"
    );
    assert_eq!(
        err(binary(BinOp::Add, &Value::str("a"), &Value::Int(1))),
        "E1008: can only concatenate str (not \"int\") to str"
    );
    assert_eq!(
        err(binary(BinOp::Mul, &l(vec![1]), &Value::Float(1.5))),
        "E1008: can't multiply sequence by non-int of type 'float'"
    );
    assert_eq!(
        err(binary(BinOp::Sub, &l(vec![1]), &l(vec![1]))),
        "E1008: unsupported operand type(s) for -: 'list' and 'list'"
    );
    assert_eq!(
        err(binary(BinOp::Add, &Value::None, &Value::Int(1))),
        "E1008: unsupported operand type(s) for +: 'NoneType' and 'int'"
    );
    assert!(err(binary(BinOp::Mul, &Value::str("x"), &Value::Int(1 << 62))).starts_with("E1019"));
    assert_eq!(
        err(binary(BinOp::BitOr, &set(vec![1, 2]), &set(vec![3]))),
        "{1, 2, 3}"
    );
    assert_eq!(
        err(binary(BinOp::BitAnd, &set(vec![1, 2, 3]), &set(vec![3, 2]))),
        "{2, 3}"
    );
    assert_eq!(
        err(binary(BinOp::Sub, &set(vec![1, 2]), &set(vec![2]))),
        "{1}"
    );
    assert_eq!(
        err(binary(BinOp::BitXor, &set(vec![1, 2]), &set(vec![2, 3]))),
        "{1, 3}"
    );
    assert_eq!(err(unary(UnaryOp::Neg, &Value::Bool(true))), "-1");
    assert_eq!(err(unary(UnaryOp::Invert, &Value::Bool(true))), "-2");
    assert_eq!(
        err(unary(UnaryOp::Neg, &Value::Int(i64::MIN))),
        "9223372036854775808"
    );
    assert_eq!(
        err(unary(UnaryOp::Neg, &Value::str("a"))),
        "E1008: bad operand type for unary -: 'str'"
    );
    assert_eq!(
        err(unary(UnaryOp::Invert, &Value::Float(1.5))),
        "E1008: bad operand type for unary ~: 'float'"
    );
}

#[test]
fn inplace_updates_share_like_python() {
    // `b = a; a += [3]` changes `b` too; `a += "x"` on a str never does.
    let a = Value::list(vec![Value::Int(1)]);
    let b = a.clone();
    let mut t = a.clone();
    inplace(BinOp::Add, &mut t, &Value::str("xy")).unwrap();
    assert_eq!(show(&b), "[1, 'x', 'y']");
    let mut t = a.clone();
    inplace(BinOp::Add, &mut t, &a).unwrap();
    assert_eq!(show(&b), "[1, 'x', 'y', 1, 'x', 'y']");
    let mut t = a.clone();
    inplace(BinOp::Mul, &mut t, &Value::Int(0)).unwrap();
    assert_eq!(show(&b), "[]");
    let mut t = a.clone();
    assert_eq!(
        err(inplace(BinOp::Add, &mut t, &Value::Int(1)).map(|_| Value::None)),
        "E1008: 'int' object is not iterable"
    );

    let s1 = Value::str("ab");
    let alias = s1.clone();
    let mut s = s1;
    inplace(BinOp::Add, &mut s, &Value::str("c")).unwrap();
    assert_eq!(
        (show(&s), show(&alias)),
        ("'abc'".to_string(), "'ab'".to_string())
    );
    let mut unique = Value::str("x");
    for _ in 0..3 {
        inplace(BinOp::Add, &mut unique, &Value::str("é")).unwrap();
    }
    assert_eq!(show(&unique), "'xééé'");
    if let Value::Str(k) = &unique {
        assert!(!k.is_ascii());
    }

    let mut n = Value::Int(1);
    assert_eq!(
        err(inplace(BinOp::Add, &mut n, &Value::str("a")).map(|_| Value::None)),
        "E1008: unsupported operand type(s) for +=: 'int' and 'str'"
    );
    let set = Value::set(
        [1, 2]
            .into_iter()
            .map(|i| crate::value::Key(Value::Int(i)))
            .collect(),
    );
    let mut t = set.clone();
    inplace(BinOp::Sub, &mut t, &set).unwrap();
    assert_eq!(show(&set), "set()");
    let d = Value::dict(Default::default());
    let mut t = d.clone();
    let pairs = Value::list(vec![Value::tuple(vec![Value::str("k"), Value::Int(1)])]);
    inplace(BinOp::BitOr, &mut t, &pairs).unwrap();
    inplace(BinOp::BitOr, &mut t, &d).unwrap();
    assert_eq!(show(&d), "{'k': 1}");
}

#[test]
fn int_true_division_is_correctly_rounded() {
    let cases: &[(i64, i64, &str)] = &[
        (9007199254740993, 3, "3002399751580331.0"),
        (i64::MAX, 7, "1.3176245766935393e+18"),
        (-i64::MAX, 3, "-3.0744573456182584e+18"),
        (1_000_000_000_000_000_000, 7, "1.4285714285714286e+17"),
        (1, 3, "0.3333333333333333"),
        (i64::MIN, -1, "9.223372036854776e+18"),
        (0, -(1 << 60), "-0.0"),
    ];
    for (a, b, want) in cases {
        let got = int_true_div(*a, *b).map(crate::value::format::float_repr);
        assert_eq!(got.ok().as_deref(), Some(*want), "{a} / {b}");
    }
}
