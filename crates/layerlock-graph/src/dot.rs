//! The graph in Graphviz's DOT, for those who would rather lay it out
//! with `dot` or feed it to other tools. The same information as the SVG
//! (labels, details, notes, CI-built nodes, edge kinds) in the same
//! order, with nothing generated, so the text is the same from run to run.

use crate::model::{EdgeKind, Graph, Node, NodeKind};

/// `graph` as a DOT `digraph`, bases on top (`rankdir=TB`).
pub fn dot(graph: &Graph) -> String {
    let mut out = format!("digraph \"{}\" {{\n", escape(&graph.title));
    out.push_str("  rankdir=TB;\n");
    // The title, then what the picture cannot show, one line each.
    let mut label = escape(&graph.title);
    for unknown in &graph.unknown {
        label.push_str(&format!("\\lnot known: {}", escape(unknown)));
    }
    if !graph.unknown.is_empty() {
        label.push_str("\\l");
    }
    out.push_str(&format!("  label=\"{label}\";\n  labelloc=t;\n"));
    out.push_str("  node [fontname=\"monospace\", fontsize=11];\n");
    out.push_str("  edge [fontname=\"monospace\", fontsize=9];\n");
    for (i, node) in graph.nodes.iter().enumerate() {
        out.push_str(&format!("  n{i} [{}];\n", node_attrs(node)));
    }
    for edge in &graph.edges {
        // An edge naming a missing node would make DOT invent one.
        if edge.from < graph.nodes.len() && edge.to < graph.nodes.len() {
            let (from, to, attrs) = (edge.from, edge.to, edge_attrs(edge.kind));
            out.push_str(&format!("  n{from} -> n{to} [{attrs}];\n"));
        }
    }
    out.push_str("}\n");
    out
}

/// `s` inside a DOT double-quoted string. A backslash is DOT's escape
/// character in labels, so it is doubled; a line break would end the
/// line in a label anyway, so it becomes DOT's `\n`.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            _ => out.push(c),
        }
    }
    out
}

/// The label's lines, each escaped, joined by DOT's `\n` (a centred
/// line break): label, detail, notes as `[tone] text`, then the badge.
fn label(node: &Node) -> String {
    let mut lines = vec![escape(&node.label)];
    lines.extend(node.detail.as_deref().map(escape));
    for note in &node.notes {
        lines.push(format!("[{}] {}", note.tone.as_str(), escape(&note.text)));
    }
    if node.built {
        lines.push("built by CI".to_string());
    }
    lines.join("\\n")
}

/// Shapes and styles as in the SVG: stages plain rounded boxes, outside
/// images dashed grey, targets filled; thick outlines for CI-built nodes.
/// The node's own id goes in `tooltip`, as node names are `n<index>`
/// (always valid, whatever the ids hold).
fn node_attrs(node: &Node) -> String {
    let style = match node.kind {
        NodeKind::Stage => "shape=box, style=\"rounded\", color=\"#57606a\"",
        NodeKind::Image => "shape=box, style=\"rounded,dashed\", color=\"#8c959f\"",
        NodeKind::Target => {
            "shape=box, style=\"rounded,filled\", fillcolor=\"#eef1ff\", color=\"#4f5bd5\""
        }
    };
    let width = if node.built { ", penwidth=3" } else { "" };
    format!(
        "label=\"{}\", tooltip=\"{}\", {style}{width}",
        label(node),
        escape(&node.id)
    )
}

fn edge_attrs(kind: EdgeKind) -> &'static str {
    match kind {
        EdgeKind::From => "class=\"from\", style=solid, color=\"#24292f\"",
        EdgeKind::Copy => "class=\"copy\", style=dashed, color=\"#6e7781\"",
        EdgeKind::Mount => "class=\"mount\", style=dotted, color=\"#6e7781\"",
        EdgeKind::Builds => "class=\"builds\", style=solid, color=\"#8250df\"",
        EdgeKind::Inherits => "class=\"inherits\", style=dashed, color=\"#8250df\"",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Edge, Note, Tone};

    fn graph() -> Graph {
        let node = |id: &str, kind| Node {
            id: id.to_string(),
            kind,
            label: id.to_string(),
            detail: None,
            notes: Vec::new(),
            built: false,
        };
        let mut base = node("base", NodeKind::Stage);
        base.detail = Some(r#"C:\dir "quoted""#.to_string());
        base.notes.push(Note {
            tone: Tone::Unpinned,
            text: "pip install torch".to_string(),
        });
        base.built = true;
        Graph {
            title: "Dockerfile".to_string(),
            unknown: Vec::new(),
            nodes: vec![node("python:3.12", NodeKind::Image), base],
            edges: vec![
                Edge {
                    from: 0,
                    to: 1,
                    kind: EdgeKind::From,
                },
                Edge {
                    from: 0,
                    to: 1,
                    kind: EdgeKind::Copy,
                },
                Edge {
                    from: 0,
                    to: 9,
                    kind: EdgeKind::Copy,
                },
            ],
        }
    }

    #[test]
    fn writes_nodes_edges_and_escapes() {
        let text = dot(&graph());
        let expected = concat!(
            "digraph \"Dockerfile\" {\n",
            "  rankdir=TB;\n",
            "  label=\"Dockerfile\";\n",
            "  labelloc=t;\n",
            "  node [fontname=\"monospace\", fontsize=11];\n",
            "  edge [fontname=\"monospace\", fontsize=9];\n",
            "  n0 [label=\"python:3.12\", tooltip=\"python:3.12\", shape=box, ",
            "style=\"rounded,dashed\", color=\"#8c959f\"];\n",
            "  n1 [label=\"base\\nC:\\\\dir \\\"quoted\\\"\\n[unpinned] pip install torch\\n",
            "built by CI\", tooltip=\"base\", shape=box, style=\"rounded\", ",
            "color=\"#57606a\", penwidth=3];\n",
            "  n0 -> n1 [class=\"from\", style=solid, color=\"#24292f\"];\n",
            "  n0 -> n1 [class=\"copy\", style=dashed, color=\"#6e7781\"];\n",
            "}\n",
        );
        assert_eq!(text, expected);
        assert_eq!(dot(&graph()), text, "the same every time");
    }
}
