//! Random source edits, as the parser's and the language server's property tests make them: the
//! text an edit inserts and how a deletion plus an insertion is applied.

/// Top-level items a generated program is made of, each clean on its own: a `use`, a record, a
/// function with a loop, a comment, f-strings with nested fields, a list, a `match`, an `else`
/// binding, a triple-quoted string.
pub const ITEMS: [&str; 9] = [
    "use json\n",
    "type Item:\n    id: int\n    name: str = \"x\"\n",
    "def score(x: int, items: list[Item]) -> int:\n    total = x * 2 + 1\n    for it in items:\n        if it.id > 10:\n            total = total + it.id\n    return total\n",
    "\n# a comment between items\n",
    "def label(n: int) -> str:\n    names = [f\"n{k:>{n}}\" for k in range(n) if k % 2 == 0]\n    return f\"label {n}: {len(names)}\"\n",
    "items = [Item(1, \"a\"), Item(id=2, name=\"b\")]\n",
    "match len(items):\n    case 0:\n        pass\n    case Item(id=i) as it:\n        print(it)\n    case _:\n        pass\n",
    "value: int = score(3, items) else (why, kind):\n    exit(1)\n",
    "s = \"\"\"a long\nstring\"\"\"\n",
];

/// Pieces an edit inserts: ones that open and close brackets, strings, blocks and comments,
/// and ones that only change a name or a number.
pub const PIECES: [&str; 14] = [
    "1",
    "x",
    " ",
    "\n",
    "    ",
    "(",
    ")",
    "\"",
    "\"\"\"",
    ":",
    "\n    y = 2\n",
    "def f():\n",
    "#",
    "\\",
];

/// `text` with `del` bytes at `at` replaced by `ins`; `at` is wrapped into the text and both ends
/// are moved back to a char boundary, so any numbers a generator picks make a valid edit.
pub fn edit(text: &str, at: usize, del: usize, ins: &str) -> String {
    let mut at = at % (text.len() + 1);
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let mut end = (at + del).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{}{}", &text[..at], ins, &text[end..])
}
