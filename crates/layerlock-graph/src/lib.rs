//! `layerlock graph`: an image's stage graph as a picture (SVG drawn here,
//! DOT for Graphviz, JSON for tools), annotated with what layerlock knows:
//! which stage installs what and how pinned, which targets CI builds.

pub mod annotate;
pub mod build;
pub mod draw;
pub mod json;
pub mod model;

pub use draw::{Format, GraphError, GraphSettings, draw, stale, write};
pub use json::json;
pub use model::{Edge, EdgeKind, Graph, Node, NodeKind, Note, Tone};

// Stand-ins until the layout lands: DOT and SVG writers.
pub fn svg(graph: &Graph) -> String {
    json(graph)
}
pub fn dot(graph: &Graph) -> String {
    json(graph)
}
