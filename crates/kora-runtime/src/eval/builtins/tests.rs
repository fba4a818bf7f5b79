//! Built-in functions against CPython 3.11's answers, through a test `Caller` that only runs builtins.

use super::*;
use crate::value::format::repr_string;
use kora_check::hir::{self, FieldDef, ModId, Program, RecordType, TypeId};
use kora_check::types::Ty;

/// A `Caller` for unit tests: calls builtins and bound methods, records output.
pub(crate) struct TestCaller {
    pub program: Program,
    pub out: String,
    pub input: Vec<String>,
}

pub(crate) const EXTRA_NAMES: &[&str] = &[
    "maxsplit", "keepends", "base", "ndigits", "flush", "foo", "iterable", "amount", "note",
    "name", "x",
];

impl TestCaller {
    pub fn new() -> TestCaller {
        let mut names: Vec<String> = hir::sym::WELL_KNOWN.iter().map(|s| s.to_string()).collect();
        names.extend(EXTRA_NAMES.iter().map(|s| s.to_string()));
        let field = |n: &str| FieldDef {
            name: Sym(names.iter().position(|x| x == n).unwrap_or(0) as u32),
            ty: Ty::Any,
            default: None,
        };
        let expense = RecordType {
            id: TypeId(0),
            name: "Expense".to_string(),
            module: ModId(0),
            fields: vec![field("amount"), field("note")],
            doc: None,
            span: kora_syntax::Span::new(0, 0),
        };
        TestCaller {
            program: Program {
                modules: Vec::new(),
                entry: ModId(0),
                types: vec![expense],
                names,
                strings: Vec::new(),
                externals: Vec::new(),
            },
            out: String::new(),
            input: Vec::new(),
        }
    }

    pub fn sym(&self, name: &str) -> Sym {
        Sym(self
            .program
            .names
            .iter()
            .position(|x| x == name)
            .expect("name interned") as u32)
    }

    pub fn call(&mut self, name: &str, args: Vec<Value>) -> RtResult<Value> {
        self.call_kw(name, args, Vec::new())
    }

    pub fn call_kw(
        &mut self,
        name: &str,
        args: Vec<Value>,
        kwargs: Vec<(&str, Value)>,
    ) -> RtResult<Value> {
        let id = hir::builtin_id(name).expect("builtin exists");
        let kwargs = kwargs.into_iter().map(|(k, v)| (self.sym(k), v)).collect();
        call_builtin(self, id, args, kwargs)
    }

    /// Calls and renders the result as `repr`, or the error as `Code: message`.
    pub fn run(&mut self, name: &str, args: Vec<Value>) -> String {
        self.run_kw(name, args, Vec::new())
    }

    pub fn run_kw(&mut self, name: &str, args: Vec<Value>, kwargs: Vec<(&str, Value)>) -> String {
        match self.call_kw(name, args, kwargs) {
            Ok(v) => repr_string(&self.program, &v),
            Err(e) => format!("{}: {}", e.code, e.message),
        }
    }

    pub fn builtin(name: &str) -> Value {
        Value::Builtin(hir::builtin_id(name).expect("builtin exists"))
    }
}

impl Caller for TestCaller {
    fn call_value(&mut self, f: &Value, args: Vec<Value>) -> RtResult<Value> {
        match f {
            Value::Builtin(id) => call_builtin(self, *id, args, Vec::new()),
            Value::Method(m) => {
                let (recv, name) = (m.0.clone(), m.1);
                crate::eval::methods::call_method(self, &recv, name, args, Vec::new())
            }
            _ => type_error(format!("'{}' object is not callable", type_name(f))),
        }
    }

    fn program(&self) -> &Program {
        &self.program
    }

    fn write_out(&mut self, s: &str) -> RtResult<()> {
        self.out.push_str(s);
        Ok(())
    }

    fn read_line(&mut self) -> RtResult<Option<String>> {
        Ok(if self.input.is_empty() {
            None
        } else {
            Some(self.input.remove(0))
        })
    }
}

