//! The order in which a kernel folds its operands into one tensor, chosen by dry runs on
//! shapes: with a layer of large bond in a deep stack (the reference run's M of bond 4000 among
//! bonds of 4), absorbing it first does fewer flops than absorbing the stack bottom first (the
//! flops of the order chosen: `tools/reference_flops.sh`).
//! The same dry runs and rule ([`cheapest`]) choose the environment kernel's order.

use super::contract_into::contract_into;
use super::search_shape::proxy;
use crate::error::Result;
use crate::tensor::{Labeled, Leg, Meter, Operand, Shape};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Folds `others` into `start` one contraction at a time (summing the legs they share), in the
/// order of fewest flops among those whose peak stays within twice the lowest peak — when it
/// saves at least a fifth of the given order's flops, or when the given order's own peak is
/// more than twice the lowest; otherwise in the given order, whose
/// layouts the kernels are tuned for (a reorder saving a few percent of flops cost more in
/// permutations on MPO·MPS). Every order of up to [`SEARCHED`] operands is tried; more keep
/// their given order.
pub fn fold<O: Operand>(start: &O, others: &[&O], meter: &mut Meter) -> Result<O> {
    let order = cheapest_order(start, others);
    order
        .iter()
        .try_fold(start.clone(), |x, &i| x.contract(others[i], &[], meter))
}

/// [`fold`], with the last contraction's result in `order` (computed as the product that
/// copies fewer elements to get there; [`contract_into`]). `others` must not be empty.
pub(crate) fn fold_into<O: Operand>(
    start: &O,
    others: &[&O],
    order: &[Leg],
    meter: &mut Meter,
) -> Result<O> {
    let sequence = cheapest_order(start, others);
    let (&last, first) = sequence.split_last().expect("something to fold in");
    let x = first
        .iter()
        .try_fold(start.clone(), |x, &i| x.contract(others[i], &[], meter))?;
    contract_into(&x, others[last], &[], order, meter)
}

/// Most operands whose orders are all tried (6! = 720 dry runs of a few contractions each).
const SEARCHED: usize = 6;

/// Shapes of the operands of one fold: the key of a remembered order.
pub(super) type Key = Vec<(Vec<Leg>, Vec<usize>)>;

/// The best order for these shapes, computed once and remembered (the same shapes recur at
/// every site and batch of a sweep).
fn cheapest_order<O: Operand>(start: &O, others: &[&O]) -> Vec<usize> {
    if others.len() > SEARCHED {
        return (0..others.len()).collect();
    }
    let start = proxy(start);
    let others: Vec<Labeled<Shape>> = others.iter().map(|o| proxy(*o)).collect();
    static REMEMBERED: OnceLock<Mutex<HashMap<Key, Vec<usize>>>> = OnceLock::new();
    let key = key(&[std::slice::from_ref(&start), &others].concat());
    remembered(&REMEMBERED, key, || search(&start, &others))
}

/// The key of the shapes `operands` in a table of remembered choices.
pub(super) fn key(operands: &[Labeled<Shape>]) -> Key {
    operands
        .iter()
        .map(|o| (o.legs.clone(), o.value.clone()))
        .collect()
}

/// The choice `table` holds for `key`, or the one `choose` makes, then remembered.
pub(super) fn remembered<T: Clone>(
    table: &OnceLock<Mutex<HashMap<Key, T>>>,
    key: Key,
    choose: impl FnOnce() -> T,
) -> T {
    let table = table.get_or_init(Default::default);
    let known = table
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&key)
        .cloned();
    known.unwrap_or_else(|| {
        let choice = choose();
        let mut table = table.lock().unwrap_or_else(|e| e.into_inner());
        table.insert(key, choice.clone());
        choice
    })
}

/// Tries every order; keeps the one [`cheapest`] picks.
fn search(start: &Labeled<Shape>, others: &[Labeled<Shape>]) -> Vec<usize> {
    let orders = permutations(others.len());
    let costs: Vec<Meter> = orders
        .iter()
        .map(|order| {
            let mut meter = Meter::default();
            order.iter().fold(start.clone(), |x, &i| {
                x.contract(&others[i], &[], &mut meter)
                    .expect("shapes always contract")
            });
            meter
        })
        .collect();
    orders[cheapest(&costs)].clone()
}

/// Of plans that cost `costs` (the given plan first), the one of fewest flops whose peak is at
/// most twice the lowest, if it saves a fifth of the given plan's flops or the given plan's
/// peak is more than twice the lowest; otherwise the given plan (index 0).
pub(super) fn cheapest(costs: &[Meter]) -> usize {
    let lowest_peak = costs.iter().map(|m| m.peak_bytes).min().unwrap_or(0);
    let within = |m: &Meter| m.peak_bytes <= lowest_peak.saturating_mul(2);
    let best = (0..costs.len())
        .filter(|&i| within(&costs[i]))
        .min_by(|&a, &b| costs[a].flops.total_cmp(&costs[b].flops))
        .unwrap_or(0);
    if !within(&costs[0]) || costs[best].flops <= 0.8 * costs[0].flops {
        best
    } else {
        0
    }
}

/// Every order of `0..n`, the given order first (so ties keep it).
fn permutations(n: usize) -> Vec<Vec<usize>> {
    let mut all = vec![Vec::new()];
    for item in 0..n {
        all = all
            .into_iter()
            .flat_map(|order: Vec<usize>| {
                (0..=order.len()).rev().map(move |at| {
                    let mut longer = order.clone();
                    longer.insert(at, item);
                    longer
                })
            })
            .collect();
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_order_is_listed_once_the_given_one_first() {
        let all = permutations(4);
        assert_eq!(all.len(), 24);
        assert_eq!(all[0], vec![0, 1, 2, 3]);
        let mut sorted = all.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 24);
    }

    #[test]
    fn a_large_bond_is_absorbed_first() {
        // C[Col, L0, L1] with two layers: layer 0 has bond 100, layer 1 bond 2.
        let core = |i: usize, bond: usize| Labeled {
            legs: crate::kernels::legs::core(i, 2),
            value: vec![bond, bond, 2, 2],
        };
        let c = Labeled {
            legs: crate::kernels::legs::env_in(2),
            value: vec![8, 100, 2],
        };
        let (big, small) = (core(0, 100), core(1, 2));
        let order = search(&c, &[small, big]);
        assert_eq!(order, vec![1, 0]);
    }
}
