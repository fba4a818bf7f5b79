//! Byte spans into one source file, and the line/column index that turns them into positions.

/// A half-open byte range `[start, end)` into one source file.
///
/// Offsets are `u32`: a source file over 4 GiB is refused before lexing, and
/// halving the span keeps every AST node smaller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub const fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn len(self) -> u32 {
        self.end.saturating_sub(self.start)
    }

    pub fn is_empty(self) -> bool {
        self.end <= self.start
    }

    pub fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    pub fn contains(self, offset: u32) -> bool {
        self.start <= offset && offset < self.end
    }
}

impl From<std::ops::Range<usize>> for Span {
    fn from(r: std::ops::Range<usize>) -> Span {
        Span::new(r.start as u32, r.end as u32)
    }
}

/// Maps byte offsets to 1-based line and column (columns count characters, as editors do).
#[derive(Clone, Debug)]
pub struct LineIndex {
    line_starts: Vec<u32>,
}

impl LineIndex {
    pub fn new(src: &str) -> LineIndex {
        let mut line_starts = vec![0u32];
        for (i, b) in src.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        LineIndex { line_starts }
    }

    /// 1-based line number of a byte offset.
    pub fn line(&self, offset: u32) -> u32 {
        match self.line_starts.binary_search(&offset) {
            Ok(i) => i as u32 + 1,
            Err(i) => i as u32,
        }
    }

    /// 1-based (line, column); the column counts characters from the line start.
    pub fn line_col(&self, src: &str, offset: u32) -> (u32, u32) {
        let line = self.line(offset);
        let start = self.line_starts[(line - 1) as usize] as usize;
        let end = (offset as usize).min(src.len());
        let col = src
            .get(start..end)
            .map(|s| s.chars().count())
            .unwrap_or(end.saturating_sub(start));
        (line, col as u32 + 1)
    }

    /// Byte offset of the start of a 1-based line, if the line exists.
    pub fn line_start(&self, line: u32) -> Option<u32> {
        self.line_starts.get(line.checked_sub(1)? as usize).copied()
    }

    pub fn line_count(&self) -> u32 {
        self.line_starts.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters() {
        let src = "ab\nçd\n";
        let idx = LineIndex::new(src);
        assert_eq!(idx.line_col(src, 0), (1, 1));
        assert_eq!(idx.line_col(src, 3), (2, 1));
        // 'd' is after a two-byte character: byte 5, column 2.
        assert_eq!(idx.line_col(src, 5), (2, 2));
        assert_eq!(idx.line_start(2), Some(3));
    }
}
