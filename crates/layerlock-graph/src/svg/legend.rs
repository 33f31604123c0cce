//! The legend under the graph: what the note colours, edge strokes and
//! box styles mean. Laid out in rows that wrap at the graph's width, so
//! it never reaches past the picture's side nor into the graph above it.

use super::{INK, MUTED, Out, box_rect, edge_line, kind_name, swatch, tone_colour};
use crate::layout::text_width;
use crate::model::{EdgeKind, NodeKind, Tone};

const SIZE: i64 = 11;
const PAD: i64 = 10;
/// Height of one row of items and the space under it.
const ROW: i64 = 22;
/// Height of a row's content (samples and text).
const ROW_CONTENT: i64 = 16;
/// Room for a row's heading (`notes`, `edges`, `boxes`).
const HEADING_WIDTH: i64 = 48;
const ITEM_GAP: i64 = 18;
const SAMPLE_GAP: i64 = 6;

/// The mark drawn before an item's words.
#[derive(Clone, Copy)]
enum Sample {
    Tone(Tone),
    Edge(EdgeKind),
    Box(NodeKind, bool),
}

impl Sample {
    fn width(self) -> i64 {
        match self {
            Sample::Tone(_) => 7,
            Sample::Edge(_) => 30,
            Sample::Box(..) => 22,
        }
    }
}

struct Item {
    sample: Sample,
    text: &'static str,
    x: i64,
    /// The top of the item's row.
    y: i64,
}

struct Heading {
    text: &'static str,
    y: i64,
}

pub(super) struct Legend {
    x: i64,
    y: i64,
    width: i64,
    height: i64,
    headings: Vec<Heading>,
    items: Vec<Item>,
}

/// Every entry, row by row. Tones are named as `Tone::as_str` writes
/// them, the names the audit's classes use.
fn groups() -> [(&'static str, Vec<(Sample, &'static str)>); 3] {
    let tones = [
        Tone::Guarded,
        Tone::HashLocked,
        Tone::Pinned,
        Tone::RunTime,
        Tone::MayResolve,
        Tone::Unpinned,
        Tone::Info,
    ];
    [
        (
            "notes",
            tones.map(|t| (Sample::Tone(t), t.as_str())).to_vec(),
        ),
        (
            "edges",
            vec![
                (Sample::Edge(EdgeKind::From), "FROM"),
                (Sample::Edge(EdgeKind::Copy), "COPY --from"),
                (Sample::Edge(EdgeKind::Mount), "RUN --mount"),
                (Sample::Edge(EdgeKind::Builds), "builds"),
                (Sample::Edge(EdgeKind::Inherits), "inherits"),
            ],
        ),
        (
            "boxes",
            vec![
                (Sample::Box(NodeKind::Stage, false), "stage"),
                (Sample::Box(NodeKind::Image, false), "image"),
                (Sample::Box(NodeKind::Target, false), "target"),
                (Sample::Box(NodeKind::Stage, true), "built by CI"),
            ],
        ),
    ]
}

impl Legend {
    /// The legend with its top-left at (`x`, `y`), wrapping its rows to
    /// stay within `max_width`.
    pub fn lay_out(x: i64, y: i64, max_width: i64) -> Legend {
        let left = x + PAD + HEADING_WIDTH;
        let limit = x + max_width - PAD;
        let mut row = y + PAD;
        let mut right = left;
        let mut headings = Vec::new();
        let mut items = Vec::new();
        for (heading, entries) in groups() {
            headings.push(Heading {
                text: heading,
                y: row,
            });
            let mut at = left;
            for (sample, text) in entries {
                let width = sample.width() + SAMPLE_GAP + text_width(text.chars().count(), SIZE);
                if at > left && at + width > limit {
                    row += ROW;
                    at = left;
                }
                items.push(Item {
                    sample,
                    text,
                    x: at,
                    y: row,
                });
                right = right.max(at + width);
                at += width + ITEM_GAP;
            }
            row += ROW;
        }
        Legend {
            x,
            y,
            width: right + PAD - x,
            height: row - ROW + ROW_CONTENT + PAD - y,
            headings,
            items,
        }
    }

    pub fn right(&self) -> i64 {
        self.x + self.width
    }

    pub fn bottom(&self) -> i64 {
        self.y + self.height
    }

    pub fn draw(&self, out: &mut Out) {
        out.line(format_args!(r#"<g class="legend">"#));
        out.line(format_args!(
            r##"<rect class="legend" x="{}" y="{}" width="{}" height="{}" rx="6" fill="#fafbfc" stroke="#d0d7de" stroke-width="1"/>"##,
            self.x, self.y, self.width, self.height
        ));
        for h in &self.headings {
            out.text(
                "legend-heading",
                (self.x + PAD, h.y + 12, SIZE),
                MUTED,
                true,
                h.text,
            );
        }
        for item in &self.items {
            draw_sample(out, item);
            let x = item.x + item.sample.width() + SAMPLE_GAP;
            out.text("legend-text", (x, item.y + 12, SIZE), INK, false, item.text);
        }
        out.line(format_args!("</g>"));
    }
}

fn draw_sample(out: &mut Out, item: &Item) {
    let (x, y) = (item.x, item.y);
    match item.sample {
        Sample::Tone(tone) => {
            let class = format!("tone-{}", tone.as_str());
            swatch(out, &class, x, y + 4, tone_colour(tone));
        }
        Sample::Edge(kind) => {
            let d = format!("M{x},{} L{},{}", y + 8, x + 30, y + 8);
            out.line(format_args!("{}", edge_line("legend-edge", kind, &d)));
        }
        Sample::Box(kind, built) => {
            let class = format!("legend-box {}", kind_name(kind));
            out.line(format_args!(
                "{}",
                box_rect(&class, kind, built, (x + 1, y + 1, 20, 14))
            ));
        }
    }
}
