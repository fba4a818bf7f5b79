//! Python's implicit type aliases: `Matrix = List[List[int]]` at the top of a file names a type.
//!
//! Python 3.11 has no `type X = ...` statement; a module-level assignment of a subscripted
//! type (`Dict[str, int]`, `list[tuple[str, int]]`, `Optional[str]`) or of a union of types
//! (`int | str`) is how a Python file names one. Kora reads such an assignment as `type X = ...`
//! so the same file type-checks under both. Only those shapes count: `f = int` stays an
//! ordinary assignment, since calling `f("3")` is ordinary code. The assignment binds no value
//! at run time (in Kora a subscripted type is not a value).

use kora_syntax::ast::{BinOp, Expr, ExprKind, Stmt, StmtKind, TypeExpr, TypeExprKind};

/// The name and type of `Name = <type>` at module level, if the statement is one.
pub fn alias_of(s: &Stmt) -> Option<(&str, TypeExpr)> {
    let StmtKind::Assign { targets, value, .. } = &s.kind else {
        return None;
    };
    let [target] = targets.as_slice() else {
        return None;
    };
    let ExprKind::Name(name) = &target.kind else {
        return None;
    };
    if !type_shaped(value) {
        return None;
    }
    Some((name, to_type(value)?))
}

/// Generic types a subscript may name: `xs[0]` on a variable is a value, `List[int]` a type.
const GENERICS: &[&str] = &[
    "List", "Dict", "Set", "Tuple", "Optional", "Union", "Callable", "Literal", "Iterable",
    "Sequence", "Mapping", "list", "dict", "set", "tuple", "Result",
];

/// Types a name in a union may be: `int | None` is a type, `a | b` on variables a value.
const SCALARS: &[&str] = &["int", "float", "str", "bool", "None"];

/// A subscript of a generic type (`List[int]`, `typing.Dict[str, int]`), or a `|` whose every
/// operand is a type (`int | None`, `list[int] | str`).
fn type_shaped(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Index(base, _) => match &base.kind {
            ExprKind::Name(n) => GENERICS.contains(&n.as_str()),
            ExprKind::Attr(m, _) => matches!(&m.kind, ExprKind::Name(t) if t == "typing"),
            _ => false,
        },
        ExprKind::Binary(BinOp::BitOr, a, b) => union_operand(a) && union_operand(b),
        _ => false,
    }
}

fn union_operand(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::None => true,
        ExprKind::Name(n) => SCALARS.contains(&n.as_str()),
        _ => type_shaped(e),
    }
}

/// The type an expression spells, as the type parser would have read it.
fn to_type(e: &Expr) -> Option<TypeExpr> {
    let kind = match &e.kind {
        ExprKind::Name(n) => TypeExprKind::Named {
            name: n.clone(),
            args: Vec::new(),
        },
        ExprKind::Attr(obj, field) => match &obj.kind {
            ExprKind::Name(m) => TypeExprKind::Named {
                name: format!("{m}.{}", field.name),
                args: Vec::new(),
            },
            _ => return None,
        },
        ExprKind::None => TypeExprKind::None,
        ExprKind::Str(s) => TypeExprKind::Literal(s.clone()),
        ExprKind::Index(base, index) => {
            let TypeExprKind::Named { name, .. } = to_type(base)?.kind else {
                return None;
            };
            let items: Vec<&Expr> = match &index.kind {
                ExprKind::Tuple(xs) => xs.iter().collect(),
                _ => vec![index],
            };
            let args = items.into_iter().map(to_type).collect::<Option<Vec<_>>>()?;
            TypeExprKind::Named { name, args }
        }
        // `Callable[[A, B], R]`: the parameter list, as the type parser keeps it.
        ExprKind::List(xs) => TypeExprKind::Named {
            name: "[]".into(),
            args: xs.iter().map(to_type).collect::<Option<Vec<_>>>()?,
        },
        ExprKind::Binary(BinOp::BitOr, a, b) => {
            let mut parts = Vec::new();
            for side in [a, b] {
                match to_type(side)?.kind {
                    TypeExprKind::Union(ps) => parts.extend(ps),
                    kind => parts.push(TypeExpr {
                        kind,
                        span: side.span,
                    }),
                }
            }
            TypeExprKind::Union(parts)
        }
        _ => return None,
    };
    Some(TypeExpr { kind, span: e.span })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(src: &str) -> Option<String> {
        let parsed = kora_syntax::parse(src);
        let s = parsed.module.stmts.first()?;
        alias_of(s).map(|(n, t)| format!("{n} = {:?}", t.kind).chars().take(60).collect())
    }

    #[test]
    fn subscripts_and_unions_are_aliases_and_plain_names_are_not() {
        assert!(first("Matrix = List[List[int]]\n").is_some());
        assert!(first("Pair = tuple[str, int]\n").is_some());
        assert!(first("Maybe = int | None\n").is_some());
        assert!(first("Cb = Callable[[int, str], bool]\n").is_some());
        assert!(first("Num = int | float\n").is_some());
        assert!(first("T = typing.Dict[str, int]\n").is_some());
        assert!(first("f = int\n").is_none());
        assert!(
            first("x = xs[0]\n").is_none(),
            "a subscript of a variable is a value"
        );
        assert!(first("x = xs[0] + 1\n").is_none());
        assert!(first("flags = a | b\n").is_none());
        assert!(first("mask = 1 | 2\n").is_none());
        assert!(first("a, b = List[int], 3\n").is_none());
    }
}
