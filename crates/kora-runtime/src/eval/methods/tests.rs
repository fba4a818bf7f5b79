//! Methods of str, list, dict and set against CPython 3.11's answers.

use super::*;
use crate::eval::builtins::tests::TestCaller;
use crate::value::format::repr_string;

fn s(x: &str) -> Value {
    Value::str(x)
}
fn i(n: i64) -> Value {
    Value::Int(n)
}
fn list(v: Vec<Value>) -> Value {
    Value::list(v)
}

/// Calls `recv.name(args, **kwargs)` and renders the result or error.
fn m(
    c: &mut TestCaller,
    recv: &Value,
    name: &str,
    args: Vec<Value>,
    kwargs: Vec<(&str, Value)>,
) -> String {
    let name = c.sym(name);
    let kwargs = kwargs.into_iter().map(|(k, v)| (c.sym(k), v)).collect();
    match call_method(c, recv, name, args, kwargs) {
        Ok(v) => repr_string(&c.program, &v),
        Err(e) => format!("{}: {}", e.code, e.message),
    }
}

#[test]
fn ascii_split_agrees_with_the_general_one() {
    use super::strsplit::{split_any_whitespace, split_ascii_whitespace};
    let c = TestCaller::new();
    let show = |v: Vec<Value>| repr_string(&c.program, &list(v));
    for text in [
        "",
        "   ",
        " a\tb\x1cc\x1f d \r\n",
        "x",
        "a  b   c ",
        "\x0bq\x0c",
    ] {
        for max in [None, Some(0), Some(1), Some(2)] {
            assert_eq!(
                show(split_ascii_whitespace(text, max)),
                show(split_any_whitespace(text, max)),
                "{text:?} maxsplit {max:?}"
            );
        }
    }
    assert_eq!(show(split_ascii_whitespace(" a\x1cb ", None)), "['a', 'b']");
}

#[test]
fn str_split_family() {
    let mut c = TestCaller::new();
    let t = s("  a b  c  ");
    assert_eq!(m(&mut c, &t, "split", vec![], vec![]), "['a', 'b', 'c']");
    assert_eq!(
        m(&mut c, &t, "split", vec![Value::None, i(1)], vec![]),
        "['a', 'b  c  ']"
    );
    assert_eq!(
        m(&mut c, &t, "rsplit", vec![Value::None, i(1)], vec![]),
        "['  a b', 'c']"
    );
    assert_eq!(
        m(&mut c, &s("a,b,,c"), "split", vec![s(",")], vec![]),
        "['a', 'b', '', 'c']"
    );
    assert_eq!(
        m(
            &mut c,
            &s("a,b,,c"),
            "rsplit",
            vec![s(",")],
            vec![("maxsplit", i(1))]
        ),
        "['a,b,', 'c']"
    );
    assert_eq!(
        m(
            &mut c,
            &s("a b c"),
            "split",
            vec![s(" ")],
            vec![("maxsplit", i(1))]
        ),
        "['a', 'b c']"
    );
    assert_eq!(
        m(&mut c, &s("a b"), "split", vec![], vec![("maxsplit", i(0))]),
        "['a b']"
    );
    assert_eq!(
        m(&mut c, &s("a"), "split", vec![s("")], vec![]),
        "E1009: empty separator"
    );
    assert_eq!(
        m(&mut c, &s("a"), "split", vec![i(1)], vec![]),
        "E1008: must be str or None, not int"
    );
    assert_eq!(
        m(&mut c, &s("a\x1cb"), "split", vec![], vec![]),
        "['a', 'b']"
    );
    assert_eq!(
        m(
            &mut c,
            &s("a\nb\r\nc\rd\x0be\x1cf\u{85}g"),
            "splitlines",
            vec![],
            vec![]
        ),
        "['a', 'b', 'c', 'd', 'e', 'f', 'g']"
    );
    assert_eq!(
        m(
            &mut c,
            &s("a\nb\n"),
            "splitlines",
            vec![Value::Bool(true)],
            vec![]
        ),
        "['a\\n', 'b\\n']"
    );
    assert_eq!(
        m(&mut c, &s("a,b"), "partition", vec![s(",")], vec![]),
        "('a', ',', 'b')"
    );
    assert_eq!(
        m(&mut c, &s("ab"), "rpartition", vec![s(",")], vec![]),
        "('', '', 'ab')"
    );
    assert_eq!(
        m(&mut c, &s("x"), "join", vec![s("abc")], vec![]),
        "'axbxc'"
    );
    assert_eq!(
        m(&mut c, &s(","), "join", vec![list(vec![i(1)])], vec![]),
        "E1008: sequence item 0: expected str instance, int found"
    );
}

