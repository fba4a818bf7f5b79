//! Turns written type expressions (`list[int]`, `"low" | "high"`, `Expense`) into `Ty`.

use rustc_hash::FxHashMap;

use kora_syntax::ast::{TypeExpr, TypeExprKind};
use kora_syntax::Diagnostic;

use crate::codes;
use crate::hir::{ModId, TypeId};
use crate::suggest;
use crate::types::Ty;

/// The names a type expression may refer to.
pub struct TypeScope<'a> {
    pub records: &'a FxHashMap<String, TypeId>,
    pub aliases: &'a FxHashMap<String, Ty>,
    /// The package of the file being lowered: its own records are keyed `ID::Name`.
    pub package: Option<&'a str>,
    /// The modules the file binds by `use` (`use a` → `a`), for `a.Config`.
    pub modules: Option<&'a FxHashMap<String, ModId>>,
    /// Each module's package id, to find the key of a module's records.
    pub mod_pkgs: &'a [Option<String>],
}

/// A record's name as messages show it: a package's `ID::Name` key reads `ID.Name`.
pub fn record_display(key: &str) -> String {
    key.replace("::", ".")
}

const BUILTIN_TYPES: &[&str] = &[
    "int", "float", "str", "bool", "None", "list", "dict", "set", "tuple", "Result", "Outcome",
    "Optional", "any", "Any", "object", "function", "Callable", "List", "Dict", "Set", "Tuple",
    "Union", "Literal", "Iterable", "Sequence", "Mapping", "bytes",
];

