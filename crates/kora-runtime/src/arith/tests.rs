//! Operators against a table of CPython 3.11 results (`cases.tsv`, from `scripts/gen_arith_cases.py`).

use super::*;
use crate::builtins::tests::TestCaller;
use crate::format::repr_string;

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
            Err(e) if e.code == codes::OVERFLOW && want == "E1004" => "E1004".to_string(),
            Err(e) => format!("{}: {}", e.code, e.message),
        };
        assert_eq!(got, want, "{} {} {}", cols[1], cols[0], cols[2]);
        // `+=` on numbers must agree with the binary operator.
        let mut t = a.clone();
        let got = match inplace(op, &mut t, &b) {
            Ok(()) => repr_string(&p, &t),
            Err(e) if e.code == codes::OVERFLOW && want == "E1004" => "E1004".to_string(),
            Err(e) => format!("{}: {}", e.code, e.message.replace("=:", ":")),
        };
        assert_eq!(got, want, "{} {}= {}", cols[1], cols[0], cols[2]);
        n += 1;
    }
    assert!(n > 1000, "only {n} cases");
}
