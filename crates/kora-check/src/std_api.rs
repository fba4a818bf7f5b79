//! The standard library as the checker sees it: each module's members, their signatures and effect class.
//!
//! The runtime implements every `StdFn` (one file per module under
//! `kora-runtime/src/stdlib/`); this table is the single place that says
//! what a member is called, what it takes and what it returns, so
//! `json.parse` type-checks and an unknown member gets "did you mean".

use crate::types::Ty;

/// A standard module reached with `use NAME`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StdMod {
    Json,
    Fs,
    Http,
    Sql,
    Time,
    Re,
    Csv,
    Yaml,
    Xml,
    Env,
    Random,
    Notes,
    Pdf,
    /// A package's own helper process (`[package.helper]`): only its code may `use helper`.
    Helper,
}

/// Modules the record names that this build does not provide yet.
pub const PLANNED: &[&str] = &["eval"];

pub const MODULES: &[(&str, StdMod)] = &[
    ("json", StdMod::Json),
    ("fs", StdMod::Fs),
    ("http", StdMod::Http),
    ("sql", StdMod::Sql),
    ("time", StdMod::Time),
    ("re", StdMod::Re),
    ("csv", StdMod::Csv),
    ("yaml", StdMod::Yaml),
    ("xml", StdMod::Xml),
    ("env", StdMod::Env),
    ("random", StdMod::Random),
    ("notes", StdMod::Notes),
    ("pdf", StdMod::Pdf),
    ("helper", StdMod::Helper),
];

impl StdMod {
    pub fn from_name(name: &str) -> Option<StdMod> {
        MODULES.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
    }

    pub fn name(self) -> &'static str {
        MODULES
            .iter()
            .find(|(_, m)| *m == self)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    }
}

/// Values only the standard library makes, with no fields a program can see.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StdType {
    /// `sql.Db`: an open SQLite database.
    Db,
    /// `time.DateTime`: an instant with its time zone (aware only).
    DateTime,
    /// `fs.Image`: a PNG, JPEG, GIF or WebP image's bytes, for `analyze`.
    Image,
    /// `bytes`: raw octets (`fs.bytes`, a helper's payload); a built-in name, not a module's.
    Bytes,
    /// One tool of an MCP server (`fs.read_file`, an item of `fs.tools`), for `tools=`.
    Tool,
}

impl StdType {
    pub fn name(self) -> &'static str {
        match self {
            StdType::Db => "sql.Db",
            StdType::DateTime => "time.DateTime",
            StdType::Image => "fs.Image",
            StdType::Tool => "mcp.Tool",
            StdType::Bytes => "bytes",
        }
    }

    pub fn from_name(name: &str) -> Option<StdType> {
        match name {
            "sql.Db" => Some(StdType::Db),
            "time.DateTime" => Some(StdType::DateTime),
            "fs.Image" => Some(StdType::Image),
            "bytes" => Some(StdType::Bytes),
            _ => None,
        }
    }
}

/// Record types the standard library declares; they behave like a program's own records.
/// Each entry: name, then `field: type` pairs in the mini-syntax of `parse_sig_type`.
pub const STD_RECORDS: &[(&str, &[(&str, &str)])] = &[
    (
        "http.Response",
        &[
            ("status", "int"),
            ("body", "str"),
            ("headers", "dict[str,str]"),
        ],
    ),
    (
        "re.Match",
        &[
            ("text", "str"),
            ("start", "int"),
            ("end", "int"),
            ("groups", "list[str|None]"),
            ("named", "dict[str,str|None]"),
        ],
    ),
    (
        "xml.Element",
        &[
            ("tag", "str"),
            ("attrs", "dict[str,str]"),
            ("text", "str"),
            ("children", "list[xml.Element]"),
        ],
    ),
];

/// How an effect may be repeated, which decides what a journal does with it on resume.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// No effect at all: computed from the arguments alone.
    Pure,
    /// A read of the world, digested: a resume reads again and compares.
    Read,
    /// Nondeterministic but harmless to repeat: the journal replays its recorded result.
    Effect,
    /// Changes the world: marked before it is sent; an unknown fate stops a resume.
    WorldChanging,
}