impl TypeScope<'_> {
    /// `a.Config` where the file binds module `a`: that module's record, or an unknown-type
    /// error listing its records. `None` when the prefix is not a bound module.
    fn qualified(&self, written: &str, t: &TypeExpr, diags: &mut Vec<Diagnostic>) -> Option<Ty> {
        let (prefix, name) = written.rsplit_once('.')?;
        let m = *self.modules?.get(prefix)?;
        let key_prefix = match self.mod_pkgs.get(m.0 as usize).and_then(|p| p.as_deref()) {
            Some(p) => format!("{p}::"),
            None => String::new(),
        };
        let key = format!("{key_prefix}{name}");
        if let Some(id) = self.records.get(&key) {
            return Some(Ty::Record(*id, record_display(&key)));
        }
        let known = self
            .records
            .keys()
            .filter_map(|k| match key_prefix.as_str() {
                "" => (!k.contains("::")).then_some(k.as_str()),
                p => k.strip_prefix(p),
            });
        let mut d = Diagnostic::error(
            codes::UNKNOWN_TYPE,
            format!("unknown type `{written}`: module `{prefix}` declares no record `{name}`"),
            t.span,
        )
        .with_label("not a type");
        d = match suggest::closest(name, known) {
            Some(s) => d.with_help(format!("did you mean `{prefix}.{s}`?")),
            None => d.with_help(format!("`{prefix}` declares no record types")),
        };
        diags.push(d);
        Some(Ty::Any)
    }

    pub fn lower(&self, t: &TypeExpr, diags: &mut Vec<Diagnostic>) -> Ty {
        match &t.kind {
            TypeExprKind::None => Ty::None,
            TypeExprKind::Literal(s) => Ty::Literal(vec![s.clone()]),
            TypeExprKind::Error => Ty::Any,
            TypeExprKind::Union(parts) => {
                let tys: Vec<Ty> = parts.iter().map(|p| self.lower(p, diags)).collect();
                if tys.iter().all(|t| matches!(t, Ty::Literal(_))) {
                    let mut members = Vec::new();
                    for t in tys {
                        if let Ty::Literal(ms) = t {
                            members.extend(ms);
                        }
                    }
                    Ty::Literal(members)
                } else if tys.iter().any(|t| !t.is_known()) {
                    Ty::Any
                } else {
                    Ty::Union(tys)
                }
            }
            TypeExprKind::Named { name, args } => {
                let arg = |i: usize, diags: &mut Vec<Diagnostic>| -> Ty {
                    args.get(i).map(|a| self.lower(a, diags)).unwrap_or(Ty::Any)
                };
                match name.as_str() {
                    "int" => Ty::Int,
                    "float" => Ty::Float,
                    "str" => Ty::Str,
                    "bool" => Ty::Bool,
                    "None" => Ty::None,
                    "bytes" => Ty::Std(crate::std_api::StdType::Bytes),
                    // `typing`'s spellings mean what the built-in ones do.
                    "list" | "List" => Ty::List(Box::new(arg(0, diags))),
                    "set" | "Set" => Ty::Set(Box::new(arg(0, diags))),
                    "dict" | "Dict" => Ty::Dict(Box::new(arg(0, diags)), Box::new(arg(1, diags))),
                    "Union" => self.lower(
                        &TypeExpr {
                            kind: TypeExprKind::Union(args.clone()),
                            span: t.span,
                        },
                        diags,
                    ),
                    "Literal"
                        if args
                            .iter()
                            .all(|a| matches!(a.kind, TypeExprKind::Literal(_))) =>
                    {
                        Ty::Literal(
                            args.iter()
                                .filter_map(|a| match &a.kind {
                                    TypeExprKind::Literal(s) => Some(s.clone()),
                                    _ => None,
                                })
                                .collect(),
                        )
                    }
                    // Read-only views of a container: anything iterable may be passed.
                    "Iterable" | "Sequence" | "Mapping" => Ty::Any,
                    "tuple" | "Tuple" => {
                        let rest = |a: &TypeExpr| matches!(&a.kind, TypeExprKind::Named { name, .. } if name == "...");
                        if let [item, dots] = args.as_slice() {
                            if rest(dots) && !rest(item) {
                                return Ty::TupleOf(Box::new(self.lower(item, diags)));
                            }
                        }
                        if args.is_empty() {
                            Ty::TupleOf(Box::new(Ty::Any))
                        } else {
                            Ty::Tuple(args.iter().map(|a| self.lower(a, diags)).collect())
                        }
                    }
                    "Result" | "Outcome" => Ty::result(arg(0, diags)),
                    "Optional" => {
                        let inner = arg(0, diags);
                        if inner.is_known() {
                            Ty::Union(vec![inner, Ty::None])
                        } else {
                            Ty::Any
                        }
                    }
                    "any" | "Any" | "object" => Ty::Any,
                    "function" | "Callable" => Ty::Func,
                    other => {
                        let own = self
                            .package
                            .and_then(|p| self.records.get(&format!("{p}::{other}")));
                        if let Some(id) = own {
                            Ty::Record(*id, format!("{}.{other}", self.package.unwrap_or("")))
                        } else if let Some(id) = self.records.get(other) {
                            Ty::Record(*id, other.to_string())
                        } else if let Some(ty) = self.qualified(other, t, diags) {
                            ty
                        } else if let Some(t) = self.aliases.get(other) {
                            t.clone()
                        } else if let Some(st) = crate::std_api::StdType::from_name(other) {
                            Ty::Std(st)
                        } else if let Some(d) = crate::lower_std::unknown_std_type(other, t.span) {
                            diags.push(d);
                            Ty::Any
                        } else if other.contains('.') {
                            // A module-qualified type (`json.Value`): checked when the
                            // module exists; until then anything goes.
                            Ty::Any
                        } else {
                            let known = BUILTIN_TYPES
                                .iter()
                                .copied()
                                .chain(
                                    self.records
                                        .keys()
                                        .map(String::as_str)
                                        .filter(|k| !k.contains("::")),
                                )
                                .chain(self.aliases.keys().map(String::as_str));
                            let mut d = Diagnostic::error(
                                codes::UNKNOWN_TYPE,
                                format!("unknown type `{other}`"),
                                t.span,
                            )
                            .with_label("not a type");
                            d = match suggest::closest(other, known) {
                                Some(s) => d.with_help(format!("did you mean `{s}`?")),
                                None => d.with_help("declare it with `type Name:` and its fields"),
                            };
                            diags.push(d);
                            Ty::Any
                        }
                    }
                }
            }
        }
    }
}
