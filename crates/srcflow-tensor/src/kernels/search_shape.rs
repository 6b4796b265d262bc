//! The shape of an operand as the searches for a kernel's order and a product's orientation
//! see it: its legs, with the batched ones at one proxy size.

use crate::tensor::{Labeled, Leg, Operand, Shape};

/// The size the search gives the batched legs (sketch columns, basis rows), whatever their
/// real size: a half-batch slice then folds in the same order as its whole batch and sums bit
/// for bit the same.
const BATCH_PROXY: usize = 256;

/// The shape of `operand` as the searches see it: the batched legs at [`BATCH_PROXY`].
pub(super) fn proxy<O: Operand>(operand: &O) -> Labeled<Shape> {
    Labeled {
        legs: operand.legs().to_vec(),
        value: operand
            .legs()
            .iter()
            .zip(operand.dims())
            .map(|(leg, &dim)| match leg {
                Leg::Col | Leg::OutLeft => BATCH_PROXY,
                _ => dim,
            })
            .collect(),
    }
}