/// Every standard-library function and method, implemented by the runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StdFn {
    JsonParse,
    JsonEncode,
    FsRead,
    FsLines,
    FsBytes,
    FsImage,
    ImageFormat,
    ImageSize,
    ImageWidth,
    ImageHeight,
    FsWrite,
    FsAppend,
    FsList,
    FsGlob,
    FsExists,
    FsRemove,
    FsMkdir,
    HttpGet,
    HttpPost,
    SqlOpen,
    DbQuery,
    DbExecute,
    DbExecuteMany,
    DbClose,
    TimeNow,
    TimeParse,
    TimeDatetime,
    TimeFromTimestamp,
    TimeSleep,
    TimeSeconds,
    TimeMinutes,
    TimeHours,
    TimeDays,
    DtFormat,
    DtIso,
    DtTimestamp,
    DtToZone,
    DtAdd,
    DtSince,
    DtYear,
    DtMonth,
    DtDay,
    DtHour,
    DtMinute,
    DtSecond,
    DtWeekday,
    DtZone,
    ReSearch,
    ReMatch,
    ReFullmatch,
    ReFindall,
    ReFinditer,
    ReSub,
    ReSplit,
    ReEscape,
    ReCheck,
    CsvParse,
    CsvEncode,
    YamlParse,
    XmlParse,
    EnvGet,
    EnvArgs,
    RandomRandom,
    RandomRandint,
    RandomUniform,
    RandomChoice,
    RandomShuffle,
    RandomSample,
    RandomSeed,
    NotesWrite,
    NotesRead,
    NotesKeys,
    NotesRunId,
    PdfPages,
    PdfText,
    PdfRender,
    HelperCall,
    BytesDecode,
}

/// What a member is reached through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Owner {
    Module(StdMod),
    /// A method (`db.query(...)`) or, with `property`, a field-like read (`dt.year`).
    Value(StdType),
}

/// One member's signature. Types are written in a small type syntax (see `parse_sig_type`);
/// `T` stands for the type the call's result is read into (`typed`).
pub struct Member {
    pub func: StdFn,
    pub owner: Owner,
    pub name: &'static str,
    /// `(name, type, has_default)`.
    pub params: &'static [(&'static str, &'static str, bool)],
    pub ret: &'static str,
    /// What `T` is when no annotation says: `None` when the result is not typed.
    pub typed: Option<&'static str>,
    pub class: Class,
    pub property: bool,
    pub doc: &'static str,
}

macro_rules! m {
    ($f:ident, $owner:expr, $name:literal, [$(($p:literal, $t:literal, $d:literal)),*], $ret:literal, $typed:expr, $class:ident, $doc:literal) => {
        Member { func: StdFn::$f, owner: $owner, name: $name, params: &[$(($p, $t, $d)),*], ret: $ret, typed: $typed, class: Class::$class, property: false, doc: $doc }
    };
}

macro_rules! prop {
    ($f:ident, $ty:ident, $name:literal, $ret:literal) => {
        Member {
            func: StdFn::$f,
            owner: Owner::Value(StdType::$ty),
            name: $name,
            params: &[],
            ret: $ret,
            typed: None,
            class: Class::Pure,
            property: true,
            doc: "",
        }
    };
}

use Owner::Module as M;
use StdMod::*;

