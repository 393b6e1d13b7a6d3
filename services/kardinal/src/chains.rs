//! Chains of abbeys (KK-26): the largest number of a player's abbeys that
//! vertex-disjoint simple road paths of at least 4 abbeys can cover.
//!
//! An exact search: each connected component of the player's abbeys is
//! solved on its own (at most 20 vertices, re-indexed into a `u32`), by
//! memoised recursion over the set of abbeys still free. The lowest free
//! abbey is either left out of every chain, or lies on some path of ≥ 4 free
//! abbeys; every such path (by vertex set) is tried. The memo is keyed by
//! the free set, so equal sub-problems reached by different choices are
//! solved once.

use std::collections::HashMap;

use crate::board::bits;

/// Shortest chain that scores (KK-26).
pub(crate) const MIN_CHAIN: usize = 4;

/// A best set of chains among `owned` sites (a site mask) on a board with
/// the given neighbour masks; each chain lists site indices in road order,
/// oriented from its lower end, chains sorted by their first site.
pub(crate) fn best_chains(adjacency: &[u128], owned: u128) -> Vec<Vec<u8>> {
    let mut chains = Vec::new();
    let mut left = owned;
    while left != 0 {
        let component = component_of(adjacency, owned, left.trailing_zeros() as u8);
        left &= !component;
        if component.count_ones() as usize >= MIN_CHAIN {
            chains.extend(Component::new(adjacency, component).solve_all());
        }
    }
    for chain in &mut chains {
        if chain.first() > chain.last() {
            chain.reverse();
        }
    }
    chains.sort();
    chains
}

/// The points of `chains`: one per abbey.
pub(crate) fn points(chains: &[Vec<u8>]) -> i32 {
    chains.iter().map(|c| c.len() as i32).sum()
}

fn component_of(adjacency: &[u128], owned: u128, start: u8) -> u128 {
    let mut seen = 1u128 << start;
    let mut frontier = seen;
    while frontier != 0 {
        let mut next = 0;
        for v in bits(frontier) {
            next |= adjacency[usize::from(v)] & owned;
        }
        frontier = next & !seen;
        seen |= next;
    }
    seen
}

/// One connected component, re-indexed 0..n with `u32` masks.
struct Component {
    sites: Vec<u8>,
    adj: Vec<u32>,
    memo: HashMap<u32, u8>,
}

impl Component {
    fn new(adjacency: &[u128], mask: u128) -> Component {
        let sites: Vec<u8> = bits(mask).collect();
        let local = |site: u8| sites.iter().position(|&s| s == site);
        let adj = sites.iter().map(|&s| bits(adjacency[usize::from(s)] & mask).filter_map(local).fold(0u32, |m, i| m | 1 << i)).collect();
        Component { sites, adj, memo: HashMap::new() }
    }

    /// Solves the whole component and returns its chains as site indices.
    fn solve_all(mut self) -> Vec<Vec<u8>> {
        let all = if self.sites.len() == 32 { u32::MAX } else { (1u32 << self.sites.len()) - 1 };
        self.best(all);
        // Walk the memo down the optimal choices to recover the chains.
        let mut chains = Vec::new();
        let mut free = all;
        while free.count_ones() as usize >= MIN_CHAIN {
            let value = self.best(free);
            if value == 0 {
                break;
            }
            let v = free.trailing_zeros();
            let rest = free & !(1 << v);
            if self.best(rest) == value {
                free = rest;
                continue;
            }
            let (mask, path) = self
                .paths_through(free, v)
                .into_iter()
                .find(|(mask, _)| mask.count_ones() as u8 + self.best(free & !mask) == value)
                .expect("the memoised value is reachable");
            chains.push(path.into_iter().map(|i| self.sites[usize::from(i)]).collect());
            free &= !mask;
        }
        chains
    }

