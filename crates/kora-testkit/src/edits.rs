//! Random source edits, as the parser's and the language server's property tests make them: the
//! text an edit inserts and how a deletion plus an insertion is applied.

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
