//! The layout choices a project may make (`kora.toml [fmt]`), with Black's defaults.

/// Which quote a string literal is written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuoteStyle {
    /// `"..."`, unless that needs more escapes than the literal has now.
    Double,
    /// `'...'`, under the same rule.
    Single,
    /// Each literal keeps the quotes it was written with.
    Preserve,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The column limit lines are fitted into.
    pub line_length: usize,
    /// Spaces per indentation level.
    pub indent_width: usize,
    pub quote_style: QuoteStyle,
    /// A trailing comma written after the last item keeps the brackets broken, one item
    /// per line (Black's "magic trailing comma"). `false` lets the width decide alone.
    pub magic_trailing_comma: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            line_length: 88,
            indent_width: 4,
            quote_style: QuoteStyle::Double,
            magic_trailing_comma: true,
        }
    }
}
