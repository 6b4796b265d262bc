//! Left-to-right pass: the next sketched environment C_j.

use super::order::{cheapest, key, proxy, remembered};
use super::{absorb, legs};
use crate::error::Result;
use crate::tensor::{Labeled, Leg, Meter, Operand, Shape};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// `C_j[Col, Right..] = Σ C_{j-1}[Col, Left..] · cores_j · Ω_j[Up, Down, Col]`, in the cheaper
/// of two orders for these shapes ([`weighted_top_first`] unless [`sketch_last`] is cheaper by
/// the rule of `order::cheapest`).
/// `c_prev` has legs [`legs::env_in`], `omega` [`legs::omega`]; the result has [`legs::env_out`].
pub fn env<O: Operand>(c_prev: &O, cores: &[O], omega: &O, meter: &mut Meter) -> Result<O> {
    let c = if sketches_last(c_prev, cores, omega) {
        sketch_last(c_prev, cores, omega, meter)?
    } else {
        weighted_top_first(c_prev, cores, omega, meter)?
    };
    c.arrange(&legs::env_out(cores.len()), meter)
}

/// Ω folded into the top core first (a small GEMM); the environment then meets that weighted
/// core in one batched contraction over the sketch columns. On MPO·MPS this halves the work of
/// the top layer and never builds the `Up`-wide intermediate; but the weighted core holds
/// sketch columns × the top layer's bonds², too much where the top layer's bond is large.
fn weighted_top_first<O: Operand>(c_prev: &O, cores: &[O], omega: &O, m: &mut Meter) -> Result<O> {
    let (top, lower) = cores.split_first().expect("at least one layer");
    let weighted_top = omega.contract(top, &[], m)?;
    let x = if lower.is_empty() {
        c_prev.clone()
    } else {
        absorb(c_prev, lower, m)?
    };
    x.contract(&weighted_top, &[Leg::Col], m)
}

/// Every layer absorbed into the environment first, then Ω contracted over `Up` and `Down`
/// column by column: every intermediate scales with the environment, none with the top
/// layer's bonds squared.
fn sketch_last<O: Operand>(c_prev: &O, cores: &[O], omega: &O, m: &mut Meter) -> Result<O> {
    absorb(c_prev, cores, m)?.contract(omega, &[Leg::Col], m)
}

/// True when [`sketch_last`] is the cheaper order for these shapes (found by dry runs on the
/// shapes, once per set of shapes).
fn sketches_last<O: Operand>(c_prev: &O, cores: &[O], omega: &O) -> bool {
    let shapes: Vec<Labeled<Shape>> = std::iter::once(c_prev)
        .chain(cores)
        .chain([omega])
        .map(proxy)
        .collect();
    static REMEMBERED: OnceLock<Mutex<HashMap<super::order::Key, bool>>> = OnceLock::new();
    remembered(&REMEMBERED, key(&shapes), || {
        let (c_prev, rest) = shapes.split_first().expect("an environment");
        let (omega, cores) = rest.split_last().expect("a sketch");
        let cost = |plan: fn(&_, &[_], &_, &mut Meter) -> Result<Labeled<Shape>>| {
            let mut meter = Meter::default();
            plan(c_prev, cores, omega, &mut meter).expect("shapes always contract");
            meter
        };
        cheapest(&[cost(weighted_top_first), cost(sketch_last)]) == 1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The operands of an inner site's env over a top MPO of bond `top` and a bottom layer of
    /// bond `bottom` with `down` outputs per site (1: an MPS), 2 physical legs, 256 columns.
    fn site(top: usize, bottom: usize, down: usize) -> (Labeled<Shape>, Vec<Labeled<Shape>>) {
        let labeled = |legs: Vec<Leg>, value: Shape| Labeled { legs, value };
        let c_prev = labeled(legs::env_in(2), vec![256, top, bottom]);
        let cores = vec![
            labeled(legs::core(0, 2), vec![top, top, 2, 2]),
            labeled(legs::core(1, 2), vec![bottom, bottom, 2, down]),
        ];
        (c_prev, cores)
    }

    fn omega(down: usize) -> Labeled<Shape> {
        Labeled {
            legs: legs::omega(),
            value: vec![2, down, 256],
        }
    }

    #[test]
    fn a_wide_top_layer_takes_omega_last_and_mpo_mps_keeps_the_weighted_top_core() {
        let (c_prev, cores) = site(256, 4, 2);
        assert!(
            sketches_last(&c_prev, &cores, &omega(2)),
            "MPO·MPO, bond 256 on top"
        );
        let (c_prev, cores) = site(12, 2, 2);
        let conformance = "the shapes of tests/backend_conformance.rs's wide operator";
        assert!(sketches_last(&c_prev, &cores, &omega(2)), "{conformance}");
        let (c_prev, cores) = site(16, 128, 1);
        assert!(!sketches_last(&c_prev, &cores, &omega(1)), "MPO·MPS");
    }
}
