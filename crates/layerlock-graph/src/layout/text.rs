//! Sizing a node's box from its text. The drawing uses a monospace font,
//! so a fixed advance per character (0.6 of the font size, which is what
//! DejaVu Sans Mono and most monospace faces use) is an honest estimate
//! and the layout needs no font files.

use super::{LineKind, TextLine};
use crate::model::Node;

/// The font the SVG asks for; monospace so [`text_width`] holds.
pub const FONT_FAMILY: &str = "ui-monospace, DejaVu Sans Mono, monospace";

/// Longest line a box shows, in characters; longer text ends in `…` so
/// one long note cannot make a box (and so the picture) absurdly wide.
pub const MAX_CHARS: usize = 56;

pub const LABEL_SIZE: i64 = 14;
pub const DETAIL_SIZE: i64 = 12;
pub const NOTE_SIZE: i64 = 11;
pub const BADGE_SIZE: i64 = 11;

/// What the badge line of a node CI builds says.
pub const BADGE_TEXT: &str = "built by CI";

/// Space between a note's text and the box's left edge, beyond the
/// padding: room for the tone's colour swatch.
pub const NOTE_INDENT: i64 = 12;
/// Room for the badge's pill to the left of its text.
pub const BADGE_INDENT: i64 = 6;

const PAD_X: i64 = 10;
const PAD_Y: i64 = 6;
const MIN_WIDTH: i64 = 96;

/// Width of `chars` characters at `font_size`, rounded up so the box is
/// never narrower than its text.
pub fn text_width(chars: usize, font_size: i64) -> i64 {
    let chars = i64::try_from(chars).unwrap_or(i64::MAX / 100);
    (chars * font_size * 6 + 9) / 10
}

/// `text` cut to `max` characters (counting the `…` that ends a cut one).
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// A box's size and its lines, placed relative to the box's top-left.
#[derive(Debug, Clone)]
pub(super) struct Measured {
    pub width: i64,
    pub height: i64,
    pub lines: Vec<TextLine>,
}

/// How tall a line is and where its text starts; the pitch leaves room
/// above and below the glyphs (taken as 0.8 and 0.2 of the font size).
fn line_metrics(kind: LineKind) -> (i64, i64, i64) {
    // (font size, pitch, indent)
    match kind {
        LineKind::Label => (LABEL_SIZE, 19, 0),
        LineKind::Detail => (DETAIL_SIZE, 16, 0),
        LineKind::Note(_) => (NOTE_SIZE, 15, NOTE_INDENT),
        LineKind::Badge => (BADGE_SIZE, 19, BADGE_INDENT),
    }
}

/// The lines a node's box shows, top to bottom, before placement.
fn node_lines(node: &Node) -> Vec<(LineKind, &str)> {
    let mut lines = vec![(LineKind::Label, node.label.as_str())];
    if let Some(detail) = &node.detail {
        lines.push((LineKind::Detail, detail.as_str()));
    }
    for note in &node.notes {
        lines.push((LineKind::Note(note.tone), note.text.as_str()));
    }
    if node.built {
        lines.push((LineKind::Badge, BADGE_TEXT));
    }
    lines
}

/// The box a node needs: as wide as its widest line, as tall as its lines.
pub(super) fn measure(node: &Node) -> Measured {
    let mut lines = Vec::new();
    let mut top = PAD_Y;
    let mut widest = 0;
    for (kind, text) in node_lines(node) {
        let (size, pitch, indent) = line_metrics(kind);
        let text = truncate(text, MAX_CHARS);
        widest = widest.max(indent + text_width(text.chars().count(), size));
        // Centre the glyphs (0.8 above the baseline, 0.2 below) in the pitch.
        let baseline = top + (pitch - size) / 2 + (size * 8 + 9) / 10;
        lines.push(TextLine {
            kind,
            text,
            font_size: size,
            x: PAD_X + indent,
            y: baseline,
        });
        top += pitch;
    }
    Measured {
        width: (widest + 2 * PAD_X).max(MIN_WIDTH),
        height: top + PAD_Y,
        lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_long_text_with_an_ellipsis() {
        let long = "x".repeat(80);
        let cut = truncate(&long, MAX_CHARS);
        assert_eq!(cut.chars().count(), MAX_CHARS);
        assert!(cut.ends_with('…'));
        assert_eq!(truncate("short", MAX_CHARS), "short");
    }

    #[test]
    fn widths_round_up() {
        assert_eq!(text_width(10, 14), 84);
        assert_eq!(text_width(1, 11), 7);
        assert_eq!(text_width(0, 11), 0);
    }
}