    /// Most abbeys coverable by disjoint chains inside `free`.
    fn best(&mut self, free: u32) -> u8 {
        if (free.count_ones() as usize) < MIN_CHAIN {
            return 0;
        }
        if let Some(&v) = self.memo.get(&free) {
            return v;
        }
        let v = free.trailing_zeros();
        let mut best = self.best(free & !(1 << v));
        for (mask, _) in self.paths_through(free, v) {
            let value = mask.count_ones() as u8 + self.best(free & !mask);
            best = best.max(value);
        }
        self.memo.insert(free, best);
        best
    }

    /// Every simple path of at least `MIN_CHAIN` vertices inside `free`
    /// through `v`, one per vertex set (the first found), in a fixed order.
    fn paths_through(&self, free: u32, v: u32) -> Vec<(u32, Vec<u8>)> {
        let mut arms = Vec::new();
        let mut arm = Vec::new();
        self.arms(free, 1 << v, v, &mut arm, &mut arms);
        let mut found: Vec<(u32, Vec<u8>)> = Vec::new();
        for (i, (mask1, arm1)) in arms.iter().enumerate() {
            // Pair each arm with the arms after it (and with the empty arm,
            // index 0): every path through v, each orientation once.
            for (mask2, arm2) in std::iter::once(&arms[0]).chain(&arms[i + 1..]) {
                if mask1 & mask2 != 1 << v {
                    continue;
                }
                let mask = mask1 | mask2;
                if (mask.count_ones() as usize) < MIN_CHAIN || found.iter().any(|(m, _)| *m == mask) {
                    continue;
                }
                let mut path: Vec<u8> = arm1.iter().rev().copied().collect();
                path.push(v as u8);
                path.extend(arm2);
                found.push((mask, path));
            }
        }
        found
    }

    /// Collects every simple path starting at `v` (excluding `v` itself in
    /// the list, including the empty one) with its vertex mask (including `v`).
    fn arms(&self, free: u32, used: u32, at: u32, arm: &mut Vec<u8>, out: &mut Vec<(u32, Vec<u8>)>) {
        out.push((used, arm.clone()));
        let mut next = self.adj[at as usize] & free & !used;
        while next != 0 {
            let w = next.trailing_zeros();
            next &= next - 1;
            arm.push(w as u8);
            self.arms(free, used | 1 << w, w, arm, out);
            arm.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludo_engine::{DeckRng, Seed};

    fn graph(n: usize, edges: &[(u8, u8)]) -> Vec<u128> {
        let mut adj = vec![0u128; n];
        for &(a, b) in edges {
            adj[usize::from(a)] |= 1 << b;
            adj[usize::from(b)] |= 1 << a;
        }
        adj
    }

    /// Brute force over edge subsets forming linear forests.
    fn brute(n: usize, edges: &[(u8, u8)], owned: u128) -> i32 {
        let edges: Vec<(u8, u8)> = edges.iter().copied().filter(|&(a, b)| owned >> a & 1 == 1 && owned >> b & 1 == 1).collect();
        let mut best = 0;
        for subset in 0u32..1 << edges.len() {
            let mut deg = vec![0; n];
            let mut comp: Vec<usize> = (0..n).collect();
            let mut ok = true;
            for (i, &(a, b)) in edges.iter().enumerate() {
                if subset >> i & 1 == 0 {
                    continue;
                }
                deg[usize::from(a)] += 1;
                deg[usize::from(b)] += 1;
                let (ca, cb) = (comp[usize::from(a)], comp[usize::from(b)]);
                if ca == cb || deg[usize::from(a)] > 2 || deg[usize::from(b)] > 2 {
                    ok = false;
                    break;
                }
                for c in comp.iter_mut() {
                    if *c == cb {
                        *c = ca;
                    }
                }
            }
            if !ok {
                continue;
            }
            let mut size = vec![0; n];
            for v in bits(owned) {
                size[comp[usize::from(v)]] += 1;
            }
            best = best.max(size.iter().filter(|&&s| s >= 4).sum());
        }
        best
    }

    #[test]
    fn kk26_side_branch_does_not_count_and_an_abbey_is_in_one_chain() {
        // 0-1-2-3-4 with 5 hanging off 2: one chain of 5.
        let adj = graph(6, &[(0, 1), (1, 2), (2, 3), (3, 4), (2, 5)]);
        let chains = best_chains(&adj, 0b111111);
        assert_eq!(points(&chains), 5);
        assert_eq!(chains.len(), 1);
    }

    #[test]
    fn kk26_two_disjoint_chains_beat_the_longest_path() {
        // A hub (0) with arms of 4 (1-4), 3 (5-7) and 3 (8-10). The longest
        // path takes 8 abbeys (4-arm, hub, a 3-arm); better: the 4-arm alone
        // (4) plus 3-arm, hub, 3-arm (7) = 11.
        let edges = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 5), (5, 6), (6, 7), (0, 8), (8, 9), (9, 10)];
        let chains = best_chains(&graph(11, &edges), (1 << 11) - 1);
        assert_eq!(points(&chains), 11);
        assert_eq!(chains, vec![vec![1, 2, 3, 4], vec![7, 6, 5, 0, 8, 9, 10]]);
    }

