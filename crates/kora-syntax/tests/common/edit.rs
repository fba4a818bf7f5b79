//! One random edit of a text, as the property tests apply it: `del` bytes at `at` (wrapped into
//! the text, moved back to a char boundary) replaced by `ins`.

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