#[test]
fn str_search_and_shape() {
    let mut c = TestCaller::new();
    let abc = s("abc");
    assert_eq!(m(&mut c, &abc, "find", vec![s(""), i(5)], vec![]), "-1");
    assert_eq!(m(&mut c, &abc, "find", vec![s(""), i(3)], vec![]), "3");
    assert_eq!(m(&mut c, &abc, "find", vec![s("c"), i(-1)], vec![]), "2");
    assert_eq!(m(&mut c, &abc, "rfind", vec![s("")], vec![]), "3");
    assert_eq!(m(&mut c, &abc, "count", vec![s("")], vec![]), "4");
    assert_eq!(
        m(&mut c, &abc, "count", vec![s(""), i(1), i(2)], vec![]),
        "2"
    );
    assert_eq!(
        m(&mut c, &abc, "index", vec![s("z")], vec![]),
        "E1009: substring not found"
    );
    assert_eq!(
        m(&mut c, &s("héllo wörld"), "find", vec![s("w")], vec![]),
        "6"
    );
    assert_eq!(
        m(&mut c, &abc, "replace", vec![s(""), s("-")], vec![]),
        "'-a-b-c-'"
    );
    assert_eq!(
        m(&mut c, &abc, "replace", vec![s(""), s("-"), i(2)], vec![]),
        "'-a-bc'"
    );
    assert_eq!(
        m(&mut c, &abc, "startswith", vec![s("b"), i(1)], vec![]),
        "True"
    );
    assert_eq!(
        m(
            &mut c,
            &s("ab"),
            "endswith",
            vec![Value::tuple(vec![s("x"), s("b")])],
            vec![]
        ),
        "True"
    );
    assert_eq!(
        m(&mut c, &abc, "startswith", vec![i(1)], vec![]),
        "E1008: startswith first arg must be str or a tuple of str, not int"
    );
    assert_eq!(m(&mut c, &abc, "strip", vec![s("ac")], vec![]), "'b'");
    assert_eq!(m(&mut c, &s("  x \t"), "strip", vec![], vec![]), "'x'");
    assert_eq!(
        m(&mut c, &s("xxhixx"), "lstrip", vec![s("x")], vec![]),
        "'hixx'"
    );
    assert_eq!(m(&mut c, &s("ab"), "center", vec![i(5)], vec![]), "'  ab '");
    assert_eq!(
        m(&mut c, &s("abc"), "center", vec![i(6)], vec![]),
        "' abc  '"
    );
    assert_eq!(
        m(&mut c, &s("a"), "center", vec![i(4), s("*")], vec![]),
        "'*a**'"
    );
    assert_eq!(
        m(&mut c, &s("ab"), "ljust", vec![i(5), s("xy")], vec![]),
        "E1008: The fill character must be exactly one character long"
    );
    assert_eq!(
        m(&mut c, &s("7"), "rjust", vec![i(3), s("0")], vec![]),
        "'007'"
    );
    assert_eq!(
        m(&mut c, &s("-42"), "zfill", vec![i(6)], vec![]),
        "'-00042'"
    );
    assert_eq!(m(&mut c, &s("+"), "zfill", vec![i(3)], vec![]), "'+00'");
    assert_eq!(
        m(&mut c, &s("they're bill's"), "title", vec![], vec![]),
        "\"They'Re Bill'S\""
    );
    assert_eq!(
        m(&mut c, &s("hello World"), "capitalize", vec![], vec![]),
        "'Hello world'"
    );
    assert_eq!(
        m(&mut c, &s("HeLLo"), "swapcase", vec![], vec![]),
        "'hEllO'"
    );
    assert_eq!(
        m(&mut c, &s("straße"), "upper", vec![], vec![]),
        "'STRASSE'"
    );
    assert_eq!(m(&mut c, &s("ǆemal"), "title", vec![], vec![]), "'ǅemal'");
    assert_eq!(
        m(
            &mut c,
            &s("prefix-x"),
            "removeprefix",
            vec![s("prefix-")],
            vec![]
        ),
        "'x'"
    );
    assert_eq!(
        m(&mut c, &s("x.txt"), "removesuffix", vec![s(".md")], vec![]),
        "'x.txt'"
    );
    assert_eq!(
        m(
            &mut c,
            &s("{} is {:.1f}"),
            "format",
            vec![s("e"), Value::Float(1.23456)],
            vec![]
        ),
        "'e is 1.2'"
    );
}

