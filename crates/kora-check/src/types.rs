//! Static types: what an annotation means, and the conservative compatibility rule the checker uses.
//!
//! `Any` is "not known here": the checker only rejects what it can prove wrong
//! and leaves the rest to the runtime's checks.

use std::fmt;

use crate::hir::TypeId;

/// The one kind of value an annotation takes without looking further, as a byte.
///
/// A `Ty` is niche-encoded (its boxes and strings carry the tag), so even telling
/// `int` from `Any` decodes it; the runtime checks every typed parameter of every call,
/// and reads this byte instead. `Other` means "ask the full check".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Quick {
    Any,
    Int,
    Float,
    Str,
    Bool,
    List,
    Dict,
    Other,
}

/// Which of the five outcomes a value may be: one bit per tag, in `Tags::ORDER`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tags(pub u8);

impl Tags {
    pub const NONE: Tags = Tags(0);
    pub const OK: Tags = Tags(1);
    pub const ERR: Tags = Tags(2);
    pub const UNCERTAIN: Tags = Tags(4);
    pub const EXHAUSTED: Tags = Tags(8);
    pub const FAILED: Tags = Tags(16);
    pub const ALL: Tags = Tags(31);
    /// What a model call answers: it never refuses with `Err`.
    pub const MODEL: Tags = Tags(1 | 4 | 8 | 16);
    /// What a standard-library effect answers.
    pub const OK_ERR: Tags = Tags(1 | 2);
    /// The tags with their constructor names, in the order messages list them.
    pub const ORDER: [(Tags, &'static str); 5] = [
        (Tags::OK, "Ok"),
        (Tags::ERR, "Err"),
        (Tags::UNCERTAIN, "Uncertain"),
        (Tags::EXHAUSTED, "Exhausted"),
        (Tags::FAILED, "Failed"),
    ];

    pub fn union(self, other: Tags) -> Tags {
        Tags(self.0 | other.0)
    }

    pub fn contains(self, other: Tags) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The tag a constructor name stands for.
    pub fn of_name(name: &str) -> Option<Tags> {
        Tags::ORDER
            .iter()
            .find(|(_, n)| *n == name)
            .map(|(t, _)| *t)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Any,
    Int,
    Float,
    Bool,
    Str,
    None,
    List(Box<Ty>),
    Dict(Box<Ty>, Box<Ty>),
    Set(Box<Ty>),
    /// `tuple[int, str]`; `tuple` alone is `TupleOf(Any)`.
    Tuple(Vec<Ty>),
    TupleOf(Box<Ty>),
    Record(TypeId, String),
    /// A literal union's members (`"low" | "high"`).
    Literal(Vec<String>),
    Union(Vec<Ty>),
    /// `Result[T]`, `Outcome[T]`: one of the five outcomes, `Ok` carrying `T`. The tags say
    /// which of the five this value can be (`analyze` never answers `Err`); a written
    /// `Result[T]` may be any of them. They never decide whether a type fits, only what a
    /// `match` must cover.
    Outcome(Box<Ty>, Tags),
    Func,
    Module,
    /// A value only the standard library makes (`sql.Db`, `time.DateTime`).
    Std(crate::std_api::StdType),
}

impl Ty {
    /// `Result[t]` as written: any of the five outcomes.
    pub fn result(t: Ty) -> Ty {
        Ty::Outcome(Box::new(t), Tags::ALL)
    }

    /// An outcome that is one of `tags`, `Ok` carrying `t`.
    pub fn outcome(t: Ty, tags: Tags) -> Ty {
        Ty::Outcome(Box::new(t), tags)
    }

    /// Can a value of type `from` be stored where `self` is declared?
    /// Unknown on either side is accepted: the runtime decides.
    pub fn accepts(&self, from: &Ty) -> bool {
        use Ty::*;
        match (self, from) {
            (Any, _) | (_, Any) => true,
            (Float, Int) | (Float, Bool) | (Int, Bool) => true,
            (Union(us), _) => {
                if let Union(fs) = from {
                    fs.iter().all(|f| self.accepts(f))
                } else {
                    us.iter().any(|u| u.accepts(from))
                }
            }
            (_, Union(fs)) => fs.iter().all(|f| self.accepts(f)),
            (Literal(_), Str) => true,
            (Str, Literal(_)) => true,
            (Literal(a), Literal(b)) => b.iter().all(|x| a.contains(x)),
            (List(a), List(b)) | (Set(a), Set(b)) | (TupleOf(a), TupleOf(b)) => a.accepts(b),
            (Dict(ka, va), Dict(kb, vb)) => ka.accepts(kb) && va.accepts(vb),
            (Tuple(a), Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.accepts(y))
            }
            (TupleOf(a), Tuple(b)) => b.iter().all(|y| a.accepts(y)),
            (Tuple(_), TupleOf(_)) => true,
            (Record(a, _), Record(b, _)) => a == b,
            (Outcome(a, _), Outcome(b, _)) => a.accepts(b),
            (Std(a), Std(b)) => a == b,
            _ => {
                std::mem::discriminant(self) == std::mem::discriminant(from)
                    && !matches!(self, Record(..) | Literal(_))
            }
        }
    }

    pub fn is_known(&self) -> bool {
        !matches!(self, Ty::Any)
    }

    /// This annotation's `Quick` kind (see there).
    pub fn quick(&self) -> Quick {
        match self {
            Ty::Any => Quick::Any,
            Ty::Int => Quick::Int,
            Ty::Float => Quick::Float,
            Ty::Str => Quick::Str,
            Ty::Bool => Quick::Bool,
            Ty::List(_) => Quick::List,
            Ty::Dict(..) => Quick::Dict,
            _ => Quick::Other,
        }
    }

    pub fn is_numeric(&self) -> bool {
        matches!(self, Ty::Int | Ty::Float | Ty::Bool)
    }

    /// Element type when iterating a value of this type, if known.
    pub fn element(&self) -> Ty {
        match self {
            Ty::List(t) | Ty::Set(t) | Ty::TupleOf(t) => (**t).clone(),
            Ty::Dict(k, _) => (**k).clone(),
            Ty::Str | Ty::Literal(_) => Ty::Str,
            _ => Ty::Any,
        }
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Any => write!(f, "any"),
            Ty::Int => write!(f, "int"),
            Ty::Float => write!(f, "float"),
            Ty::Bool => write!(f, "bool"),
            Ty::Str => write!(f, "str"),
            Ty::None => write!(f, "None"),
            Ty::List(t) => write!(f, "list[{t}]"),
            Ty::Dict(k, v) => write!(f, "dict[{k}, {v}]"),
            Ty::Set(t) => write!(f, "set[{t}]"),
            Ty::Tuple(ts) => {
                write!(f, "tuple[")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{t}")?;
                }
                write!(f, "]")
            }
            Ty::TupleOf(t) => write!(f, "tuple[{t}, ...]"),
            Ty::Record(_, n) => write!(f, "{n}"),
            Ty::Literal(ms) => {
                for (i, m) in ms.iter().enumerate() {
                    if i > 0 {
                        write!(f, " | ")?;
                    }
                    write!(f, "{m:?}")?;
                }
                Ok(())
            }
            Ty::Union(ts) => {
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        write!(f, " | ")?;
                    }
                    write!(f, "{t}")?;
                }
                Ok(())
            }
            Ty::Outcome(t, _) => write!(f, "Result[{t}]"),
            Ty::Func => write!(f, "function"),
            Ty::Module => write!(f, "module"),
            Ty::Std(t) => write!(f, "{}", t.name()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_widening_and_unions() {
        assert!(Ty::Float.accepts(&Ty::Int));
        assert!(!Ty::Int.accepts(&Ty::Str));
        let opt = Ty::Union(vec![Ty::Int, Ty::None]);
        assert!(opt.accepts(&Ty::None));
        assert!(opt.accepts(&Ty::Int));
        assert!(!opt.accepts(&Ty::Str));
        assert!(Ty::List(Box::new(Ty::Any)).accepts(&Ty::List(Box::new(Ty::Int))));
    }
}
