//! Drawing a [`Graph`] as SVG: the title, the edges under the boxes, the
//! boxes with their lines, and a legend below. Every coordinate comes
//! from [`crate::layout`] as an integer and every `<text>` carries its own
//! `x`, `y`, `font-size` and `text-anchor="start"`, with no transforms,
//! so a reader (or a test) can tell where each text lies from the element
//! alone. No timestamps and no generated ids: the same graph always gives
//! the same bytes.

mod legend;

use std::fmt::{self, Write as _};

use crate::layout::{
    self, BADGE_SIZE, EdgePath, FONT_FAMILY, LineKind, NodeBox, TextLine, text_width, truncate,
};
use crate::model::{EdgeKind, Graph, Node, NodeKind, Tone};

/// Space around everything.
const MARGIN: i64 = 20;
const TITLE_SIZE: i64 = 16;
/// The title's line plus the space under it, above the first layer.
const TITLE_BAND: i64 = 36;
/// Each line under the title saying what the picture cannot show.
const UNKNOWN_LINE: i64 = 18;
const UNKNOWN_SIZE: i64 = 12;
const UNKNOWN_INK: &str = "#9a6700";
/// The title may be a list of file names; past this it is cut.
const TITLE_CHARS: usize = 120;
/// Space between the lowest box and the legend.
const LEGEND_GAP: i64 = 32;
/// The legend wraps to the graph's width, but never narrower than this.
const LEGEND_MIN_WIDTH: i64 = 420;

const INK: &str = "#1f2328";
const MUTED: &str = "#57606a";

