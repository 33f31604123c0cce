//! The text being parsed, with each character's offset in the caller's text,
//! so that commands found in `bash -c` strings, backquotes and heredoc bodies
//! still report where they sit in the text the caller gave.

/// Characters to parse and, for each, its offset (in chars) in the root text.
#[derive(Debug)]
pub(crate) struct Source {
    pub(crate) chars: Vec<char>,
    origins: Vec<usize>,
    /// Reported for the end of input, where there is no character to point at.
    end_origin: usize,
}

impl Source {
    pub(crate) fn root(text: &str) -> Self {
        let chars: Vec<char> = text.chars().collect();
        let origins = (0..chars.len()).collect();
        let end_origin = chars.len();
        Self {
            chars,
            origins,
            end_origin,
        }
    }

    /// Text derived from another source (a string's value, a heredoc body);
    /// `fallback` is reported for its end when it is empty.
    pub(crate) fn nested(chars: Vec<char>, origins: Vec<usize>, fallback: usize) -> Self {
        let end_origin = origins.last().map_or(fallback, |o| o + 1);
        Self {
            chars,
            origins,
            end_origin,
        }
    }

    pub(crate) fn origin(&self, i: usize) -> usize {
        self.origins.get(i).copied().unwrap_or(self.end_origin)
    }

    /// Characters `start..end`, clamped to the text.
    pub(crate) fn slice(&self, start: usize, end: usize) -> &[char] {
        let end = end.min(self.chars.len());
        self.chars.get(start.min(end)..end).unwrap_or(&[])
    }

    pub(crate) fn text(&self, start: usize, end: usize) -> String {
        self.slice(start, end).iter().collect()
    }
}

/// Turns an offset in the root text into a 1-based line and column. Columns
/// count characters, so a tab is one column.
#[derive(Debug)]
pub(crate) struct LineMap {
    starts: Vec<usize>,
}

impl LineMap {
    pub(crate) fn new(text: &str) -> Self {
        let mut starts = vec![0];
        for (i, c) in text.chars().enumerate() {
            if c == '\n' {
                starts.push(i + 1);
            }
        }
        Self { starts }
    }

    pub(crate) fn position(&self, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts.get(line - 1).copied().unwrap_or(0);
        (line, offset.saturating_sub(start) + 1)
    }
}
