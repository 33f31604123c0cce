//! A layered ("Sugiyama") layout of a [`Graph`], written here rather than
//! taken from a crate: the graphs are tens of nodes, and owning these few
//! hundred lines keeps the output byte-for-byte deterministic (integer
//! coordinates, every tie broken by index), so a picture changes only
//! when its graph does.
//!
//! The steps: break cycles, layer by longest path and split long edges
//! through dummy vertices (`rank`); order each layer by barycentre sweeps
//! (`order`); size boxes from their text (`text`); place x by pulling
//! towards neighbours (`place`); y from the layers; then route each edge
//! as a polyline through its dummies.

mod order;
mod place;
mod rank;
mod text;

pub use text::{
    BADGE_INDENT, BADGE_SIZE, BADGE_TEXT, DETAIL_SIZE, FONT_FAMILY, LABEL_SIZE, MAX_CHARS,
    NOTE_INDENT, NOTE_SIZE, text_width, truncate,
};

use crate::model::{Graph, Tone};
use rank::{Chain, Layered};

/// Vertical space between layers, where the edges bend.
const LAYER_GAP: i64 = 56;
/// Space between the edges leaving (or entering) one box side by side:
/// enough for the arrowheads (9 wide) to stay apart.
const PORT_GAP: i64 = 16;

/// What one line of a box says, so the drawing can style it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Label,
    Detail,
    Note(Tone),
    /// The "built by CI" line.
    Badge,
}

/// A line of text placed in the picture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextLine {
    pub kind: LineKind,
    /// Already cut to [`MAX_CHARS`].
    pub text: String,
    pub font_size: i64,
    /// Where the text starts (it is drawn `text-anchor="start"`).
    pub x: i64,
    /// The baseline.
    pub y: i64,
}

/// A node's box, in the same order as `Graph::nodes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeBox {
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
    pub layer: usize,
    pub lines: Vec<TextLine>,
}

/// An edge's route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgePath {
    /// Index into `Graph::edges`.
    pub edge: usize,
    /// From the source box's bottom to the target box's top (the other
    /// way round when `reversed`), with two points in every layer the edge
    /// passes through, so it runs straight down past the boxes there.
    /// Between two points of different x the edge only ever crosses the
    /// gap between two layers, where there are no boxes.
    pub points: Vec<(i64, i64)>,
    /// The edge closed a cycle, so the layout ran it upwards: it leaves
    /// its source's top and enters its target's bottom.
    pub reversed: bool,
}

/// Where everything goes. Coordinates start at (0, 0) at the top-left of
/// the graph; [`Layout::shift`] moves it into a larger picture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub width: i64,
    pub height: i64,
    pub nodes: Vec<NodeBox>,
    /// In `Graph::edges` order; self-loops and edges naming a missing
    /// node have no route and are left out.
    pub edges: Vec<EdgePath>,
    pub layers: usize,
    /// Edge crossings between adjacent layers in the order chosen.
    pub crossings: usize,
}

impl Layout {
    /// Moves everything right by `dx` and down by `dy`.
    pub fn shift(&mut self, dx: i64, dy: i64) {
        for node in &mut self.nodes {
            node.x += dx;
            node.y += dy;
            for line in &mut node.lines {
                line.x += dx;
                line.y += dy;
            }
        }
        for edge in &mut self.edges {
            for point in &mut edge.points {
                point.0 += dx;
                point.1 += dy;
            }
        }
    }
}

/// Lays `graph` out.
pub fn layout(graph: &Graph) -> Layout {
    let measured: Vec<text::Measured> = graph.nodes.iter().map(text::measure).collect();
    let mut layered = rank::layered(graph);
    let crossings = order::order(&mut layered);
    let widths: Vec<i64> = (0..layered.layer.len())
        .map(|v| measured.get(v).map_or(0, |m| m.width))
        .collect();
    let xs = place::place(&layered, &widths);
    let bands = bands(&layered, &measured);
    let nodes: Vec<NodeBox> = measured
        .into_iter()
        .enumerate()
        .map(|(v, m)| placed_box(m, xs[v], bands[layered.layer[v]].0, layered.layer[v]))
        .collect();
    let edges = routes(&layered, &nodes, &xs, &bands);
    let width = nodes.iter().map(|n| n.x + n.width).max().unwrap_or(0);
    let height = bands.last().map_or(0, |&(top, tall)| top + tall);
    Layout {
        width,
        height,
        nodes,
        edges,
        layers: layered.layers.len(),
        crossings,
    }
}

