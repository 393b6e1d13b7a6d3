//! Information-set Monte Carlo tree search (single observer).
//!
//! One tree over the searching seat's information. Each iteration draws a
//! full state from the info ([`ludo_engine::InfoSet::determinize`]) and walks the tree
//! with it: at each node only the moves legal in this determinization are
//! candidates, chosen by UCB1 where each move's exploration term counts the
//! iterations in which it was available (not the parent's visits), as in
//! Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree
//! Search" (2012). A node's moves belong to whichever seat is to move there,
//! and its rewards are that seat's: each seat is assumed to play for
//! itself. A new node is expanded once per iteration, then a random
//! playout of at most `playout_depth` moves is scored by the game's
//! evaluation for every seat.

use std::time::Instant;

use ludo_engine::{DeckRng, Seat};

use crate::{Budget, Playable};

/// Exploration constant of UCB1 (rewards are in 0..=1).
const EXPLORATION: f64 = 0.7;

struct Edge<M> {
    mv: M,
    seat: Seat,
    visits: u32,
    /// Iterations in which this move was legal at its node.
    available: u32,
    /// Sum of the mover's rewards.
    reward: f64,
    child: Option<usize>,
}

struct Node<M> {
    edges: Vec<Edge<M>>,
}

fn below(rng: &mut DeckRng, n: usize) -> usize {
    rng.below(u32::try_from(n).unwrap_or(u32::MAX)) as usize
}

/// The move with the most visits at the root after searching `seat`'s
/// `info` within `budget`; `legal` is the seat's legal moves (two or more).
pub(crate) fn ismcts<E: Playable>(seat: Seat, info: &E::Info, legal: &[E::Move], budget: Budget, rng: &mut DeckRng) -> (E::Move, u32) {
    let started = Instant::now();
    let mut iterations = 0;
    let mut nodes: Vec<Node<E::Move>> = vec![Node { edges: Vec::new() }];
    for iteration in 0..budget.iterations.max(1) {
        if iteration > 0 && budget.time.is_some_and(|limit| started.elapsed() >= limit) {
            break;
        }
        iterations += 1;
        let mut world = E::determinize(info, rng);
        let mut path: Vec<(usize, usize)> = Vec::new();
        let mut node = 0;
        while let Some(&mover) = world.status().to_move().first() {
            let moves = world.legal_moves(mover);
            if moves.is_empty() {
                break;
            }
            // Availability: every legal move here was a candidate.
            let mut untried = Vec::new();
            for mv in &moves {
                match nodes[node].edges.iter_mut().find(|e| e.seat == mover && e.mv == *mv) {
                    Some(edge) => edge.available += 1,
                    None => untried.push(mv.clone()),
                }
            }
            if !untried.is_empty() {
                let mv = untried.swap_remove(below(rng, untried.len()));
                if world.apply(mover, &mv).is_err() {
                    break;
                }
                let child = nodes.len();
                nodes.push(Node { edges: Vec::new() });
                nodes[node].edges.push(Edge { mv, seat: mover, visits: 0, available: 1, reward: 0.0, child: Some(child) });
                path.push((node, nodes[node].edges.len() - 1));
                break;
            }
            let chosen = {
                let edges = &nodes[node].edges;
                let mut best = (f64::NEG_INFINITY, usize::MAX);
                for (i, edge) in edges.iter().enumerate() {
                    if edge.seat != mover || !moves.contains(&edge.mv) {
                        continue;
                    }
                    let visits = f64::from(edge.visits.max(1));
                    let score = edge.reward / visits + EXPLORATION * (f64::from(edge.available.max(1)).ln() / visits).sqrt();
                    if score > best.0 {
                        best = (score, i);
                    }
                }
                best.1
            };
            if chosen == usize::MAX || world.apply(mover, &nodes[node].edges[chosen].mv.clone()).is_err() {
                break;
            }
            path.push((node, chosen));
            match nodes[node].edges[chosen].child {
                Some(next) => node = next,
                None => break,
            }
        }
        // Playout.
        for _ in 0..budget.playout_depth.unwrap_or(E::PLAYOUT_DEPTH) {
            let Some(&mover) = world.status().to_move().first() else { break };
            let moves = world.legal_moves(mover);
            if moves.is_empty() {
                break;
            }
            let mv = &moves[below(rng, moves.len())];
            if world.apply(mover, mv).is_err() {
                break;
            }
        }
        // Each mover's value of where the playout ended, computed once.
        let mut values: Vec<(Seat, f64)> = Vec::new();
        for &(node, edge) in &path {
            let edge = &mut nodes[node].edges[edge];
            let value = match values.iter().find(|(s, _)| *s == edge.seat) {
                Some(&(_, value)) => value,
                None => {
                    let value = world.value(edge.seat);
                    values.push((edge.seat, value));
                    value
                }
            };
            edge.visits += 1;
            edge.reward += value;
        }
    }
    // The most visited of the seat's legal moves at the root; ties and a
    // root never expanded fall back to the first legal move.
    let best = nodes[0]
        .edges
        .iter()
        .filter(|e| e.seat == seat && legal.contains(&e.mv))
        .max_by_key(|e| e.visits)
        .map_or_else(|| legal[0].clone(), |e| e.mv.clone());
    (best, iterations)
}