// One row per member: a table reads better than rustfmt's one-argument-per-line layout.
#[rustfmt::skip]
pub const MEMBERS: &[Member] = &[
    m!(JsonParse, M(Json), "parse", [("text", "str", false)], "Result[T]", Some("any"), Pure, "JSON text into the declared type"),
    m!(JsonEncode, M(Json), "encode", [("value", "any", false), ("indent", "int|None", true)], "str", None, Pure, "a value as JSON text"),
    m!(FsRead, M(Fs), "read", [("path", "str", false)], "Result[str]", None, Read, "a file's text"),
    m!(FsLines, M(Fs), "lines", [("path", "str", false)], "Result[list[str]]", None, Read, "a file's lines, without line endings"),
    m!(FsBytes, M(Fs), "bytes", [("path", "str", false)], "Result[bytes]", None, Read, "a file's bytes, for a helper (`pdf`)"),
    m!(FsImage, M(Fs), "image", [("path", "str", false)], "Result[fs.Image]", None, Read, "a PNG, JPEG, GIF or WebP image, for `analyze`"),
    prop!(ImageFormat, Image, "format", "str"),
    prop!(ImageSize, Image, "size", "int"),
    prop!(ImageWidth, Image, "width", "int"),
    prop!(ImageHeight, Image, "height", "int"),
    m!(FsWrite, M(Fs), "write", [("path", "str", false), ("text", "str", false)], "Result[None]", None, WorldChanging, "replaces a file's text"),
    m!(FsAppend, M(Fs), "append", [("path", "str", false), ("text", "str", false)], "Result[None]", None, WorldChanging, "adds text at a file's end"),
    m!(FsList, M(Fs), "list", [("path", "str", true)], "Result[list[str]]", None, Read, "a folder's entries, sorted"),
    m!(FsGlob, M(Fs), "glob", [("pattern", "str", false)], "Result[list[str]]", None, Read, "paths matching a pattern, sorted"),
    m!(FsExists, M(Fs), "exists", [("path", "str", false)], "bool", None, Read, "whether a path exists"),
    m!(FsRemove, M(Fs), "remove", [("path", "str", false)], "Result[None]", None, WorldChanging, "deletes a file or an empty folder"),
    m!(FsMkdir, M(Fs), "mkdir", [("path", "str", false)], "Result[None]", None, WorldChanging, "creates a folder and its parents"),
    m!(HttpGet, M(Http), "get", [("url", "str", false), ("headers", "dict[str,str]", true), ("timeout", "float", true)], "Result[http.Response]", None, Effect, "GET, retried with backoff"),
    m!(HttpPost, M(Http), "post", [("url", "str", false), ("body", "any", true), ("headers", "dict[str,str]", true), ("timeout", "float", true)], "Result[http.Response]", None, WorldChanging, "POST, never retried"),
    m!(SqlOpen, M(Sql), "open", [("path", "str", false)], "Result[sql.Db]", None, Read, "opens (or creates) a SQLite database"),
    m!(DbQuery, Owner::Value(StdType::Db), "query", [("sql", "str", false), ("params", "any", true)], "Result[T]", Some("list[dict[str,any]]"), Read, "rows into the declared row type"),
    m!(DbExecute, Owner::Value(StdType::Db), "execute", [("sql", "str", false), ("params", "any", true)], "Result[int]", None, WorldChanging, "runs a statement; the number of rows changed"),
    m!(DbExecuteMany, Owner::Value(StdType::Db), "execute_many", [("sql", "str", false), ("rows", "list[any]", false)], "Result[int]", None, WorldChanging, "runs a statement once per parameter row"),
    m!(DbClose, Owner::Value(StdType::Db), "close", [], "None", None, Pure, "closes the database"),
    m!(TimeNow, M(Time), "now", [], "time.DateTime", None, Effect, "the current instant, in UTC"),
    m!(TimeParse, M(Time), "parse", [("text", "str", false), ("format", "str|None", true), ("tz", "str|None", true)], "Result[time.DateTime]", None, Pure, "text into an aware datetime"),
    m!(TimeDatetime, M(Time), "datetime", [("year", "int", false), ("month", "int", false), ("day", "int", false), ("hour", "int", true), ("minute", "int", true), ("second", "int", true), ("tz", "str", true)], "Result[time.DateTime]", None, Pure, "a datetime from its parts"),
    m!(TimeFromTimestamp, M(Time), "from_timestamp", [("seconds", "float", false)], "time.DateTime", None, Pure, "seconds since 1970 as a UTC datetime"),
    m!(TimeSleep, M(Time), "sleep", [("seconds", "float", false)], "None", None, Effect, "waits"),
    m!(TimeSeconds, M(Time), "seconds", [("n", "float", false)], "float", None, Pure, "a duration in seconds"),
    m!(TimeMinutes, M(Time), "minutes", [("n", "float", false)], "float", None, Pure, "minutes as seconds"),
    m!(TimeHours, M(Time), "hours", [("n", "float", false)], "float", None, Pure, "hours as seconds"),
    m!(TimeDays, M(Time), "days", [("n", "float", false)], "float", None, Pure, "days as seconds"),
    m!(DtFormat, Owner::Value(StdType::DateTime), "format", [("fmt", "str", false)], "str", None, Pure, "strftime-style formatting"),
    m!(DtIso, Owner::Value(StdType::DateTime), "iso", [], "str", None, Pure, "RFC 3339 text"),
    m!(DtTimestamp, Owner::Value(StdType::DateTime), "timestamp", [], "float", None, Pure, "seconds since 1970"),
    m!(DtToZone, Owner::Value(StdType::DateTime), "to_zone", [("tz", "str", false)], "Result[time.DateTime]", None, Pure, "the same instant in another zone"),
    m!(DtAdd, Owner::Value(StdType::DateTime), "add", [("seconds", "float", false)], "time.DateTime", None, Pure, "a later (or earlier) instant"),
    m!(DtSince, Owner::Value(StdType::DateTime), "since", [("other", "time.DateTime", false)], "float", None, Pure, "seconds from `other` to this"),
    m!(BytesDecode, Owner::Value(StdType::Bytes), "decode", [], "Result[str]", None, Pure, "the bytes as UTF-8 text; `Err` names the first byte that is not"),
    prop!(DtYear, DateTime, "year", "int"),
    prop!(DtMonth, DateTime, "month", "int"),
    prop!(DtDay, DateTime, "day", "int"),
    prop!(DtHour, DateTime, "hour", "int"),
    prop!(DtMinute, DateTime, "minute", "int"),
    prop!(DtSecond, DateTime, "second", "int"),
    prop!(DtWeekday, DateTime, "weekday", "int"),
    prop!(DtZone, DateTime, "zone", "str"),
    m!(ReSearch, M(Re), "search", [("pattern", "str", false), ("text", "str", false)], "re.Match|None", None, Pure, "the first match anywhere"),
    m!(ReMatch, M(Re), "match", [("pattern", "str", false), ("text", "str", false)], "re.Match|None", None, Pure, "a match at the start"),
    m!(ReFullmatch, M(Re), "fullmatch", [("pattern", "str", false), ("text", "str", false)], "re.Match|None", None, Pure, "a match of the whole text"),
    m!(ReFindall, M(Re), "findall", [("pattern", "str", false), ("text", "str", false)], "list[any]", None, Pure, "every match, as Python's findall"),
    m!(ReFinditer, M(Re), "finditer", [("pattern", "str", false), ("text", "str", false)], "list[re.Match]", None, Pure, "every match"),
    m!(ReSub, M(Re), "sub", [("pattern", "str", false), ("repl", "str", false), ("text", "str", false), ("count", "int", true)], "str", None, Pure, "replaces matches"),
    m!(ReSplit, M(Re), "split", [("pattern", "str", false), ("text", "str", false), ("maxsplit", "int", true)], "list[str]", None, Pure, "splits at matches"),
    m!(ReEscape, M(Re), "escape", [("text", "str", false)], "str", None, Pure, "text that matches itself literally"),
    m!(ReCheck, M(Re), "check", [("pattern", "str", false)], "Result[str]", None, Pure, "validates a pattern from data"),
    m!(CsvParse, M(Csv), "parse", [("text", "str", false), ("header", "bool", true), ("delimiter", "str", true)], "Result[T]", Some("list[any]"), Pure, "rows into the declared row type"),
    m!(CsvEncode, M(Csv), "encode", [("rows", "list[any]", false), ("header", "list[str]|None", true), ("delimiter", "str", true)], "str", None, Pure, "rows as CSV text"),
    m!(YamlParse, M(Yaml), "parse", [("text", "str", false)], "Result[T]", Some("any"), Pure, "YAML into the declared type"),
    m!(XmlParse, M(Xml), "parse", [("text", "str", false)], "Result[T]", Some("xml.Element"), Pure, "XML into the declared type"),
    m!(EnvGet, M(Env), "get", [("name", "str", false)], "Result[str]", None, Effect, "an environment variable"),
    m!(EnvArgs, M(Env), "args", [], "list[str]", None, Pure, "the program's command-line arguments"),
    m!(RandomRandom, M(Random), "random", [], "float", None, Effect, "a float in [0, 1)"),
    m!(RandomRandint, M(Random), "randint", [("a", "int", false), ("b", "int", false)], "int", None, Effect, "an int in [a, b]"),
    m!(RandomUniform, M(Random), "uniform", [("a", "float", false), ("b", "float", false)], "float", None, Effect, "a float in [a, b)"),
    m!(RandomChoice, M(Random), "choice", [("items", "list[any]", false)], "any", None, Effect, "one item"),
    m!(RandomShuffle, M(Random), "shuffle", [("items", "list[any]", false)], "None", None, Effect, "shuffles in place"),
    m!(RandomSample, M(Random), "sample", [("items", "list[any]", false), ("k", "int", false)], "list[any]", None, Effect, "k distinct items"),
    m!(RandomSeed, M(Random), "seed", [("n", "int", false)], "None", None, Effect, "makes the sequence repeatable"),
    m!(NotesWrite, M(Notes), "write", [("key", "str", false), ("value", "any", false)], "Result[None]", None, Effect, "stores a value in the run's notes"),
    m!(NotesRead, M(Notes), "read", [("key", "str", false), ("default", "any", true)], "Result[T]", Some("any"), Effect, "a stored value, or the default"),
    m!(NotesKeys, M(Notes), "keys", [], "Result[list[str]]", None, Effect, "the keys written so far"),
    m!(NotesRunId, M(Notes), "run_id", [], "str", None, Pure, "this run's id"),
    m!(PdfPages, M(Pdf), "pages", [("data", "bytes", false)], "Result[int]", None, Effect, "how many pages a PDF (its bytes, from `fs.bytes`) has"),
    m!(PdfText, M(Pdf), "text", [("data", "bytes", false), ("page", "int", false)], "Result[str]", None, Effect, "the text of one page, counting from 0"),
    m!(PdfRender, M(Pdf), "render", [("data", "bytes", false), ("page", "int", false), ("dpi", "int", true)], "Result[fs.Image]", None, Effect, "one page as a PNG image (72 dpi unless `dpi` says), for `analyze`"),
    m!(HelperCall, M(Helper), "call", [("op", "str", false), ("header", "any", false), ("payload", "bytes", false)], "Outcome[tuple[any, bytes]]", None, Effect, "one request to the package's helper: its answer's header and payload, `Err` when it refused, `Failed` when it crashed or hung"),
];