    #[test]
    fn chains_match_a_brute_force_on_random_graphs() {
        let mut rng = DeckRng::new(&Seed([11; 32]));
        for _ in 0..600 {
            let n = 4 + rng.below(9) as usize;
            let mut edges = Vec::new();
            for a in 0..n as u8 {
                for b in a + 1..n as u8 {
                    if rng.below(100) < 30 && edges.len() < 15 {
                        edges.push((a, b));
                    }
                }
            }
            let adj = graph(n, &edges);
            let owned = ((1u128 << n) - 1) & !(u128::from(rng.below(4) == 0) << rng.below(n as u32));
            let chains = best_chains(&adj, owned);
            assert_eq!(points(&chains), brute(n, &edges, owned), "{n} vertices, edges {edges:?}, owned {owned:b}");
            let mut used = 0u128;
            for c in &chains {
                assert!(c.len() >= MIN_CHAIN);
                for w in c.windows(2) {
                    assert!(adj[usize::from(w[0])] >> w[1] & 1 == 1, "not a road");
                }
                for &v in c {
                    assert!(owned >> v & 1 == 1 && used >> v & 1 == 0);
                    used |= 1 << v;
                }
            }
        }
    }
}

#[cfg(test)]
mod worst_case {
    use super::*;
    use crate::board::embedded_index;
    use ludo_engine::{DeckRng, Seed};

    /// 20 abbeys (a player's whole supply) grown as one connected blob on
    /// the real board: the search stays exact and quick.
    #[test]
    fn chain_search_on_twenty_connected_abbeys_is_quick() {
        let board = embedded_index();
        let mut rng = DeckRng::new(&Seed([5; 32]));
        let start = std::time::Instant::now();
        for _ in 0..50 {
            let mut owned = 1u128 << rng.below(board.adjacency.len() as u32);
            while owned.count_ones() < 20 {
                let frontier: Vec<u8> = bits(owned).flat_map(|v| bits(board.adjacency[usize::from(v)] & !owned)).collect();
                if frontier.is_empty() {
                    // An island smaller than 20 (England has no road out): start elsewhere.
                    owned = 1u128 << rng.below(board.adjacency.len() as u32);
                    continue;
                }
                owned |= 1u128 << frontier[rng.below(frontier.len() as u32) as usize];
            }
            let chains = best_chains(&board.adjacency, owned);
            assert!(points(&chains) >= 4);
        }
        let per_search = start.elapsed() / 50;
        eprintln!("20 connected abbeys: {per_search:?} per search");
        assert!(per_search < std::time::Duration::from_millis(200));
    }
}