#[test]
fn str_predicates() {
    let mut c = TestCaller::new();
    let check = |c: &mut TestCaller, text: &str, name: &str| m(c, &s(text), name, vec![], vec![]);
    assert_eq!(check(&mut c, "abc", "isupper"), "False");
    assert_eq!(check(&mut c, "ABC1", "isupper"), "True");
    assert_eq!(check(&mut c, "ǅ", "isupper"), "False");
    assert_eq!(check(&mut c, "abc1", "islower"), "True");
    assert_eq!(check(&mut c, "123", "islower"), "False");
    assert_eq!(check(&mut c, "١٢", "isdigit"), "True");
    assert_eq!(check(&mut c, "²", "isdigit"), "True");
    assert_eq!(check(&mut c, "²", "isdecimal"), "False");
    assert_eq!(check(&mut c, "一", "isnumeric"), "True");
    assert_eq!(check(&mut c, "\x1c ", "isspace"), "True");
    assert_eq!(check(&mut c, "", "isalpha"), "False");
    assert_eq!(check(&mut c, "héllo", "isalpha"), "True");
    assert_eq!(check(&mut c, "a1²", "isalnum"), "True");
    assert_eq!(check(&mut c, "a", "upper"), "'A'");
    assert_eq!(
        m(&mut c, &s("a"), "upper", vec![i(1)], vec![]),
        "E1012: str.upper() takes no arguments (1 given)"
    );
    assert_eq!(
        m(&mut c, &s("a"), "foo", vec![], vec![]),
        "E1010: 'str' object has no attribute 'foo'"
    );
}

#[test]
fn list_methods() {
    let mut c = TestCaller::new();
    let xs = list(vec![i(3), i(1), i(2)]);
    assert_eq!(m(&mut c, &xs, "append", vec![i(4)], vec![]), "None");
    assert_eq!(
        m(&mut c, &xs, "insert", vec![i(-100), i(0)], vec![]),
        "None"
    );
    assert_eq!(m(&mut c, &xs, "insert", vec![i(100), i(9)], vec![]), "None");
    assert_eq!(repr_string(&c.program, &xs), "[0, 3, 1, 2, 4, 9]");
    assert_eq!(m(&mut c, &xs, "pop", vec![], vec![]), "9");
    assert_eq!(m(&mut c, &xs, "pop", vec![i(0)], vec![]), "0");
    assert_eq!(
        m(&mut c, &xs, "pop", vec![i(10)], vec![]),
        "E1006: pop index out of range"
    );
    assert_eq!(m(&mut c, &xs, "index", vec![i(2)], vec![]), "2");
    assert_eq!(
        m(&mut c, &xs, "index", vec![s("a")], vec![]),
        "E1009: 'a' is not in list"
    );
    assert_eq!(
        m(&mut c, &xs, "remove", vec![i(7)], vec![]),
        "E1009: list.remove(x): x not in list"
    );
    assert_eq!(
        m(&mut c, &xs, "count", vec![Value::Float(1.0)], vec![]),
        "1"
    );
    assert_eq!(
        m(
            &mut c,
            &xs,
            "sort",
            vec![],
            vec![("reverse", Value::Bool(true))]
        ),
        "None"
    );
    assert_eq!(repr_string(&c.program, &xs), "[4, 3, 2, 1]");
    assert_eq!(
        m(&mut c, &xs, "sort", vec![i(1)], vec![]),
        "E1008: sort() takes no positional arguments"
    );
    assert_eq!(
        m(&mut c, &xs, "sort", vec![], vec![("foo", i(1))]),
        "E1012: 'foo' is an invalid keyword argument for sort()"
    );
    // `xs.extend(xs)` reads the list before growing it.
    assert_eq!(m(&mut c, &xs, "extend", vec![xs.clone()], vec![]), "None");
    assert_eq!(repr_string(&c.program, &xs), "[4, 3, 2, 1, 4, 3, 2, 1]");
    assert_eq!(m(&mut c, &xs, "reverse", vec![], vec![]), "None");
    assert_eq!(
        m(&mut c, &xs, "copy", vec![i(1)], vec![]),
        "E1012: list.copy() takes no arguments (1 given)"
    );
    assert_eq!(
        m(&mut c, &xs, "append", vec![], vec![]),
        "E1012: list.append() takes exactly one argument (0 given)"
    );
    assert_eq!(m(&mut c, &xs, "clear", vec![], vec![]), "None");
    assert_eq!(
        m(&mut c, &xs, "pop", vec![], vec![]),
        "E1006: pop from empty list"
    );
    let t = Value::tuple(vec![i(1), i(2)]);
    assert_eq!(
        m(&mut c, &t, "index", vec![i(5)], vec![]),
        "E1009: tuple.index(x): x not in tuple"
    );
    assert_eq!(m(&mut c, &t, "count", vec![i(2)], vec![]), "1");
    let words = list(vec![s("bb"), s("a"), s("cc")]);
    assert_eq!(
        m(
            &mut c,
            &words,
            "sort",
            vec![],
            vec![("key", TestCaller::builtin("len"))]
        ),
        "None"
    );
    assert_eq!(repr_string(&c.program, &words), "['a', 'bb', 'cc']");
    assert!(has_method(&xs, sym::APPEND) && !has_method(&xs, sym::GET));
}

