//! Horizontal placement: pack each layer left to right, then pull every
//! vertex towards the median of its neighbours, layer by layer, keeping
//! the order and the gaps. Within a layer the best positions under those
//! constraints are found exactly (pool-adjacent-violators), so vertices
//! that want the same spot share the shift instead of the first one
//! winning. All arithmetic is on integers.

use super::rank::Layered;

/// Space between two boxes in a layer.
const NODE_GAP: i64 = 32;
/// Space beside an edge passing through a layer (a dummy vertex).
const DUMMY_GAP: i64 = 14;
/// Sweeps pulling towards neighbours above, then below, alternately;
/// then [`BALANCE_SWEEPS`] towards both, so neither side has the last word.
const SWEEPS: usize = 8;
const BALANCE_SWEEPS: usize = 2;

/// Which neighbours a sweep pulls towards.
#[derive(Clone, Copy)]
enum Pull {
    Above,
    Below,
    Both,
}

/// The left x of every vertex (dummies have width 0), smallest 0.
pub(super) fn place(g: &Layered, widths: &[i64]) -> Vec<i64> {
    let mut x = pack(g, widths);
    let count = g.layers.len();
    for sweep in 0..SWEEPS + BALANCE_SWEEPS {
        let (pull, layers): (Pull, Vec<usize>) = if sweep >= SWEEPS {
            (Pull::Both, (0..count).collect())
        } else if sweep % 2 == 0 {
            (Pull::Above, (1..count).collect())
        } else {
            (Pull::Below, (0..count.saturating_sub(1)).rev().collect())
        };
        for l in layers {
            settle_layer(g, widths, &mut x, l, pull);
        }
    }
    let least = x.iter().copied().min().unwrap_or(0);
    x.iter().map(|v| v - least).collect()
}

fn gap(g: &Layered, a: usize, b: usize) -> i64 {
    if g.is_dummy(a) || g.is_dummy(b) {
        DUMMY_GAP
    } else {
        NODE_GAP
    }
}

/// Every layer packed from x = 0: the start the sweeps improve on.
fn pack(g: &Layered, widths: &[i64]) -> Vec<i64> {
    let mut x = vec![0; widths.len()];
    for layer in &g.layers {
        let mut at = 0;
        for (i, &v) in layer.iter().enumerate() {
            x[v] = at;
            at += widths[v] + layer.get(i + 1).map_or(0, |&n| gap(g, v, n));
        }
    }
    x
}

/// The median of the centres of `v`'s neighbours on the `pull` side, or
/// on the other side when it has none there, or its own centre.
fn wanted_centre(g: &Layered, widths: &[i64], x: &[i64], v: usize, pull: Pull) -> i64 {
    let centre = |n: usize| x[n] + widths[n] / 2;
    let (first, second): (&[usize], &[usize]) = match pull {
        Pull::Above => (&g.up[v], &g.down[v]),
        Pull::Below => (&g.down[v], &g.up[v]),
        Pull::Both => (&g.up[v], &g.down[v]),
    };
    let mut centres: Vec<i64> = match pull {
        Pull::Both => first.iter().chain(second).map(|&n| centre(n)).collect(),
        _ if first.is_empty() => second.iter().map(|&n| centre(n)).collect(),
        _ => first.iter().map(|&n| centre(n)).collect(),
    };
    if centres.is_empty() {
        return centre(v);
    }
    centres.sort_unstable();
    let mid = centres.len() / 2;
    if centres.len() % 2 == 1 {
        centres[mid]
    } else {
        (centres[mid - 1] + centres[mid]).div_euclid(2)
    }
}

/// Moves layer `l`'s vertices as near their wanted places as the order and
/// gaps allow, in the least-squares sense. Dummies weigh more than boxes
/// so long edges come out straight.
fn settle_layer(g: &Layered, widths: &[i64], x: &mut [i64], l: usize, pull: Pull) {
    let layer = &g.layers[l];
    // offset[i]: how far right of vertex 0 vertex i must at least be.
    let mut offsets = Vec::with_capacity(layer.len());
    let mut offset = 0;
    for (i, &v) in layer.iter().enumerate() {
        offsets.push(offset);
        offset += widths[v] + layer.get(i + 1).map_or(0, |&n| gap(g, v, n));
    }
    // With y = x - offset the constraints become y non-decreasing: an
    // isotonic regression, solved by merging blocks that violate it.
    let mut blocks: Vec<(i64, i64, usize)> = Vec::new(); // (weighted sum, weight, length)
    for (i, &v) in layer.iter().enumerate() {
        let want = wanted_centre(g, widths, x, v, pull) - widths[v] / 2 - offsets[i];
        let weight = if g.is_dummy(v) { 2 } else { 1 };
        blocks.push((want * weight, weight, 1));
        while blocks.len() >= 2 {
            let (s2, w2, n2) = blocks[blocks.len() - 1];
            let (s1, w1, n1) = blocks[blocks.len() - 2];
            if s1.div_euclid(w1) <= s2.div_euclid(w2) {
                break;
            }
            blocks.pop();
            let last = blocks.len() - 1;
            blocks[last] = (s1 + s2, w1 + w2, n1 + n2);
        }
    }
    let mut i = 0;
    for (sum, weight, len) in blocks {
        for _ in 0..len {
            x[layer[i]] = sum.div_euclid(weight) + offsets[i];
            i += 1;
        }
    }
}
