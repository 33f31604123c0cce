use super::*;
use crate::model::{Edge, EdgeKind, Node, NodeKind};

fn node(id: &str) -> Node {
    Node {
        id: id.to_string(),
        kind: NodeKind::Stage,
        label: id.to_string(),
        detail: None,
        notes: Vec::new(),
        built: false,
    }
}

fn graph(names: &[&str], edges: &[(usize, usize)]) -> Graph {
    Graph {
        title: "t".to_string(),
        unknown: Vec::new(),
        nodes: names.iter().map(|n| node(n)).collect(),
        edges: edges
            .iter()
            .map(|&(from, to)| Edge {
                from,
                to,
                kind: EdgeKind::From,
            })
            .collect(),
    }
}

#[test]
fn layers_by_longest_path() {
    // a -> b -> c and a -> c: c goes below b, and a -> c passes a dummy.
    let g = graph(&["a", "b", "c"], &[(0, 1), (1, 2), (0, 2)]);
    let l = layout(&g);
    let layers: Vec<usize> = l.nodes.iter().map(|n| n.layer).collect();
    assert_eq!(layers, [0, 1, 2]);
    assert_eq!(
        l.edges[2].points.len(),
        4,
        "one dummy gives two bend points"
    );
    assert_eq!(l.crossings, 0);
}

#[test]
fn edges_run_from_bottom_to_top() {
    let g = graph(&["a", "b"], &[(0, 1)]);
    let l = layout(&g);
    let (a, b) = (&l.nodes[0], &l.nodes[1]);
    let p = &l.edges[0].points;
    assert_eq!(p[0].1, a.y + a.height);
    assert_eq!(p[p.len() - 1].1, b.y);
}

#[test]
fn a_cycle_is_broken_and_drawn_upwards() {
    let g = graph(&["a", "b", "c"], &[(0, 1), (1, 2), (2, 0)]);
    let l = layout(&g);
    let layers: Vec<usize> = l.nodes.iter().map(|n| n.layer).collect();
    assert_eq!(layers, [0, 1, 2]);
    let back = &l.edges[2];
    assert!(back.reversed);
    assert_eq!(back.points[0].1, l.nodes[2].y, "leaves c's top");
    assert_eq!(
        back.points[back.points.len() - 1].1,
        l.nodes[0].y + l.nodes[0].height
    );
}

#[test]
fn self_loops_and_dangling_edges_are_left_out() {
    let g = graph(&["a", "b"], &[(0, 0), (0, 7), (0, 1)]);
    let l = layout(&g);
    let routed: Vec<usize> = l.edges.iter().map(|e| e.edge).collect();
    assert_eq!(routed, [2]);
}

#[test]
fn barycentre_untangles_a_crossing() {
    // Drawn in index order, a->d and b->c cross; ordering removes it.
    let g = graph(&["a", "b", "c", "d"], &[(0, 3), (1, 2)]);
    let l = layout(&g);
    assert_eq!(l.crossings, 0);
    assert_eq!(
        l.nodes[0].x < l.nodes[1].x,
        l.nodes[3].x < l.nodes[2].x,
        "children in their parents' order"
    );
}

#[test]
fn boxes_in_a_layer_do_not_overlap() {
    let names = ["root", "a", "b", "c", "d", "e"];
    let g = graph(&names, &[(0, 1), (0, 2), (0, 3), (0, 4), (0, 5)]);
    let l = layout(&g);
    let mut row: Vec<&NodeBox> = l.nodes.iter().filter(|n| n.layer == 1).collect();
    row.sort_by_key(|n| n.x);
    for pair in row.windows(2) {
        assert!(pair[0].x + pair[0].width < pair[1].x);
    }
}

#[test]
fn an_empty_graph_lays_out_empty() {
    let l = layout(&graph(&[], &[]));
    assert_eq!((l.width, l.height, l.layers), (0, 0, 0));
}

#[test]
fn edges_bend_only_between_layers() {
    // b is taller than a, its neighbour; a's edge to c must not bend
    // beside b.
    let mut g = graph(
        &["r", "a", "b", "c", "d"],
        &[(0, 1), (0, 2), (1, 3), (2, 4), (1, 4)],
    );
    g.nodes[2].detail = Some("a detail line".to_string());
    g.nodes[2].built = true;
    let l = layout(&g);
    for path in &l.edges {
        for pair in path.points.windows(2) {
            let ((x1, y1), (x2, y2)) = (pair[0], pair[1]);
            if x1 == x2 {
                continue;
            }
            let (lo, hi) = (y1.min(y2), y1.max(y2));
            for n in &l.nodes {
                assert!(
                    n.y + n.height <= lo || n.y >= hi,
                    "edge {} bends beside {n:?}",
                    path.edge
                );
            }
        }
    }
}