fn i(n: i64) -> Value {
    Value::Int(n)
}
fn f(x: f64) -> Value {
    Value::Float(x)
}
fn s(x: &str) -> Value {
    Value::str(x)
}
fn list(v: Vec<Value>) -> Value {
    Value::list(v)
}

#[test]
fn ids_match_the_builtin_table() {
    let pairs = [
        (id::PRINT, "print"),
        (id::LEN, "len"),
        (id::SORTED, "sorted"),
        (id::SUM, "sum"),
        (id::ROUND, "round"),
        (id::TUPLE, "tuple"),
        (id::DIVMOD, "divmod"),
        (id::OK, "Ok"),
        (id::FAILED, "Failed"),
        (id::TYPE, "type"),
        (id::REMAINING, "remaining"),
        (id::REDACT, "redact"),
        (id::HEX, "hex"),
        (id::OCT, "oct"),
        (id::BIN, "bin"),
        (id::EXIT, "exit"),
        (id::BYTES, "bytes"),
    ];
    for (id, name) in pairs {
        assert_eq!(hir::builtin_name(BuiltinId(id)), name);
    }
    assert_eq!(hir::BUILTINS.len(), id::BYTES as usize + 1);
}

#[test]
fn hex_oct_bin_spell_ints_as_python_does() {
    let mut c = TestCaller::new();
    assert_eq!(c.run("hex", vec![i(255)]), "'0xff'");
    assert_eq!(c.run("hex", vec![i(-255)]), "'-0xff'");
    assert_eq!(c.run("oct", vec![i(8)]), "'0o10'");
    assert_eq!(c.run("bin", vec![i(0)]), "'0b0'");
    assert_eq!(c.run("bin", vec![Value::Bool(true)]), "'0b1'");
    assert_eq!(c.run("hex", vec![i(i64::MIN)]), "'-0x8000000000000000'");
    assert!(c.run("hex", vec![f(1.5)]).starts_with("E"));
}

#[test]
fn print_with_sep_and_end() {
    let mut c = TestCaller::new();
    c.call("print", vec![i(1), s("a"), f(0.5), Value::None])
        .unwrap();
    c.call_kw(
        "print",
        vec![i(1), i(2)],
        vec![("sep", s("-")), ("end", s("!"))],
    )
    .unwrap();
    assert_eq!(c.out, "1 a 0.5 None\n1-2!");
    assert_eq!(
        c.run_kw("print", vec![i(1)], vec![("sep", i(5))]),
        "E1008: sep must be None or a string, not int"
    );
    assert_eq!(
        c.run_kw("print", vec![], vec![("foo", i(1))]),
        "E1012: 'foo' is an invalid keyword argument for print()"
    );
}

#[test]
fn len_range_and_errors() {
    let mut c = TestCaller::new();
    assert_eq!(c.run("len", vec![s("héllo")]), "5");
    assert_eq!(
        c.run("len", vec![i(5)]),
        "E1008: object of type 'int' has no len()"
    );
    assert_eq!(
        c.run("len", vec![i(1), i(2)]),
        "E1012: len() takes exactly one argument (2 given)"
    );
    assert_eq!(c.run("range", vec![i(5)]), "range(0, 5)");
    assert_eq!(c.run("range", vec![i(0), i(10), i(2)]), "range(0, 10, 2)");
    assert_eq!(
        c.run("range", vec![]),
        "E1012: range expected at least 1 argument, got 0"
    );
    assert_eq!(
        c.run("range", vec![i(1), i(2), i(0)]),
        "E1009: range() arg 3 must not be zero"
    );
    assert_eq!(
        c.run("range", vec![f(1.5)]),
        "E1008: 'float' object cannot be interpreted as an integer"
    );
}

