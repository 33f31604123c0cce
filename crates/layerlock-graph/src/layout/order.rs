//! Ordering the vertices within each layer to keep edge crossings few:
//! barycentre sweeps down and up, each followed by swapping neighbours
//! that cross less the other way round, keeping the best order seen.
//! The first order is by vertex index (the graph's nodes in their order,
//! then dummies in edge order), and a tie in a sweep keeps the order the
//! sweep found, so the result is deterministic.

use super::rank::Layered;

/// Sweeps over the layers (alternately down and up). Tens of nodes settle
/// in a few; more only costs time.
const PASSES: usize = 16;
/// Bound on the rounds of neighbour swaps after each sweep.
const TRANSPOSE_ROUNDS: usize = 8;

/// Reorders `g.layers` and returns the crossings of the order kept.
pub(super) fn order(g: &mut Layered) -> usize {
    let mut pos = positions(g);
    let mut best = g.layers.clone();
    let mut best_crossings = crossings(g, &pos);
    for pass in 0..PASSES {
        if best_crossings == 0 {
            break;
        }
        let downwards = pass % 2 == 0;
        let count = g.layers.len();
        if downwards {
            for l in 1..count {
                sort_layer(g, l, true, &mut pos);
            }
        } else {
            for l in (0..count.saturating_sub(1)).rev() {
                sort_layer(g, l, false, &mut pos);
            }
        }
        transpose(g, &mut pos);
        let now = crossings(g, &pos);
        if now < best_crossings {
            best_crossings = now;
            best.clone_from(&g.layers);
        }
    }
    g.layers = best;
    best_crossings
}

/// Each vertex's index within its layer.
fn positions(g: &Layered) -> Vec<usize> {
    let mut pos = vec![0; g.layer.len()];
    for layer in &g.layers {
        for (i, &v) in layer.iter().enumerate() {
            pos[v] = i;
        }
    }
    pos
}

/// Sorts layer `l` by the mean position of each vertex's neighbours above
/// (`from_above`) or below. A vertex with none there keeps its place. The
/// mean is kept as a fraction (sum, count) so no float decides an order.
/// Ties keep their current order rather than falling to the vertex index:
/// the children of one parent all tie on the way down, and by index the
/// dummies of its long edges would always end up last, on the far side,
/// undoing what the sweep up had learnt about where they go.
fn sort_layer(g: &mut Layered, l: usize, from_above: bool, pos: &mut [usize]) {
    let key = |v: usize| {
        let nbrs = if from_above { &g.up[v] } else { &g.down[v] };
        if nbrs.is_empty() {
            (pos[v], 1)
        } else {
            (nbrs.iter().map(|&n| pos[n]).sum::<usize>(), nbrs.len())
        }
    };
    let mut keyed: Vec<(usize, (usize, usize))> =
        g.layers[l].iter().map(|&v| (v, key(v))).collect();
    keyed.sort_by(|(va, (sa, ca)), (vb, (sb, cb))| {
        (sa * cb).cmp(&(sb * ca)).then(pos[*va].cmp(&pos[*vb]))
    });
    g.layers[l] = keyed.into_iter().map(|(v, _)| v).collect();
    for (i, &v) in g.layers[l].iter().enumerate() {
        pos[v] = i;
    }
}

/// Swaps adjacent vertices wherever that strictly lowers the crossings of
/// their edges; each swap lowers the total, so this ends.
fn transpose(g: &mut Layered, pos: &mut [usize]) {
    for _ in 0..TRANSPOSE_ROUNDS {
        let mut improved = false;
        for l in 0..g.layers.len() {
            for i in 0..g.layers[l].len().saturating_sub(1) {
                let (a, b) = (g.layers[l][i], g.layers[l][i + 1]);
                if pair_crossings(g, pos, b, a) < pair_crossings(g, pos, a, b) {
                    g.layers[l].swap(i, i + 1);
                    pos[a] = i + 1;
                    pos[b] = i;
                    improved = true;
                }
            }
        }
        if !improved {
            break;
        }
    }
}

/// Crossings between the edges of `left` and `right` were `left` placed
/// just before `right`, counting both the layer above and below.
fn pair_crossings(g: &Layered, pos: &[usize], left: usize, right: usize) -> usize {
    let side = |nl: &[usize], nr: &[usize]| {
        nl.iter()
            .map(|&a| nr.iter().filter(|&&b| pos[a] > pos[b]).count())
            .sum::<usize>()
    };
    side(&g.up[left], &g.up[right]) + side(&g.down[left], &g.down[right])
}

/// All crossings between adjacent layers: pairs of segments whose ends
/// are in opposite order above and below.
pub(super) fn crossings(g: &Layered, pos: &[usize]) -> usize {
    let mut total = 0;
    for layer in &g.layers {
        let segments: Vec<(usize, usize)> = layer
            .iter()
            .flat_map(|&u| g.down[u].iter().map(move |&d| (u, d)))
            .map(|(u, d)| (pos[u], pos[d]))
            .collect();
        for (i, a) in segments.iter().enumerate() {
            total += segments[i + 1..]
                .iter()
                .filter(|b| (a.0 < b.0 && a.1 > b.1) || (a.0 > b.0 && a.1 < b.1))
                .count();
        }
    }
    total
}