#[test]
fn dict_and_set_methods() {
    let mut c = TestCaller::new();
    let d = Value::dict(Default::default());
    assert_eq!(m(&mut c, &d, "setdefault", vec![s("a"), i(1)], vec![]), "1");
    assert_eq!(
        m(
            &mut c,
            &d,
            "update",
            vec![list(vec![Value::tuple(vec![s("b"), i(2)])])],
            vec![("x", i(3))]
        ),
        "None"
    );
    assert_eq!(repr_string(&c.program, &d), "{'a': 1, 'b': 2, 'x': 3}");
    assert_eq!(m(&mut c, &d, "get", vec![s("zz")], vec![]), "None");
    assert_eq!(m(&mut c, &d, "get", vec![s("zz"), i(0)], vec![]), "0");
    assert_eq!(
        m(&mut c, &d, "get", vec![list(vec![])], vec![]),
        "E1008: unhashable type: 'list'"
    );
    assert_eq!(m(&mut c, &d, "pop", vec![s("a")], vec![]), "1");
    assert_eq!(m(&mut c, &d, "pop", vec![s("k")], vec![]), "E1007: 'k'");
    assert_eq!(m(&mut c, &d, "keys", vec![], vec![]), "['b', 'x']");
    assert_eq!(
        m(&mut c, &d, "items", vec![], vec![]),
        "[('b', 2), ('x', 3)]"
    );
    assert_eq!(
        m(&mut c, &d, "get", vec![], vec![]),
        "E1012: get expected at least 1 argument, got 0"
    );
    let st = Value::set(Default::default());
    for x in [3, 1, 2] {
        m(&mut c, &st, "add", vec![i(x)], vec![]);
    }
    assert_eq!(
        m(
            &mut c,
            &st,
            "union",
            vec![list(vec![i(4)]), Value::tuple(vec![i(1)])],
            vec![]
        ),
        "{3, 1, 2, 4}"
    );
    assert_eq!(
        m(
            &mut c,
            &st,
            "issubset",
            vec![list(vec![i(1), i(2), i(3), i(9)])],
            vec![]
        ),
        "True"
    );
    assert_eq!(
        m(
            &mut c,
            &st,
            "symmetric_difference",
            vec![list(vec![i(2), i(5)])],
            vec![]
        ),
        "{3, 1, 5}"
    );
    assert_eq!(m(&mut c, &st, "remove", vec![i(9)], vec![]), "E1007: 9");
    assert_eq!(m(&mut c, &st, "discard", vec![i(3)], vec![]), "None");
    assert_eq!(m(&mut c, &st, "pop", vec![], vec![]), "1");
    assert_eq!(m(&mut c, &st, "pop", vec![], vec![]), "2");
    assert_eq!(
        m(&mut c, &st, "pop", vec![], vec![]),
        "E1007: 'pop from an empty set'"
    );
    assert_eq!(
        m(&mut c, &Value::Float(2.0), "is_integer", vec![], vec![]),
        "True"
    );
    assert_eq!(
        m(&mut c, &i(1), "is_integer", vec![], vec![]),
        "E1010: 'int' object has no attribute 'is_integer'"
    );
}