pub fn member(func: StdFn) -> &'static Member {
    MEMBERS
        .iter()
        .find(|m| m.func == func)
        .expect("every StdFn has a table row")
}

pub fn lookup(owner: Owner, name: &str) -> Option<&'static Member> {
    MEMBERS.iter().find(|m| m.owner == owner && m.name == name)
}

pub fn names_of(owner: Owner) -> impl Iterator<Item = &'static str> {
    MEMBERS
        .iter()
        .filter(move |m| m.owner == owner)
        .map(|m| m.name)
}

/// Parses the table's type syntax: `str`, `list[T]`, `dict[K,V]`, `A|B`, `Result[T]`,
/// `sql.Db`, record names. `resolve` maps dotted record names to types.
pub fn parse_sig_type(text: &str, t: &Ty, resolve: &dyn Fn(&str) -> Ty) -> Ty {
    let (ty, _) = parse_union(text.as_bytes(), 0, t, resolve);
    ty
}

fn parse_union(s: &[u8], mut i: usize, t: &Ty, r: &dyn Fn(&str) -> Ty) -> (Ty, usize) {
    let mut parts = Vec::new();
    loop {
        let (one, j) = parse_one(s, i, t, r);
        parts.push(one);
        i = j;
        if s.get(i) == Some(&b'|') {
            i += 1;
        } else {
            break;
        }
    }
    if parts.len() == 1 {
        (parts.pop().unwrap_or(Ty::Any), i)
    } else if parts.iter().any(|p| !p.is_known()) {
        (Ty::Any, i)
    } else {
        (Ty::Union(parts), i)
    }
}

