//! `layerlock graph`: an image's stage graph as a picture (SVG drawn here,
//! DOT for Graphviz, JSON for tools), annotated with what layerlock knows:
//! which stage installs what and how pinned, which targets CI builds.

pub mod dot;
pub mod layout;
pub mod model;
pub mod svg;

pub use dot::dot;
pub use model::{Edge, EdgeKind, Graph, Node, NodeKind, Note, Tone};
pub use svg::svg;