#[test]
fn sequences() {
    let mut c = TestCaller::new();
    let xs = list(vec![i(3), i(1), i(2)]);
    assert_eq!(c.run("sorted", vec![xs.clone()]), "[1, 2, 3]");
    assert_eq!(
        c.run_kw(
            "sorted",
            vec![xs.clone()],
            vec![("reverse", Value::Bool(true))]
        ),
        "[3, 2, 1]"
    );
    assert_eq!(c.run("reversed", vec![xs.clone()]), "[2, 1, 3]");
    assert_eq!(c.run("enumerate", vec![s("ab")]), "[(0, 'a'), (1, 'b')]");
    assert_eq!(
        c.run_kw("enumerate", vec![s("ab")], vec![("start", i(1))]),
        "[(1, 'a'), (2, 'b')]"
    );
    assert_eq!(
        c.run("zip", vec![xs.clone(), s("ab")]),
        "[(3, 'a'), (1, 'b')]"
    );
    assert_eq!(
        c.run_kw(
            "zip",
            vec![s("a"), s("ab")],
            vec![("strict", Value::Bool(true))]
        ),
        "E1009: zip() argument 2 is longer than argument 1"
    );
    assert_eq!(
        c.run_kw(
            "zip",
            vec![s("ab"), s("a")],
            vec![("strict", Value::Bool(true))]
        ),
        "E1009: zip() argument 2 is shorter than argument 1"
    );
    let words = list(vec![s("bb"), s("a"), s("ccc"), s("dd")]);
    let key = TestCaller::builtin("len");
    assert_eq!(
        c.run_kw("sorted", vec![words.clone()], vec![("key", key.clone())]),
        "['a', 'bb', 'dd', 'ccc']"
    );
    assert_eq!(
        c.run_kw(
            "sorted",
            vec![words.clone()],
            vec![("key", key.clone()), ("reverse", Value::Bool(true))]
        ),
        "['ccc', 'bb', 'dd', 'a']"
    );
    assert_eq!(
        c.run_kw("max", vec![words.clone()], vec![("key", key.clone())]),
        "'ccc'"
    );
    assert_eq!(
        c.run_kw("min", vec![words.clone()], vec![("key", key)]),
        "'a'"
    );
    assert_eq!(
        c.run("min", vec![list(vec![])]),
        "E1009: min() arg is an empty sequence"
    );
    assert_eq!(
        c.run_kw("max", vec![list(vec![])], vec![("default", i(3))]),
        "3"
    );
    assert_eq!(c.run("max", vec![i(1), f(2.5), i(2)]), "2.5");
    assert_eq!(
        c.run("sorted", vec![list(vec![i(1), s("a")])]),
        "E1008: '<' not supported between instances of 'str' and 'int'"
    );
    let tuples = list(vec![
        Value::tuple(vec![i(2), s("b")]),
        Value::tuple(vec![i(1), s("z")]),
        Value::tuple(vec![i(2), s("a")]),
    ]);
    assert_eq!(
        c.run("sorted", vec![tuples]),
        "[(1, 'z'), (2, 'a'), (2, 'b')]"
    );
    let nan = list(vec![f(3.0), f(f64::NAN), f(1.0)]);
    assert!(c.call("sorted", vec![nan]).is_ok());
    assert_eq!(
        c.run(
            "map",
            vec![TestCaller::builtin("abs"), list(vec![i(-1), i(2)])]
        ),
        "[1, 2]"
    );
    assert_eq!(
        c.run(
            "filter",
            vec![Value::None, list(vec![i(0), i(1), s(""), s("x")])]
        ),
        "[1, 'x']"
    );
    assert_eq!(c.run("sum", vec![list(vec![i(1), i(2), f(0.5)])]), "3.5");
    assert_eq!(
        c.run("sum", vec![list(vec![f(0.1); 10])]),
        "0.9999999999999999"
    );
    assert_eq!(
        c.run("sum", vec![list(vec![s("a")]), s("")]),
        "E1008: sum() can't sum strings [use ''.join(seq) instead]"
    );
    assert_eq!(c.run("any", vec![list(vec![i(0), i(2)])]), "True");
    assert_eq!(c.run("all", vec![list(vec![])]), "True");
}

