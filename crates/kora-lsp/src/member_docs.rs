//! Signatures and one-line docs of the built-in types' methods (`str.split`, `list.append`,
//! `dict.get`, ...) and the standard library's members (`json.parse`, `db.query`), for hover and
//! signature help.

use kora_check::std_api::{lookup, Member, Owner, StdMod, StdType};
use kora_check::types::Ty;

/// A callable as hover and signature help show it.
#[derive(Clone, Debug, PartialEq)]
pub struct Sig {
    /// `str.split`, `json.parse`, `norm`.
    pub name: String,
    /// Each parameter as written: `sep: str | None = None`.
    pub params: Vec<String>,
    pub ret: String,
    pub doc: String,
}

impl Sig {
    pub fn label(&self) -> String {
        format!("{}({}) -> {}", self.name, self.params.join(", "), self.ret)
    }

    pub fn markdown(&self) -> String {
        let mut s = format!("```kora\n{}\n```", self.label());
        if !self.doc.is_empty() {
            s.push_str("\n\n");
            s.push_str(&self.doc);
        }
        s
    }
}

/// `(owner, name, params, return type, doc)`.
type Row = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

const METHODS: &[Row] = &[
    (
        "str",
        "capitalize",
        "",
        "str",
        "A copy with the first character upper-case and the rest lower-case.",
    ),
    (
        "str",
        "center",
        "width: int, fill: str = \" \"",
        "str",
        "The text centred in `width` characters.",
    ),
    (
        "str",
        "count",
        "sub: str",
        "int",
        "How many times `sub` occurs, without overlaps.",
    ),
    (
        "str",
        "endswith",
        "suffix: str",
        "bool",
        "Whether the text ends with `suffix`.",
    ),
    (
        "str",
        "find",
        "sub: str",
        "int",
        "Where `sub` first occurs, or -1.",
    ),
    (
        "str",
        "format",
        "*args",
        "str",
        "The text with each `{}` field replaced by an argument.",
    ),
    (
        "str",
        "index",
        "sub: str",
        "int",
        "Where `sub` first occurs; an error when it does not.",
    ),
    (
        "str",
        "isalnum",
        "",
        "bool",
        "Whether every character is a letter or digit (and there is one).",
    ),
    (
        "str",
        "isalpha",
        "",
        "bool",
        "Whether every character is a letter (and there is one).",
    ),
    (
        "str",
        "isdecimal",
        "",
        "bool",
        "Whether every character is a decimal digit (and there is one).",
    ),
    (
        "str",
        "isdigit",
        "",
        "bool",
        "Whether every character is a digit (and there is one).",
    ),
    (
        "str",
        "islower",
        "",
        "bool",
        "Whether every cased character is lower-case.",
    ),
    (
        "str",
        "isnumeric",
        "",
        "bool",
        "Whether every character is numeric (and there is one).",
    ),
    (
        "str",
        "isspace",
        "",
        "bool",
        "Whether every character is white space (and there is one).",
    ),
    (
        "str",
        "isupper",
        "",
        "bool",
        "Whether every cased character is upper-case.",
    ),
    (
        "str",
        "join",
        "items: list[str]",
        "str",
        "The items joined with this text between them.",
    ),
    (
        "str",
        "ljust",
        "width: int, fill: str = \" \"",
        "str",
        "The text padded on the right to `width`.",
    ),
    ("str", "lower", "", "str", "A lower-case copy."),
    (
        "str",
        "lstrip",
        "chars: str | None = None",
        "str",
        "A copy without leading white space (or `chars`).",
    ),
    (
        "str",
        "partition",
        "sep: str",
        "tuple[str, str, str]",
        "The text before the first `sep`, `sep`, and the rest.",
    ),
    (
        "str",
        "removeprefix",
        "prefix: str",
        "str",
        "A copy without `prefix` at the start, if it is there.",
    ),
    (
        "str",
        "removesuffix",
        "suffix: str",
        "str",
        "A copy without `suffix` at the end, if it is there.",
    ),
    (
        "str",
        "replace",
        "old: str, new: str, count: int = -1",
        "str",
        "A copy with each `old` replaced by `new`.",
    ),
    (
        "str",
        "rfind",
        "sub: str",
        "int",
        "Where `sub` last occurs, or -1.",
    ),
    (
        "str",
        "rjust",
        "width: int, fill: str = \" \"",
        "str",
        "The text padded on the left to `width`.",
    ),
    (
        "str",
        "rpartition",
        "sep: str",
        "tuple[str, str, str]",
        "The text before the last `sep`, `sep`, and the rest.",
    ),
    (
        "str",
        "rsplit",
        "sep: str | None = None, maxsplit: int = -1",
        "list[str]",
        "The parts between separators, splitting from the right.",
    ),
    (
        "str",
        "rstrip",
        "chars: str | None = None",
        "str",
        "A copy without trailing white space (or `chars`).",
    ),
    (
        "str",
        "split",
        "sep: str | None = None, maxsplit: int = -1",
        "list[str]",
        "The parts between separators; without `sep`, the words between runs of white space.",
    ),
    (
        "str",
        "splitlines",
        "",
        "list[str]",
        "The lines, without their line breaks.",
    ),
    (
        "str",
        "startswith",
        "prefix: str",
        "bool",
        "Whether the text starts with `prefix`.",
    ),
    (
        "str",
        "strip",
        "chars: str | None = None",
        "str",
        "A copy without white space (or `chars`) at both ends.",
    ),
    (
        "str",
        "swapcase",
        "",
        "str",
        "A copy with upper and lower case exchanged.",
    ),
    (
        "str",
        "title",
        "",
        "str",
        "A copy with each word capitalised.",
    ),
    ("str", "upper", "", "str", "An upper-case copy."),
    (
        "str",
        "zfill",
        "width: int",
        "str",
        "The text padded with zeros on the left to `width`.",
    ),
    (
        "list",
        "append",
        "item: T",
        "None",
        "Adds `item` at the end.",
    ),
    ("list", "clear", "", "None", "Removes every item."),
    ("list", "copy", "", "list[T]", "A shallow copy."),
    (
        "list",
        "count",
        "item: T",
        "int",
        "How many items equal `item`.",
    ),
    (
        "list",
        "extend",
        "items: list[T]",
        "None",
        "Adds each of `items` at the end.",
    ),
    (
        "list",
        "index",
        "item: T",
        "int",
        "Where `item` first occurs; an error when it does not.",
    ),
    (
        "list",
        "insert",
        "at: int, item: T",
        "None",
        "Puts `item` before position `at`.",
    ),
    (
        "list",
        "pop",
        "at: int = -1",
        "T",
        "Removes and returns the item at `at` (the last by default).",
    ),
    (
        "list",
        "remove",
        "item: T",
        "None",
        "Removes the first item equal to `item`; an error when there is none.",
    ),
    (
        "list",
        "reverse",
        "",
        "None",
        "Reverses the items in place.",
    ),
    (
        "list",
        "sort",
        "key = None, reverse: bool = False",
        "None",
        "Sorts the items in place (stable).",
    ),
    ("dict", "clear", "", "None", "Removes every entry."),
    ("dict", "copy", "", "dict[K, V]", "A shallow copy."),
    (
        "dict",
        "get",
        "key: K, default: V | None = None",
        "V | None",
        "The value of `key`, or `default` when it is missing.",
    ),
    (
        "dict",
        "items",
        "",
        "list[tuple[K, V]]",
        "Each (key, value) pair, in insertion order.",
    ),
    (
        "dict",
        "keys",
        "",
        "list[K]",
        "The keys, in insertion order.",
    ),
    (
        "dict",
        "pop",
        "key: K, default: V = ...",
        "V",
        "Removes `key` and returns its value (or `default`).",
    ),
    (
        "dict",
        "setdefault",
        "key: K, default: V",
        "V",
        "The value of `key`, first setting it to `default` when missing.",
    ),
    (
        "dict",
        "update",
        "other: dict[K, V]",
        "None",
        "Adds or replaces the entries of `other`.",
    ),
    (
        "dict",
        "values",
        "",
        "list[V]",
        "The values, in insertion order.",
    ),
    ("set", "add", "item: T", "None", "Adds `item`."),
    ("set", "clear", "", "None", "Removes every item."),
    ("set", "copy", "", "set[T]", "A shallow copy."),
    (
        "set",
        "difference",
        "other: set[T]",
        "set[T]",
        "The items not in `other`.",
    ),
    (
        "set",
        "discard",
        "item: T",
        "None",
        "Removes `item` if it is there.",
    ),
    (
        "set",
        "intersection",
        "other: set[T]",
        "set[T]",
        "The items also in `other`.",
    ),
    (
        "set",
        "isdisjoint",
        "other: set[T]",
        "bool",
        "Whether no item is in `other`.",
    ),
    (
        "set",
        "issubset",
        "other: set[T]",
        "bool",
        "Whether every item is in `other`.",
    ),
    (
        "set",
        "issuperset",
        "other: set[T]",
        "bool",
        "Whether every item of `other` is here.",
    ),
    ("set", "pop", "", "T", "Removes and returns some item."),
    (
        "set",
        "remove",
        "item: T",
        "None",
        "Removes `item`; an error when it is not there.",
    ),
    (
        "set",
        "symmetric_difference",
        "other: set[T]",
        "set[T]",
        "The items in exactly one of the two.",
    ),
    (
        "set",
        "union",
        "other: set[T]",
        "set[T]",
        "The items in either.",
    ),
    (
        "set",
        "update",
        "other: set[T]",
        "None",
        "Adds each item of `other`.",
    ),
    (
        "tuple",
        "count",
        "item: T",
        "int",
        "How many items equal `item`.",
    ),
    (
        "tuple",
        "index",
        "item: T",
        "int",
        "Where `item` first occurs; an error when it does not.",
    ),
    (
        "float",
        "is_integer",
        "",
        "bool",
        "Whether the number has no fractional part.",
    ),
];