/// Each layer's top and the height of its tallest box; boxes in a layer
/// share their top.
fn bands(g: &Layered, measured: &[text::Measured]) -> Vec<(i64, i64)> {
    let mut tallest = vec![0; g.layers.len()];
    for (v, m) in measured.iter().enumerate() {
        let l = g.layer[v];
        tallest[l] = tallest[l].max(m.height);
    }
    let mut top = 0;
    tallest
        .into_iter()
        .map(|tall| {
            let band = (top, tall);
            top += tall + LAYER_GAP;
            band
        })
        .collect()
}

fn placed_box(m: text::Measured, x: i64, y: i64, layer: usize) -> NodeBox {
    let lines = m
        .lines
        .into_iter()
        .map(|line| TextLine {
            x: line.x + x,
            y: line.y + y,
            ..line
        })
        .collect();
    NodeBox {
        x,
        y,
        width: m.width,
        height: m.height,
        layer,
        lines,
    }
}

/// Every chain's polyline, in edge order.
fn routes(g: &Layered, nodes: &[NodeBox], xs: &[i64], bands: &[(i64, i64)]) -> Vec<EdgePath> {
    let ports = Ports::assign(g, nodes, xs);
    g.chains
        .iter()
        .enumerate()
        .map(|(c, chain)| {
            let (top, bottom) = (chain.vertices[0], chain.vertices[chain.vertices.len() - 1]);
            let start = (ports.out[c], nodes[top].y + nodes[top].height);
            let mut points = vec![start];
            // Down to the band's bottom first: a bend starting higher up,
            // beside a taller box in the same layer, could cut through it.
            let (band_top, tall) = bands[g.layer[top]];
            if start.1 < band_top + tall {
                points.push((start.0, band_top + tall));
            }
            for &d in &chain.vertices[1..chain.vertices.len() - 1] {
                let (band_top, tall) = bands[g.layer[d]];
                points.push((xs[d], band_top));
                points.push((xs[d], band_top + tall));
            }
            points.push((ports.into[c], nodes[bottom].y));
            if chain.reversed {
                points.reverse();
            }
            EdgePath {
                edge: chain.edge,
                points,
                reversed: chain.reversed,
            }
        })
        .collect()
}

/// Where each chain leaves its top box and enters its bottom box. Edges
/// sharing a side of a box are spread around its centre, in the order of
/// where they go, so parallel edges stay apart and do not cross there.
struct Ports {
    /// Per chain: x on its top vertex's bottom side.
    out: Vec<i64>,
    /// Per chain: x on its bottom vertex's top side.
    into: Vec<i64>,
}

impl Ports {
    fn assign(g: &Layered, nodes: &[NodeBox], xs: &[i64]) -> Ports {
        let centre = |v: usize| nodes.get(v).map_or(xs[v], |n| n.x + n.width / 2);
        let mut out = vec![0; g.chains.len()];
        let mut into = vec![0; g.chains.len()];
        for (v, node) in nodes.iter().enumerate() {
            let leaving = side(&g.chains, |c| c.vertices[0] == v, |c| centre(c.vertices[1]));
            spread(&leaving, node, &mut out);
            let entering = side(
                &g.chains,
                |c| c.vertices[c.vertices.len() - 1] == v,
                |c| centre(c.vertices[c.vertices.len() - 2]),
            );
            spread(&entering, node, &mut into);
        }
        Ports { out, into }
    }
}

/// The chains on one side of a box, ordered by the x of the vertex each
/// goes to next, then by edge.
fn side(
    chains: &[Chain],
    on: impl Fn(&Chain) -> bool,
    towards: impl Fn(&Chain) -> i64,
) -> Vec<usize> {
    let mut found: Vec<(i64, usize, usize)> = chains
        .iter()
        .enumerate()
        .filter(|(_, c)| on(c))
        .map(|(i, c)| (towards(c), c.edge, i))
        .collect();
    found.sort_unstable();
    found.into_iter().map(|(_, _, i)| i).collect()
}

/// Spreads `chains` evenly around `node`'s centre, at most [`PORT_GAP`]
/// apart and never past its rounded corners.
fn spread(chains: &[usize], node: &NodeBox, ports: &mut [i64]) {
    let k = i64::try_from(chains.len()).unwrap_or(1).max(1);
    // Even, so half of it is exact.
    let step = (PORT_GAP.min((node.width - 16) / k)) & !1;
    let centre = node.x + node.width / 2;
    for (i, &c) in chains.iter().enumerate() {
        let i = i64::try_from(i).unwrap_or(0);
        ports[c] = centre + (2 * i + 1 - k) * step / 2;
    }
}

#[cfg(test)]
mod tests;