/// The picture of `graph` as a standalone SVG document.
pub fn svg(graph: &Graph) -> String {
    let mut lay = layout::layout(graph);
    let unknown: Vec<String> = graph
        .unknown
        .iter()
        .map(|u| truncate(&format!("not known: {u}"), TITLE_CHARS))
        .collect();
    let band = TITLE_BAND + UNKNOWN_LINE * unknown.len() as i64;
    lay.shift(MARGIN, MARGIN + band);
    let title = truncate(&graph.title, TITLE_CHARS);
    let title_right = unknown
        .iter()
        .map(|u| MARGIN + text_width(u.chars().count(), UNKNOWN_SIZE))
        .fold(
            MARGIN + text_width(title.chars().count(), TITLE_SIZE),
            i64::max,
        );
    let legend_top = MARGIN + band + lay.height + LEGEND_GAP;
    let legend = legend::Legend::lay_out(MARGIN, legend_top, lay.width.max(LEGEND_MIN_WIDTH));
    let width = (MARGIN + lay.width).max(title_right).max(legend.right()) + MARGIN;
    let height = legend.bottom() + MARGIN;

    let mut out = Out::default();
    out.line(format_args!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="{FONT_FAMILY}">"#
    ));
    defs(&mut out);
    out.line(format_args!(
        r##"<rect class="background" x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>"##
    ));
    let title_y = MARGIN + (TITLE_SIZE * 8 + 9) / 10;
    out.text("title", (MARGIN, title_y, TITLE_SIZE), INK, true, &title);
    for (i, line) in unknown.iter().enumerate() {
        let y = title_y + UNKNOWN_LINE * (i as i64 + 1);
        out.text("title", (MARGIN, y, UNKNOWN_SIZE), UNKNOWN_INK, false, line);
    }
    out.line(format_args!(r#"<g class="edges">"#));
    for path in &lay.edges {
        if let Some(edge) = graph.edges.get(path.edge) {
            draw_edge(&mut out, edge.kind, path);
        }
    }
    out.line(format_args!("</g>"));
    out.line(format_args!(r#"<g class="nodes">"#));
    for (node, placed) in graph.nodes.iter().zip(&lay.nodes) {
        draw_node(&mut out, node, placed);
    }
    out.line(format_args!("</g>"));
    legend.draw(&mut out);
    out.line(format_args!("</svg>"));
    out.0
}

/// The document being written. Writing to a `String` cannot fail, so the
/// one place that would have to say so says it once.
#[derive(Default)]
struct Out(String);

impl Out {
    fn line(&mut self, args: fmt::Arguments<'_>) {
        self.0
            .write_fmt(args)
            .expect("writing to a String cannot fail");
        self.0.push('\n');
    }

    /// A `<text>` with everything needed to place it on the element: `at`
    /// is its start's x, its baseline's y and its font size.
    fn text(&mut self, class: &str, at: (i64, i64, i64), fill: &str, bold: bool, s: &str) {
        let (x, y, size) = at;
        let weight = if bold { r#" font-weight="bold""# } else { "" };
        self.line(format_args!(
            r#"<text class="{class}" x="{x}" y="{y}" font-size="{size}" text-anchor="start" fill="{fill}"{weight}>{}</text>"#,
            escape(s)
        ));
    }
}

/// `s` safe as XML text or attribute value.
pub(crate) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

/// A note's colour: green for what a lock guards through red for what
/// can resolve anything, grey for what is not an install.
pub fn tone_colour(tone: Tone) -> &'static str {
    match tone {
        Tone::Guarded => "#1a7f37",
        Tone::HashLocked => "#0b7b7b",
        Tone::Pinned => "#1f5fd1",
        Tone::RunTime => "#d4600c",
        Tone::MayResolve => "#a87600",
        Tone::Unpinned => "#cf222e",
        Tone::Info => "#6e7781",
    }
}

/// How an edge of each kind is stroked: `FROM` solid and dark (the line a
/// stage's layers come down), copies and mounts lighter and broken (only
/// some files come along), bake and Compose edges in their own colour.
struct Stroke {
    colour: &'static str,
    dash: Option<&'static str>,
    width: &'static str,
    marker: &'static str,
}

fn stroke(kind: EdgeKind) -> Stroke {
    let (colour, marker) = match kind {
        EdgeKind::From => ("#24292f", "arrow-dark"),
        EdgeKind::Copy | EdgeKind::Mount => ("#6e7781", "arrow-grey"),
        EdgeKind::Builds | EdgeKind::Inherits => ("#8250df", "arrow-purple"),
    };
    let (dash, width) = match kind {
        EdgeKind::From | EdgeKind::Builds => (None, "1.6"),
        EdgeKind::Copy | EdgeKind::Inherits => (Some("6 4"), "1.4"),
        EdgeKind::Mount => (Some("1 4"), "2"),
    };
    Stroke {
        colour,
        dash,
        width,
        marker,
    }
}

/// Arrowheads, one per edge colour (a marker cannot take its colour from
/// the path that uses it in SVG 1.1). Sized in user units so thick and
/// thin edges get the same head.
fn defs(out: &mut Out) {
    out.line(format_args!("<defs>"));
    for (id, colour) in [
        ("arrow-dark", "#24292f"),
        ("arrow-grey", "#6e7781"),
        ("arrow-purple", "#8250df"),
    ] {
        out.line(format_args!(
            r#"<marker id="{id}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="9" markerHeight="9" markerUnits="userSpaceOnUse" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>"#
        ));
    }
    out.line(format_args!("</defs>"));
}

/// The path through an edge's points: straight where it runs down past a
/// layer, an S-curve between layers (vertical at both ends, so the arrow
/// meets the box square on).
fn path_data(points: &[(i64, i64)]) -> String {
    let mut d = String::new();
    for (i, &(x, y)) in points.iter().enumerate() {
        if i == 0 {
            d.push_str(&format!("M{x},{y}"));
            continue;
        }
        let (px, py) = points[i - 1];
        if px == x {
            d.push_str(&format!(" L{x},{y}"));
        } else {
            let mid = (py + y).div_euclid(2);
            d.push_str(&format!(" C{px},{mid} {x},{mid} {x},{y}"));
        }
    }
    d
}

fn edge_line(class: &str, kind: EdgeKind, d: &str) -> String {
    let s = stroke(kind);
    let dash = s
        .dash
        .map(|d| format!(r#" stroke-dasharray="{d}" stroke-linecap="round""#))
        .unwrap_or_default();
    format!(
        r#"<path class="{class} edge-{}" d="{d}" fill="none" stroke="{}" stroke-width="{}"{dash} marker-end="url(#{})"/>"#,
        kind.as_str(),
        s.colour,
        s.width,
        s.marker
    )
}

fn draw_edge(out: &mut Out, kind: EdgeKind, path: &EdgePath) {
    let d = path_data(&path.points);
    out.line(format_args!("{}", edge_line("edge", kind, &d)));
}

/// A box's fill, outline and dashes: stages white, outside images grey
/// and dashed (not ours to build), targets tinted.
fn box_style(kind: NodeKind) -> (&'static str, &'static str, Option<&'static str>) {
    match kind {
        NodeKind::Stage => ("#ffffff", MUTED, None),
        NodeKind::Image => ("#f6f8fa", "#8c959f", Some("5 3")),
        NodeKind::Target => ("#eef1ff", "#4f5bd5", None),
    }
}

/// A rounded rectangle in a kind's style; CI-built ones drawn thicker.
fn box_rect(class: &str, kind: NodeKind, built: bool, rect: (i64, i64, i64, i64)) -> String {
    let (fill, outline, dash) = box_style(kind);
    let (x, y, w, h) = rect;
    let width = if built { "3" } else { "1.2" };
    let dash = dash
        .map(|d| format!(r#" stroke-dasharray="{d}""#))
        .unwrap_or_default();
    format!(
        r#"<rect class="{class}" x="{x}" y="{y}" width="{w}" height="{h}" rx="6" fill="{fill}" stroke="{outline}" stroke-width="{width}"{dash}/>"#
    )
}

fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Stage => "stage",
        NodeKind::Image => "image",
        NodeKind::Target => "target",
    }
}

fn draw_node(out: &mut Out, node: &Node, placed: &NodeBox) {
    let kind = kind_name(node.kind);
    let built = if node.built { " built" } else { "" };
    out.line(format_args!(r#"<g class="node-group {kind}{built}">"#));
    out.line(format_args!("<title>{}</title>", escape(&node.id)));
    let rect = (placed.x, placed.y, placed.width, placed.height);
    let class = format!("node node-{kind}");
    out.line(format_args!(
        "{}",
        box_rect(&class, node.kind, node.built, rect)
    ));
    for line in &placed.lines {
        draw_line(out, line);
    }
    out.line(format_args!("</g>"));
}

fn draw_line(out: &mut Out, line: &TextLine) {
    let at = (line.x, line.y, line.font_size);
    let (x, y, _) = at;
    match line.kind {
        LineKind::Label => out.text("label", at, INK, true, &line.text),
        LineKind::Detail => out.text("detail", at, MUTED, false, &line.text),
        LineKind::Note(tone) => {
            let colour = tone_colour(tone);
            let class = format!("tone-{}", tone.as_str());
            swatch(out, &class, x - 11, y - 8, colour);
            out.text(&format!("note {class}"), at, colour, false, &line.text);
        }
        LineKind::Badge => {
            let w = text_width(line.text.chars().count(), BADGE_SIZE) + 12;
            out.line(format_args!(
                r#"<rect class="badge" x="{}" y="{}" width="{w}" height="15" rx="7" fill="{INK}"/>"#,
                x - 6,
                y - 11
            ));
            out.text("badge", at, "#ffffff", true, &line.text);
        }
    }
}

/// The small square of a tone's colour before a note, so the tone shows
/// even where colours of text are hard to tell apart.
fn swatch(out: &mut Out, class: &str, x: i64, y: i64, colour: &str) {
    out.line(format_args!(
        r#"<rect class="swatch {class}" x="{x}" y="{y}" width="7" height="7" rx="1" fill="{colour}"/>"#
    ));
}
