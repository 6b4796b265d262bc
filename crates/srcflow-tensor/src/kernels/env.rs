//! Left-to-right pass: the next sketched environment C_j.

use super::order::cheapest;
use super::orders::{Decision, OrderChoice, OrderMemo};
use super::{absorb, legs};
use crate::error::{Error, Result};
use crate::tensor::{Labeled, Leg, Meter, Operand, Shape};

/// `C_j[Col, Right..] = Σ C_{j-1}[Col, Left..] · cores_j · Ω_j[Up, Down, Col]`, in the cheapest
/// of three orders for these shapes (`Order`), chosen or followed as `choice` says.
/// `c_prev` has legs [`legs::env_in`], `omega` [`legs::omega`]; the result has [`legs::env_out`].
pub fn env<O: Operand>(
    c_prev: &O,
    cores: &[O],
    omega: &O,
    choice: &mut OrderChoice,
    meter: &mut Meter,
) -> Result<O> {
    let c = order(c_prev, cores, omega, choice)?.contract(c_prev, cores, omega, choice, meter)?;
    c.arrange(&legs::env_out(cores.len()), meter)
}

/// The orders the environment kernel can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Order {
    /// Ω folded into the top core first (a small GEMM); the environment then meets that
    /// weighted core in one batched contraction over the sketch columns. On MPO·MPS this halves
    /// the work of the top layer and never builds the `Up`-wide intermediate; but the weighted
    /// core holds sketch columns × the top layer's bonds², too much where the top layer's bond
    /// is large.
    WeightedTop,
    /// Every layer absorbed into the environment first, then Ω contracted over `Up` and `Down`
    /// column by column: every intermediate scales with the environment, none with a layer's
    /// bonds squared.
    SketchLast,
    /// Ω folded into the bottom core first, the other layers absorbed into the environment,
    /// then the two meet over the sketch columns: where the bottom layer's bond is small and
    /// the top's large (MPO·MPO with the wide operator on top), this skips the pass of the
    /// bottom core over the whole absorbed environment that [`Order::SketchLast`] makes.
    WeightedBottom,
}

impl Order {
    /// Every order: the rule of `order::cheapest` picks one of the first two (the first, whose
    /// layouts MPO·MPS's kernels are tuned for, unless the second saves enough), and the third
    /// replaces it where it does fewer flops in no more memory.
    const ALL: [Order; 3] = [Order::WeightedTop, Order::SketchLast, Order::WeightedBottom];

    /// Its place in [`Order::ALL`] (how a task keeps it).
    fn index(self) -> usize {
        Order::ALL
            .iter()
            .position(|&order| order == self)
            .expect("every order is in ALL")
    }

    /// The environment contracted in this order.
    fn contract<O: Operand>(
        self,
        c_prev: &O,
        cores: &[O],
        omega: &O,
        choice: &mut OrderChoice,
        m: &mut Meter,
    ) -> Result<O> {
        match self {
            Order::WeightedTop => {
                let (top, lower) = cores.split_first().expect("at least one layer");
                weighted(c_prev, top, lower, omega, choice, m)
            }
            Order::SketchLast => absorb(c_prev, cores, choice, m)?.contract(omega, &[Leg::Col], m),
            Order::WeightedBottom => {
                let (bottom, upper) = cores.split_last().expect("at least one layer");
                weighted(c_prev, bottom, upper, omega, choice, m)
            }
        }
    }
}

/// Ω folded into `core` (over the physical leg they share), `others` absorbed into the
/// environment, then the two contracted over the sketch columns.
fn weighted<O: Operand>(
    c_prev: &O,
    core: &O,
    others: &[O],
    omega: &O,
    choice: &mut OrderChoice,
    m: &mut Meter,
) -> Result<O> {
    let weighted_core = omega.contract(core, &[], m)?;
    let x = if others.is_empty() {
        c_prev.clone()
    } else {
        absorb(c_prev, others, choice, m)?
    };
    x.contract(&weighted_core, &[Leg::Col], m)
}

/// The cheapest order for these shapes by the rule of [`Order::ALL`] (found by dry runs on
/// the shapes when the graph is built; followed when the task runs).
fn order<O: Operand>(
    c_prev: &O,
    cores: &[O],
    omega: &O,
    choice: &mut OrderChoice,
) -> Result<Order> {
    let operands: Vec<&O> = std::iter::once(c_prev)
        .chain(cores)
        .chain([omega])
        .collect();
    let picked = choice.next(Decision::Env, &operands, |shapes, memo| {
        vec![search(shapes, memo).index()]
    })?;
    match picked[..] {
        [index] if index < Order::ALL.len() => Ok(Order::ALL[index]),
        _ => Err(Error::Invalid(format!(
            "the environment kernel has {} orders, not {picked:?}",
            Order::ALL.len()
        ))),
    }
}

/// The order [`Order::ALL`]'s rule picks for `shapes` (the environment, the cores, Ω), from a
/// dry run of each.
fn search(shapes: &[Labeled<Shape>], memo: &mut OrderMemo) -> Order {
    let (c_prev, rest) = shapes.split_first().expect("an environment");
    let (omega, cores) = rest.split_last().expect("a sketch");
    let costs: Vec<Meter> = Order::ALL
        .iter()
        .map(|order| {
            let mut meter = Meter::default();
            let mut dry_run = OrderChoice::choose(memo);
            order
                .contract(c_prev, cores, omega, &mut dry_run, &mut meter)
                .expect("shapes always contract");
            meter
        })
        .collect();
    let picked = cheapest(&costs[..2]);
    let bottom = &costs[2];
    if bottom.flops < costs[picked].flops && bottom.peak_bytes <= costs[picked].peak_bytes {
        Order::WeightedBottom
    } else {
        Order::ALL[picked]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order chosen for these shapes in a build of its own.
    fn chosen(c_prev: &Labeled<Shape>, cores: &[Labeled<Shape>], omega: &Labeled<Shape>) -> Order {
        let mut memo = OrderMemo::default();
        order(c_prev, cores, omega, &mut OrderChoice::choose(&mut memo)).unwrap()
    }

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
    fn a_wide_top_layer_weights_the_bottom_core_and_mpo_mps_the_top_core() {
        let (c_prev, cores) = site(256, 4, 2);
        let top_wide = chosen(&c_prev, &cores, &omega(2));
        assert_eq!(top_wide, Order::WeightedBottom, "MPO·MPO, bond 256 on top");
        let (c_prev, cores) = site(4, 256, 2);
        let bottom_wide = chosen(&c_prev, &cores, &omega(2));
        assert_eq!(bottom_wide, Order::WeightedTop, "MPO·MPO, bond 256 below");
        let (c_prev, cores) = site(16, 128, 1);
        assert_eq!(
            chosen(&c_prev, &cores, &omega(1)),
            Order::WeightedTop,
            "MPO·MPS"
        );
    }

    #[test]
    fn a_wide_top_layer_over_a_narrow_mps_takes_omega_last() {
        // The shapes of tests/backend_conformance.rs's wide operator, which holds each order to
        // the plain contraction on every backend.
        let (c_prev, cores) = site(12, 2, 2);
        assert_eq!(chosen(&c_prev, &cores, &omega(2)), Order::WeightedBottom);
        let (c_prev, cores) = site(12, 2, 1);
        assert_eq!(chosen(&c_prev, &cores, &omega(1)), Order::SketchLast);
    }
}
