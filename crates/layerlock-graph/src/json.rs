//! The graph for tools: nodes and edges as they are, with a version.

use crate::model::Graph;

/// Bumped when a field changes meaning or goes away.
pub const JSON_VERSION: u32 = 1;

pub fn json(graph: &Graph) -> String {
    let value = serde_json::json!({
        "version": JSON_VERSION,
        "title": graph.title,
        "nodes": graph.nodes,
        "unknown": graph.unknown,
        "edges": graph.edges.iter().map(|e| serde_json::json!({
            "from": graph.nodes[e.from].id,
            "to": graph.nodes[e.to].id,
            "kind": e.kind,
        })).collect::<Vec<_>>(),
    });
    let mut out = serde_json::to_string_pretty(&value).unwrap_or_default();
    out.push('\n');
    out
}