fn parse_one(s: &[u8], i: usize, t: &Ty, r: &dyn Fn(&str) -> Ty) -> (Ty, usize) {
    let start = i;
    let mut j = i;
    while j < s.len() && (s[j].is_ascii_alphanumeric() || s[j] == b'_' || s[j] == b'.') {
        j += 1;
    }
    let name = std::str::from_utf8(&s[start..j]).unwrap_or("any");
    let mut args = Vec::new();
    if s.get(j) == Some(&b'[') {
        j += 1;
        loop {
            let (a, k) = parse_union(s, j, t, r);
            args.push(a);
            j = k;
            match s.get(j) {
                Some(b',') => j += 1,
                Some(b']') => {
                    j += 1;
                    break;
                }
                _ => break,
            }
        }
    }
    let arg = |n: usize| Box::new(args.get(n).cloned().unwrap_or(Ty::Any));
    let ty = match name {
        "str" => Ty::Str,
        "int" => Ty::Int,
        "float" => Ty::Float,
        "bool" => Ty::Bool,
        "None" => Ty::None,
        "any" => Ty::Any,
        "T" => t.clone(),
        "list" => Ty::List(arg(0)),
        "dict" => Ty::Dict(arg(0), arg(1)),
        "Result" => Ty::Outcome(arg(0), crate::types::Tags::OK_ERR),
        "Outcome" => Ty::Outcome(
            arg(0),
            crate::types::Tags(crate::types::Tags::OK_ERR.0 | crate::types::Tags::FAILED.0),
        ),
        "tuple" => Ty::Tuple(args.clone()),
        other => match StdType::from_name(other) {
            Some(st) => Ty::Std(st),
            None => r(other),
        },
    };
    (ty, j)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_function_has_exactly_one_row() {
        for m in MEMBERS {
            let n = MEMBERS.iter().filter(|x| x.func == m.func).count();
            assert_eq!(n, 1, "{:?}", m.func);
            let same = MEMBERS
                .iter()
                .filter(|x| x.owner == m.owner && x.name == m.name)
                .count();
            assert_eq!(same, 1, "{} is declared twice", m.name);
        }
    }

    #[test]
    fn every_member_is_documented() {
        let doc = include_str!("../../../docs/stdlib.md");
        for m in MEMBERS {
            let needle = match m.owner {
                Owner::Module(md) => format!("`{}.{}(", md.name(), m.name),
                Owner::Value(StdType::Db) => format!("`db.{}(", m.name),
                Owner::Value(StdType::DateTime) => format!("`{}", m.name),
                Owner::Value(StdType::Image) => format!("`image.{}`", m.name),
                Owner::Value(StdType::Tool) => format!("`tool.{}`", m.name),
                Owner::Value(StdType::Bytes) => format!("`b.{}(", m.name),
            };
            assert!(
                doc.contains(&needle),
                "docs/stdlib.md does not describe {needle}"
            );
        }
    }

    #[test]
    fn signature_types_parse() {
        let any = |_: &str| Ty::Any;
        assert_eq!(
            parse_sig_type("dict[str,str|None]", &Ty::Any, &any),
            Ty::Dict(
                Box::new(Ty::Str),
                Box::new(Ty::Union(vec![Ty::Str, Ty::None]))
            )
        );
        assert_eq!(
            parse_sig_type("Result[T]", &Ty::Int, &any),
            Ty::outcome(Ty::Int, crate::types::Tags::OK_ERR)
        );
        assert_eq!(
            parse_sig_type("Result[sql.Db]", &Ty::Any, &any),
            Ty::outcome(Ty::Std(StdType::Db), crate::types::Tags::OK_ERR)
        );
    }
}