fn split_params(p: &str) -> Vec<String> {
    // No default in the table holds a comma, so a plain split is exact.
    p.split(", ")
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// The method `name` of a value of type `recv`, when `recv` is a built-in or standard type.
pub fn method(recv: &Ty, name: &str) -> Option<Sig> {
    let owner = match recv {
        Ty::Str | Ty::Literal(_) => "str",
        Ty::List(_) => "list",
        Ty::Dict(..) => "dict",
        Ty::Set(_) => "set",
        Ty::Tuple(_) | Ty::TupleOf(_) => "tuple",
        Ty::Float => "float",
        Ty::Std(st) => return lookup(Owner::Value(*st), name).map(|m| std_sig(m, value_name(*st))),
        _ => return None,
    };
    METHODS
        .iter()
        .find(|(o, n, ..)| *o == owner && *n == name)
        .map(|(o, n, p, r, d)| Sig {
            name: format!("{o}.{n}"),
            params: split_params(p),
            ret: r.to_string(),
            doc: d.to_string(),
        })
}

/// `db`, `dt`, ...: what a value of a standard type is called in docs.
fn value_name(st: StdType) -> &'static str {
    st.name()
}

/// A standard module's member: `json.parse`.
pub fn std_member(module: &str, name: &str) -> Option<Sig> {
    let m = lookup(Owner::Module(StdMod::from_name(module)?), name)?;
    Some(std_sig(m, module))
}

