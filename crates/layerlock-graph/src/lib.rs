//! `layerlock graph`: an image's stage graph as a picture (SVG drawn here,
//! DOT for Graphviz, JSON for tools), annotated with what layerlock knows:
//! which stage installs what and how pinned, which targets CI builds.

pub mod annotate;
pub mod build;
pub mod dot;
pub mod draw;
pub mod json;
pub mod layout;
pub mod model;
pub mod svg;

pub use dot::dot;
pub use draw::{Format, GraphError, GraphSettings, draw, stale, write};
pub use json::json;
pub use model::{Edge, EdgeKind, Graph, Node, NodeKind, Note, Tone};
pub use svg::svg;
