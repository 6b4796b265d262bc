//! The order in which a kernel folds its operands into one tensor, chosen by dry runs on
//! shapes: with a layer of large bond in a deep stack (the reference run's M of bond 4000 among
//! bonds of 4), absorbing it first does fewer flops than absorbing the stack bottom first (the
//! flops of the order chosen: `tools/reference_flops.sh`).
//! The same dry runs and rule ([`cheapest`]) choose the environment kernel's order.

use super::contract_into::contract_into;
use super::orders::{Decision, OrderChoice};
use crate::error::{Error, Result};
use crate::tensor::{Labeled, Leg, Meter, Operand, Shape};

/// Folds `others` into `start` one contraction at a time (summing the legs they share), in the
/// order of fewest flops among those whose peak stays within twice the lowest peak — when it
/// saves at least a fifth of the given order's flops, or when the given order's own peak is
/// more than twice the lowest; otherwise in the given order, whose
/// layouts the kernels are tuned for (a reorder saving a few percent of flops cost more in
/// permutations on MPO·MPS). Every order of up to [`SEARCHED`] operands is tried; more keep
/// their given order. The order is chosen or followed as `choice` says.
pub fn fold<O: Operand>(
    start: &O,
    others: &[&O],
    choice: &mut OrderChoice,
    meter: &mut Meter,
) -> Result<O> {
    let order = cheapest_order(start, others, choice)?;
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
    choice: &mut OrderChoice,
    meter: &mut Meter,
) -> Result<O> {
    let sequence = cheapest_order(start, others, choice)?;
    let (&last, first) = sequence.split_last().expect("something to fold in");
    let x = first
        .iter()
        .try_fold(start.clone(), |x, &i| x.contract(others[i], &[], meter))?;
    contract_into(&x, others[last], &[], order, meter)
}

/// Most operands whose orders are all tried (6! = 720 dry runs of a few contractions each).
const SEARCHED: usize = 6;

/// The best order for these shapes (chosen on them, or followed as the task's build chose it).
fn cheapest_order<O: Operand>(
    start: &O,
    others: &[&O],
    choice: &mut OrderChoice,
) -> Result<Vec<usize>> {
    if others.len() > SEARCHED {
        return Ok((0..others.len()).collect());
    }
    let operands: Vec<&O> = std::iter::once(start)
        .chain(others.iter().copied())
        .collect();
    let order = choice.next(Decision::Fold, &operands, |shapes, _| {
        let (start, others) = shapes.split_first().expect("a start");
        search(start, others)
    })?;
    let mut sorted = order.clone();
    sorted.sort_unstable();
    if sorted.into_iter().ne(0..others.len()) {
        return Err(Error::Invalid(format!(
            "contraction order {order:?} is not an order of {} operands: the task was built \
             for other inputs",
            others.len()
        )));
    }
    Ok(order)
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