#[test]
fn conversions() {
    let mut c = TestCaller::new();
    assert_eq!(c.run("int", vec![s(" 1_000 ")]), "1000");
    assert_eq!(c.run("int", vec![s("-42")]), "-42");
    assert_eq!(c.run("int", vec![s("١٢")]), "12");
    assert_eq!(c.run("int", vec![f(-3.9)]), "-3");
    assert_eq!(c.run("int", vec![s("0x1f"), i(16)]), "31");
    assert_eq!(c.run("int", vec![s("0b_101"), i(0)]), "5");
    assert_eq!(
        c.run("int", vec![s("010"), i(0)]),
        "E1009: invalid literal for int() with base 0: '010'"
    );
    assert_eq!(
        c.run("int", vec![s("x")]),
        "E1009: invalid literal for int() with base 10: 'x'"
    );
    assert_eq!(
        c.run("int", vec![s("1__0")]),
        "E1009: invalid literal for int() with base 10: '1__0'"
    );
    assert_eq!(
        c.run("int", vec![s("-9223372036854775808")]),
        "-9223372036854775808"
    );
    assert_eq!(
        c.run("int", vec![s("9223372036854775808")]),
        "9223372036854775808"
    );
    assert_eq!(
        c.run("int", vec![s(" -0x1_0000_0000_0000_0000 ")]),
        "E1009: invalid literal for int() with base 10: ' -0x1_0000_0000_0000_0000 '"
    );
    assert!(c
        .run("int", vec![s(&"9".repeat(4301))])
        .starts_with("E1009: Exceeds"));
    assert_eq!(c.run("int", vec![f(1e20)]), "100000000000000000000");
    assert_eq!(
        c.run("int", vec![f(f64::NAN)]),
        "E1009: cannot convert float NaN to integer"
    );
    assert_eq!(
        c.run("int", vec![Value::None]),
        "E1008: int() argument must be a string, a bytes-like object or a real number, not 'NoneType'"
    );
    assert_eq!(c.run("float", vec![s(" 1_0.5 ")]), "10.5");
    assert_eq!(c.run("float", vec![s("-inf")]), "-inf");
    assert_eq!(c.run("float", vec![s("nan")]), "nan");
    assert_eq!(
        c.run("float", vec![s("1e")]),
        "E1009: could not convert string to float: '1e'"
    );
    assert_eq!(
        c.run("float", vec![s("_1")]),
        "E1009: could not convert string to float: '_1'"
    );
    assert_eq!(c.run("str", vec![f(1e16)]), "'1e+16'");
    assert_eq!(c.run("bool", vec![list(vec![])]), "False");
    assert_eq!(c.run("list", vec![s("ab")]), "['a', 'b']");
    assert_eq!(c.run("tuple", vec![list(vec![i(1)])]), "(1,)");
    assert_eq!(c.run("set", vec![list(vec![i(1), i(1), i(2)])]), "{1, 2}");
    assert_eq!(
        c.run("set", vec![list(vec![list(vec![])])]),
        "E1008: unhashable type: 'list'"
    );
    let pairs = list(vec![Value::tuple(vec![s("a"), i(1)])]);
    assert_eq!(
        c.run_kw("dict", vec![pairs], vec![("x", i(2))]),
        "{'a': 1, 'x': 2}"
    );
    assert_eq!(
        c.run(
            "dict",
            vec![list(vec![Value::tuple(vec![i(1), i(2), i(3)])])]
        ),
        "E1009: dictionary update sequence element #0 has length 3; 2 is required"
    );
    assert_eq!(c.run("repr", vec![s("a'b")]), "'\"a\\'b\"'");
    assert_eq!(c.run("ord", vec![s("é")]), "233");
    assert_eq!(
        c.run("ord", vec![s("ab")]),
        "E1008: ord() expected a character, but string of length 2 found"
    );
    assert_eq!(c.run("chr", vec![i(9731)]), "'☃'");
    assert_eq!(
        c.run("chr", vec![i(-1)]),
        "E1009: chr() arg not in range(0x110000)"
    );
}