fn std_sig(m: &Member, owner: &str) -> Sig {
    let params = m
        .params
        .iter()
        .map(|(n, t, default)| {
            let t = t.replace('|', " | ").replace(',', ", ");
            if *default {
                format!("{n}: {t} = ...")
            } else {
                format!("{n}: {t}")
            }
        })
        .collect();
    Sig {
        name: format!("{owner}.{}", m.name),
        params: if m.property { Vec::new() } else { params },
        ret: m.ret.replace('|', " | ").replace(',', ", "),
        doc: m.doc.to_string(),
    }
}

/// Built-in type names as annotations write them, with what they mean.
pub fn builtin_type(name: &str) -> Option<&'static str> {
    Some(match name {
        "int" => "a whole number (64-bit, growing to any size)",
        "float" => "a 64-bit floating-point number",
        "str" => "text (Unicode)",
        "bool" => "`True` or `False`",
        "list" => "`list[T]`: an ordered, growable sequence",
        "dict" => "`dict[K, V]`: a mapping, in insertion order",
        "set" => "`set[T]`: an unordered collection without duplicates",
        "tuple" => "`tuple[A, B, ...]`: a fixed-size sequence",
        "any" => "any value; checked when it runs",
        "Result" => {
            "`Result[T]`: `Ok(T)` or `Err(why)`; bind with `x: T = ... else:` or `match` it"
        }
        _ => return None,
    })
}