#[test]
fn labelled_keys_sort_by_their_plain_values_and_keep_their_labels() {
    use crate::labels::label::{self, Tag};
    let mut c = TestCaller::new();
    let secret = |v: Value| label::wrap(v, Tag::classified(label::origin("sort test")));
    let pair = |n: i64, t: &str| Value::tuple(vec![secret(i(n)), s(t)]);
    let nums = list(vec![secret(i(3)), i(1), secret(i(2)), secret(i(1))]);
    let tuples = list(vec![pair(2, "b"), pair(1, "z"), pair(2, "a")]);
    let words = list(vec![secret(s("pear")), s("apple"), secret(s("fig"))]);
    for (xs, want) in [
        (&nums, vec![1, 1, 2, 3]),
        (&tuples, vec![1, 2, 2]),
        (&words, vec![5, 3, 4]),
    ] {
        assert_eq!(m(&mut c, xs, "sort", vec![], vec![]), "None");
        let Value::List(items) = xs else {
            panic!("a list")
        };
        let got: Vec<i64> = items
            .borrow()
            .iter()
            .map(|x| match &*label::plain(x) {
                Value::Int(n) => *n,
                Value::Tuple(t) => match *label::plain(&t[0]) {
                    Value::Int(n) => n,
                    _ => -1,
                },
                Value::Str(w) => w.as_str().len() as i64,
                _ => -1,
            })
            .collect();
        assert_eq!(got, want);
    }
    // The order was decided by secrets, so every item of the result carries their label
    // (docs/labels.md, "order"), the plain 1 included.
    let Value::List(items) = &nums else {
        panic!("a list")
    };
    let labelled: Vec<bool> = items
        .borrow()
        .iter()
        .map(|x| label::split(x).1.is_some())
        .collect();
    assert_eq!(labelled, vec![true, true, true, true]);
    // Descending: the values in order, every one labelled.
    let desc = list(vec![secret(i(3)), i(1), secret(i(1)), secret(i(2))]);
    assert_eq!(
        m(
            &mut c,
            &desc,
            "sort",
            vec![],
            vec![("reverse", Value::Bool(true))]
        ),
        "None"
    );
    let Value::List(items) = &desc else {
        panic!("a list")
    };
    let seen: Vec<(i64, bool)> = items
        .borrow()
        .iter()
        .map(|x| {
            let (p, t) = label::split(x);
            match *p {
                Value::Int(n) => (n, t.is_some()),
                _ => (-1, false),
            }
        })
        .collect();
    assert_eq!(seen, vec![(3, true), (2, true), (1, true), (1, true)]);
    let Value::List(items) = &tuples else {
        panic!("a list")
    };
    assert!(items.borrow().iter().all(|t| label::deep(t).is_some()));
}

#[test]
fn secret_ints_with_one_label_sort_in_place_and_stay_secret() {
    use crate::labels::label::{self, Tag};
    let mut c = TestCaller::new();
    let t = Tag::classified(label::origin("sort in place test"));
    let xs = list(
        [5, -2, 9, 0]
            .into_iter()
            .map(|n| label::wrap(i(n), t))
            .collect(),
    );
    assert_eq!(
        m(
            &mut c,
            &xs,
            "sort",
            vec![],
            vec![("reverse", Value::Bool(true))]
        ),
        "None"
    );
    let Value::List(items) = &xs else {
        panic!("a list")
    };
    let seen: Vec<(i64, Option<Tag>)> = items
        .borrow()
        .iter()
        .map(|x| {
            let (p, tag) = label::split(x);
            (if let Value::Int(n) = *p { n } else { -1 }, tag)
        })
        .collect();
    assert_eq!(
        seen,
        vec![(9, Some(t)), (5, Some(t)), (0, Some(t)), (-2, Some(t))]
    );
}
