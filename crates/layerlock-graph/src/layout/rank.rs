//! The first steps of the layered layout: break cycles, give every node a
//! layer, and split edges that span several layers into chains through
//! dummy vertices, so every later step sees only edges between adjacent
//! layers.

use std::collections::VecDeque;

use crate::model::Graph;

/// One drawn edge as the layout sees it: the vertices it passes through,
/// top layer first.
#[derive(Debug, Clone)]
pub(super) struct Chain {
    /// Index into `Graph::edges`.
    pub edge: usize,
    pub vertices: Vec<usize>,
    /// The edge closed a cycle and runs bottom to top.
    pub reversed: bool,
}

/// The graph in layers. Vertices `0..real` are the graph's nodes (same
/// indices); the rest are dummies, one per layer an edge passes through.
#[derive(Debug, Clone)]
pub(super) struct Layered {
    pub real: usize,
    /// The layer of each vertex.
    pub layer: Vec<usize>,
    /// Each layer's vertices, left to right.
    pub layers: Vec<Vec<usize>>,
    /// Each vertex's neighbours in the layer above, one entry per segment
    /// (parallel edges count twice, as they are drawn twice).
    pub up: Vec<Vec<usize>>,
    /// Each vertex's neighbours in the layer below.
    pub down: Vec<Vec<usize>>,
    pub chains: Vec<Chain>,
}

impl Layered {
    pub fn is_dummy(&self, vertex: usize) -> bool {
        vertex >= self.real
    }
}

/// An edge the layout can draw: both ends exist and differ. A self-loop
/// (which no Dockerfile can express) has no place in a layering.
struct Link {
    edge: usize,
    from: usize,
    to: usize,
}

pub(super) fn layered(graph: &Graph) -> Layered {
    let real = graph.nodes.len();
    let links: Vec<Link> = graph
        .edges
        .iter()
        .enumerate()
        .filter(|(_, e)| e.from < real && e.to < real && e.from != e.to)
        .map(|(edge, e)| Link {
            edge,
            from: e.from,
            to: e.to,
        })
        .collect();
    let back = back_links(real, &links);
    let oriented: Vec<(usize, usize)> = links
        .iter()
        .zip(&back)
        .map(|(l, &b)| if b { (l.to, l.from) } else { (l.from, l.to) })
        .collect();
    let layer = longest_path(real, &oriented);
    with_dummies(real, layer, &links, &back)
}

/// Which links close a cycle, found by a depth-first search from each node
/// in index order, children in edge order: the links into a node still on
/// the search's stack. Reversing just those leaves a DAG, and the same
/// graph always loses the same links.
fn back_links(real: usize, links: &[Link]) -> Vec<bool> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); real];
    for (i, l) in links.iter().enumerate() {
        out[l.from].push(i);
    }
    // 0 = not seen, 1 = on the stack, 2 = done.
    let mut state = vec![0u8; real];
    let mut back = vec![false; links.len()];
    for root in 0..real {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        let mut stack = vec![(root, 0usize)];
        while let Some(top) = stack.last_mut() {
            let (node, next) = *top;
            let Some(&link) = out[node].get(next) else {
                state[node] = 2;
                stack.pop();
                continue;
            };
            top.1 += 1;
            let to = links[link].to;
            match state[to] {
                0 => {
                    state[to] = 1;
                    stack.push((to, 0));
                }
                1 => back[link] = true,
                _ => {}
            }
        }
    }
    back
}

/// Each node's layer: the length of the longest path to it from a node
/// with no edges in, so every edge points at least one layer down and a
/// base sits above everything built on it.
fn longest_path(real: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut into = vec![0usize; real];
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); real];
    for &(from, to) in edges {
        into[to] += 1;
        out[from].push(to);
    }
    let mut layer = vec![0usize; real];
    let mut ready: VecDeque<usize> = (0..real).filter(|&v| into[v] == 0).collect();
    while let Some(v) = ready.pop_front() {
        for &to in &out[v] {
            layer[to] = layer[to].max(layer[v] + 1);
            into[to] -= 1;
            if into[to] == 0 {
                ready.push_back(to);
            }
        }
    }
    layer
}

/// Splits every link into segments between adjacent layers, adding a
/// dummy vertex in each layer a link passes through. Each link keeps its
/// own dummies, so two parallel edges (a `FROM` and a `COPY --from` of
/// the same stage) are drawn side by side, not on top of each other.
fn with_dummies(real: usize, mut layer: Vec<usize>, links: &[Link], back: &[bool]) -> Layered {
    let mut up: Vec<Vec<usize>> = vec![Vec::new(); real];
    let mut down: Vec<Vec<usize>> = vec![Vec::new(); real];
    let mut chains = Vec::with_capacity(links.len());
    for (link, &reversed) in links.iter().zip(back) {
        let (top, bottom) = if reversed {
            (link.to, link.from)
        } else {
            (link.from, link.to)
        };
        let mut vertices = vec![top];
        for l in layer[top] + 1..layer[bottom] {
            layer.push(l);
            up.push(Vec::new());
            down.push(Vec::new());
            vertices.push(layer.len() - 1);
        }
        vertices.push(bottom);
        for pair in vertices.windows(2) {
            down[pair[0]].push(pair[1]);
            up[pair[1]].push(pair[0]);
        }
        chains.push(Chain {
            edge: link.edge,
            vertices,
            reversed,
        });
    }
    let count = layer.iter().max().map_or(0, |&l| l + 1);
    let mut layers = vec![Vec::new(); count];
    for (v, &l) in layer.iter().enumerate() {
        layers[l].push(v);
    }
    Layered {
        real,
        layer,
        layers,
        up,
        down,
        chains,
    }
}
