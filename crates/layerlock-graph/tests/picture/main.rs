//! The picture of a vLLM-shaped stage graph, checked from the SVG text
//! itself: where every `<text>` lies (from its own x, y and font-size, at
//! 0.6 em per character), that no two overlap, that each sits in its box
//! or the legend, and that boxes keep apart.

mod real;
mod svg_scan;
mod vllm;

use layerlock_graph::{Graph, Node, NodeKind, layout, svg};
use svg_scan::{Rect, rects, root_size, texts};

fn picture() -> (Graph, String) {
    let graph = vllm::graph();
    let drawn = svg(&graph);
    (graph, drawn)
}

#[test]
fn the_graph_has_the_expected_shape() {
    let graph = vllm::graph();
    assert_eq!(graph.nodes.len(), 16);
    assert_eq!(graph.edges.len(), 27);
    let lay = layout::layout(&graph);
    let layer = |label: &str| {
        let i = graph.nodes.iter().position(|n| n.label == label);
        lay.nodes[i.expect("the fixture has this node")].layer
    };
    assert_eq!(layer("${BUILD_BASE_IMAGE}"), 0);
    assert_eq!(layer("base"), 1);
    assert_eq!(layer("build"), 3);
    assert_eq!(layer("vllm-openai-nonroot"), 7);
}

#[test]
fn no_two_texts_overlap() {
    let (_, drawn) = picture();
    let boxes = texts(&drawn);
    assert!(boxes.len() > 40, "found {} texts", boxes.len());
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            assert!(!a.overlaps(b), "{:?} overlaps {:?}", a.text, b.text);
        }
    }
}

#[test]
fn every_text_lies_in_its_box_the_legend_or_the_title_band() {
    let (_, drawn) = picture();
    let (width, height) = root_size(&drawn);
    let all = rects(&drawn);
    let holders: Vec<&Rect> = all
        .iter()
        .filter(|r| r.class.starts_with("node ") || r.class == "legend")
        .collect();
    let first_box_top = all
        .iter()
        .filter(|r| r.class.starts_with("node "))
        .map(|r| r.y)
        .fold(f64::MAX, f64::min);
    for t in texts(&drawn) {
        assert!(
            t.x0 >= 0.0 && t.y0 >= 0.0 && t.x1 <= width && t.y1 <= height,
            "{:?} leaves the viewBox",
            t.text
        );
        if t.class == "title" {
            assert!(t.y1 < first_box_top, "the title runs into the graph");
            continue;
        }
        assert!(
            holders.iter().any(|r| r.holds(&t)),
            "{:?} ({:?}) is in no box",
            t.text,
            t.class
        );
    }
}

#[test]
fn no_two_node_boxes_overlap_and_the_legend_keeps_clear() {
    let (_, drawn) = picture();
    let all = rects(&drawn);
    let boxes: Vec<&Rect> = all
        .iter()
        .filter(|r| r.class.starts_with("node ") || r.class == "legend")
        .collect();
    assert_eq!(boxes.len(), 17, "16 nodes and the legend");
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            assert!(!a.overlaps(b), "{a:?} overlaps {b:?}");
        }
    }
}

#[test]
fn every_text_is_placed_on_the_element() {
    let (_, drawn) = picture();
    let opened = drawn.matches("<text ").count();
    let anchored = drawn.matches(r#"text-anchor="start""#).count();
    assert_eq!(opened, texts(&drawn).len());
    assert_eq!(opened, anchored);
    assert!(!drawn.contains("transform"), "positions must be absolute");
}

#[test]
fn the_same_graph_gives_the_same_bytes() {
    let (graph, drawn) = picture();
    assert_eq!(svg(&graph), drawn);
    assert_eq!(svg(&graph.clone()), drawn);
}

#[test]
fn notes_carry_their_tone_class() {
    let (_, drawn) = picture();
    for class in [
        "tone-guarded",
        "tone-hash-locked",
        "tone-unpinned",
        "tone-may-resolve",
    ] {
        assert!(
            drawn.contains(&format!(r#"class="note {class}""#)),
            "{class}"
        );
    }
    assert_eq!(
        drawn.matches(">built by CI</text>").count(),
        3,
        "two badges and the legend"
    );
}

#[test]
fn text_is_escaped() {
    let nasty = r#"a<&>"'b"#;
    let graph = Graph {
        title: nasty.to_string(),
        unknown: Vec::new(),
        nodes: vec![Node {
            id: nasty.to_string(),
            kind: NodeKind::Stage,
            label: nasty.to_string(),
            detail: Some(nasty.to_string()),
            notes: Vec::new(),
            built: false,
        }],
        edges: Vec::new(),
    };
    let drawn = svg(&graph);
    assert!(drawn.contains("a&lt;&amp;&gt;&quot;&apos;b"));
    assert!(!drawn.contains("a<&"));
    let found: Vec<String> = texts(&drawn).into_iter().map(|t| t.text).collect();
    assert_eq!(found.iter().filter(|t| *t == nasty).count(), 3, "{found:?}");
}

#[test]
fn long_texts_are_cut() {
    let mut graph = vllm::graph();
    graph.nodes[1].notes[0].text = "x".repeat(200);
    let drawn = svg(&graph);
    let longest = texts(&drawn).iter().map(|t| t.text.chars().count()).max();
    assert_eq!(longest, Some(56));
}

/// Writes the picture where `LAYERLOCK_GRAPH_SVG` says, to look at it:
/// `LAYERLOCK_GRAPH_SVG=$PWD/graph.svg cargo test -p layerlock-graph -- --ignored`
/// (and the DOT text where `LAYERLOCK_GRAPH_DOT` says, if set).
#[test]
#[ignore = "writes a file for a person to look at"]
fn write_the_picture() {
    let path = std::env::var("LAYERLOCK_GRAPH_SVG").expect("LAYERLOCK_GRAPH_SVG names a file");
    let (graph, drawn) = picture();
    std::fs::write(&path, &drawn).expect("the SVG is written");
    if let Ok(dot_path) = std::env::var("LAYERLOCK_GRAPH_DOT") {
        std::fs::write(dot_path, layerlock_graph::dot(&graph)).expect("the DOT is written");
    }
    let lay = layout::layout(&graph);
    let (w, h) = root_size(&drawn);
    eprintln!(
        "{} layers, {} crossings, {w}x{h}, {} bytes",
        lay.layers,
        lay.crossings,
        drawn.len()
    );
}