#[test]
fn numbers() {
    let mut c = TestCaller::new();
    assert_eq!(c.run("round", vec![f(2.5)]), "2");
    assert_eq!(c.run("round", vec![f(0.5)]), "0");
    assert_eq!(c.run("round", vec![f(-0.5)]), "0");
    assert_eq!(c.run("round", vec![f(2.675), i(2)]), "2.67");
    assert_eq!(c.run("round", vec![f(1234.5), i(-2)]), "1200.0");
    assert_eq!(c.run("round", vec![f(1250.4), i(-2)]), "1300.0");
    assert_eq!(c.run("round", vec![f(-4.0), i(-1)]), "-0.0");
    assert_eq!(c.run("round", vec![i(1250), i(-2)]), "1200");
    assert_eq!(c.run("round", vec![i(1350), i(-2)]), "1400");
    assert_eq!(c.run("round", vec![i(-1250), i(-2)]), "-1200");
    assert_eq!(c.run("round", vec![f(1.5e300), i(-300)]), "2e+300");
    assert_eq!(
        c.run("round", vec![f(1.7976931348623157e308), i(-308)]),
        "E1004: rounded value too large to represent"
    );
    assert_eq!(
        c.run("round", vec![f(f64::INFINITY)]),
        "E1004: cannot convert float infinity to integer"
    );
    assert_eq!(c.run("round", vec![f(0.1), i(20)]), "0.1");
    assert_eq!(c.run("round", vec![f(123.456), i(-1)]), "120.0");
    assert_eq!(c.run("round", vec![Value::Bool(true)]), "1");
    assert_eq!(c.run("abs", vec![i(-3)]), "3");
    assert_eq!(
        c.run("abs", vec![s("a")]),
        "E1008: bad operand type for abs(): 'str'"
    );
    assert_eq!(c.run("divmod", vec![i(-7), i(2)]), "(-4, 1)");
    assert_eq!(c.run("divmod", vec![f(-7.5), i(2)]), "(-4.0, 0.5)");
    assert_eq!(c.run("divmod", vec![i(7), f(-2.0)]), "(-4.0, -1.0)");
    assert_eq!(c.run("divmod", vec![f(1.0), i(0)]), "E1005: float divmod()");
    assert_eq!(c.run("pow", vec![i(3), i(-1), i(7)]), "5");
    assert_eq!(c.run("pow", vec![i(2), i(10), i(-7)]), "-5");
    assert_eq!(
        c.run("pow", vec![i(2), i(-1), i(4)]),
        "E1009: base is not invertible for the given modulus"
    );
    assert_eq!(c.run("pow", vec![i(2), i(-1)]), "0.5");
    assert_eq!(c.run("hash", vec![i(-1)]), "-2");
    assert_eq!(c.run("hash", vec![f(1.5)]), "1152921504606846977");
    assert_eq!(
        c.run("hash", vec![Value::tuple(vec![i(1), i(2)])]),
        "-3550055125485641917"
    );
    assert_eq!(c.run("hash", vec![i(1 << 61)]), "1");
    assert_eq!(c.run("hash", vec![f(f64::INFINITY)]), "314159");
    assert_eq!(c.run("hash", vec![f(2.0)]), "2");
    assert_eq!(
        c.run("hash", vec![list(vec![])]),
        "E1008: unhashable type: 'list'"
    );
}

#[test]
fn outcomes_type_and_input() {
    let mut c = TestCaller::new();
    assert_eq!(c.run("Ok", vec![i(3)]), "Ok(3)");
    assert_eq!(c.run("Failed", vec![s("timeout")]), "Failed('timeout')");
    assert_eq!(c.run("Exhausted", vec![s("tokens")]), "Exhausted('tokens')");
    assert!(c.run("Exhausted", vec![s("money")]).starts_with("E1009"));
    assert_eq!(c.run("type", vec![i(1)]), "<class 'int'>");
    assert_eq!(c.run("type", vec![s("")]), "<class 'str'>");
    assert_eq!(
        c.run("isinstance", vec![i(1), i(1)]),
        "E1008: isinstance() arg 2 must be a type or tuple of types, not int"
    );
    c.input.push("hello\r\n".to_string());
    assert_eq!(c.run("input", vec![s("> ")]), "'hello'");
    assert_eq!(c.out, "> ");
    assert_eq!(c.run("input", vec![]), "E1015: EOF when reading a line");
    assert_eq!(
        repr_string(&c.program, &TestCaller::builtin("len")),
        "<built-in function len>"
    );
}
