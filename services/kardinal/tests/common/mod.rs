//! An independent, deliberately simple re-implementation of the scoring
//! (KK-24..KK-27), computed from what a finished game's view shows: the
//! tests compare it with the engine's figures.
#![allow(dead_code)]

use std::collections::HashMap;

use ludo_engine::Seat;
use ludo_kardinal::{Board, Country, View};

/// Abbey points of one country: the top group scores the country's total,
/// every other player the count of the smallest group larger than their own.
pub fn abbey_points(counts: &[u8]) -> Vec<i32> {
    let total: i32 = counts.iter().map(|&n| i32::from(n)).sum();
    let max = counts.iter().copied().max().unwrap_or(0);
    counts
        .iter()
        .map(|&n| {
            if n == 0 {
                0
            } else if n == max {
                total
            } else {
                i32::from(counts.iter().copied().filter(|&m| m > n).min().unwrap())
            }
        })
        .collect()
}

/// Alliance points per seat for one pair of seals.
pub fn alliance_points(first: &[u8], second: &[u8]) -> Vec<i32> {
    let (m1, m2) = (*first.iter().max().unwrap(), *second.iter().max().unwrap());
    let total: i32 = first.iter().chain(second).map(|&n| i32::from(n)).sum();
    (0..first.len()).map(|s| if m1 > 0 && m2 > 0 && first[s] == m1 && second[s] == m2 { total } else { 0 }).collect()
}

/// Best chain total by brute force over road subsets: any set of disjoint
/// simple paths is a set of roads where every abbey touches at most two
/// chosen roads and no cycle closes; components of ≥ 4 abbeys score.
pub fn chain_points(vertices: &[&str], roads: &[(usize, usize)]) -> i32 {
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            x = parent[x];
        }
        x
    }
    fn score(n: usize, chosen: &[(usize, usize)]) -> i32 {
        let mut parent: Vec<usize> = (0..n).collect();
        for &(a, b) in chosen {
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            parent[ra] = rb;
        }
        let mut size: HashMap<usize, i32> = HashMap::new();
        for v in 0..n {
            *size.entry(find(&mut parent, v)).or_default() += 1;
        }
        size.values().filter(|&&s| s >= 4).sum()
    }
    fn go(i: usize, n: usize, roads: &[(usize, usize)], deg: &mut Vec<u8>, chosen: &mut Vec<(usize, usize)>, best: &mut i32) {
        if i == roads.len() {
            *best = (*best).max(score(n, chosen));
            return;
        }
        go(i + 1, n, roads, deg, chosen, best);
        let (a, b) = roads[i];
        if deg[a] < 2 && deg[b] < 2 {
            // No cycle: a and b must not be connected yet by chosen roads.
            let mut parent: Vec<usize> = (0..n).collect();
            for &(x, y) in chosen.iter() {
                let (rx, ry) = (find(&mut parent, x), find(&mut parent, y));
                parent[rx] = ry;
            }
            if find(&mut parent, a) != find(&mut parent, b) {
                deg[a] += 1;
                deg[b] += 1;
                chosen.push((a, b));
                go(i + 1, n, roads, deg, chosen, best);
                chosen.pop();
                deg[a] -= 1;
                deg[b] -= 1;
            }
        }
    }
    let mut best = 0;
    go(0, vertices.len(), roads, &mut vec![0; vertices.len()], &mut Vec::new(), &mut best);
    best
}

/// A seat's abbeys and the roads among them.
pub fn abbey_graph<'a>(board: &'a Board, view: &View, seat: Seat) -> (Vec<&'a str>, Vec<(usize, usize)>) {
    let mine: Vec<&str> =
        board.sites.iter().map(|s| s.id.as_str()).filter(|id| view.abbeys.iter().any(|a| a.site == *id && a.seat == seat)).collect();
    let roads = board
        .roads
        .iter()
        .filter_map(|r| {
            let a = mine.iter().position(|m| *m == r.0[0])?;
            let b = mine.iter().position(|m| *m == r.0[1])?;
            Some((a, b))
        })
        .collect();
    (mine, roads)
}

/// Abbey counts per seat in `country`, from the view's abbey list.
pub fn abbeys_in(view: &View, country: Country) -> Vec<u8> {
    let mut counts = vec![0u8; usize::from(view.players)];
    for a in view.abbeys.iter().filter(|a| a.country == country) {
        counts[a.seat.index()] += 1;
    }
    counts
}

/// The reference final result: per-seat (abbeys, alliances, chains, total) and winners.
pub struct Reference {
    pub abbeys: Vec<i32>,
    pub alliances: Vec<i32>,
    pub chains: Vec<i32>,
    pub totals: Vec<i32>,
    pub winners: Vec<Seat>,
}

/// Recomputes the final scoring from a finished game's view and the interim points.
pub fn reference(board: &Board, view: &View, interim: &[i32]) -> Reference {
    let n = usize::from(view.players);
    let mut abbeys = vec![0; n];
    for c in Country::ALL {
        for (s, p) in abbey_points(&abbeys_in(view, c)).into_iter().enumerate() {
            abbeys[s] += p;
        }
    }
    let seal = |c: Country| view.seals.iter().find(|s| s.country == c).unwrap().counsellors.clone();
    let mut alliances = vec![0; n];
    for a in &board.alliances {
        for (s, p) in alliance_points(&seal(a.countries[0]), &seal(a.countries[1])).into_iter().enumerate() {
            alliances[s] += p;
        }
    }
    let chains: Vec<i32> = Seat::all(n)
        .map(|seat| {
            let (v, r) = abbey_graph(board, view, seat);
            chain_points(&v, &r)
        })
        .collect();
    let totals: Vec<i32> = (0..n).map(|s| interim[s] + abbeys[s] + alliances[s] + chains[s]).collect();
    let best = *totals.iter().max().unwrap();
    let unused = |s: usize| u32::from(view.seats[s].abbeys_left) + u32::from(view.seats[s].counsellors_left);
    let tied: Vec<usize> = (0..n).filter(|&s| totals[s] == best).collect();
    let most = tied.iter().map(|&s| unused(s)).max().unwrap();
    let winners = tied.into_iter().filter(|&s| unused(s) == most).map(|s| Seat(s as u8)).collect();
    Reference { abbeys, alliances, chains, totals, winners }
}
