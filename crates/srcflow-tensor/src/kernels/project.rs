//! Right-to-left pass: project the remaining train onto the new basis, S_j.

use super::legs;
use super::order::fold_into;
use super::orders::OrderChoice;
use crate::error::Result;
use crate::tensor::{Meter, Operand};

/// `S_j[OutLeft, Left..] = Σ conj(η_j)[OutLeft, Up, Down, OutRight] · cores_j · S_{j+1}[OutRight, Right..]`.
///
/// `eta_conj` is the conjugated basis with legs [`legs::basis`]. The basis meets S first, so
/// that every intermediate scales with the basis rows a batch holds, as `η̄ · S`, which reads
/// both in the order they are stored (S's `OutRight` leads). The layers then go in the
/// cheapest order (`order::fold_into`; among equals, top first), the last contraction straight
/// into the output's order (chosen or followed as `choice` says). (The CUDA backend conjugates a copy of the basis block first, as
/// cuBLAS conjugates only an operand it transposes: a copy the size of η, small beside S.)
pub fn project<O: Operand>(
    eta_conj: &O,
    cores: &[O],
    s_next: &O,
    choice: &mut OrderChoice,
    meter: &mut Meter,
) -> Result<O> {
    let z = eta_conj.contract(s_next, &[], meter)?;
    let top_first: Vec<&O> = cores.iter().collect();
    fold_into(&z, &top_first, &legs::proj_out(cores.len()), choice, meter)
}

/// `S_j[OutLeft, Left..] = Σ conj(η_j)[OutLeft, Up, Down, OutRight] · W_j[Left.., Up, Down,
/// OutRight]`, from the folded site ([`super::fold_right`]).
///
/// Computed as `W · η̄ᵀ` and then laid out as S, though `η̄ · W` would land in S's order with
/// no copy: faer runs the tall product (W's `Left..` rows, thousands) faster than the wide one
/// (η's rows, hundreds) by more than the copy of the result costs (`cargo bench --bench
/// kernel_shapes`: 4096 × 256 × 512 against 256 × 4096 × 512).
pub fn project_folded<O: Operand>(eta_conj: &O, folded: &O, meter: &mut Meter) -> Result<O> {
    let order = legs::proj_out(num_left(folded));
    folded
        .contract(eta_conj, &[], meter)?
        .arrange(&order, meter)
}

/// Number of `Left` legs of an operand (the layers of the stack).
fn num_left<O: Operand>(operand: &O) -> usize {
    operand
        .legs()
        .iter()
        .filter(|leg| matches!(leg, crate::tensor::Leg::Left(_)))
        .count()
}
