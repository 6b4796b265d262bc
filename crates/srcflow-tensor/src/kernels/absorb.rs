//! Absorb one site of every layer into a left environment, in the cheapest order.

use super::order::fold;
use super::orders::OrderChoice;
use crate::error::Result;
use crate::tensor::{Meter, Operand};

/// `x[Col, Right.., Up, Down] = Σ C[Col, Left..] · cores` — the shared first half of env and
/// sketch. C comes first, so every intermediate scales with the sketch columns a batch holds;
/// the layers go in the order of fewest flops (`order::fold`); among equals, bottom first, so the
/// biggest GEMM (environment times ket core) needs no permutation of the environment.
pub(crate) fn absorb<O: Operand>(
    c_prev: &O,
    cores: &[O],
    choice: &mut OrderChoice,
    meter: &mut Meter,
) -> Result<O> {
    let bottom_first: Vec<&O> = cores.iter().rev().collect();
    fold(c_prev, &bottom_first, choice, meter)
}
