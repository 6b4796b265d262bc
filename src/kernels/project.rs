//! Right-to-left pass: project the remaining train onto the new basis, S_j.

use super::contract_into::contract_into;
use super::legs;
use super::order::fold_into;
use crate::error::Result;
use crate::tensor::{Meter, Operand};

/// `S_j[Left.., OutLeft] = Σ conj(η_j)[OutLeft, Up, Down, OutRight] · cores_j · S_{j+1}[Right.., OutRight]`.
///
/// `eta_conj` is the conjugated basis with legs [`legs::basis`]. S meets the basis first, so
/// that every intermediate scales with the basis rows a batch holds; the layers then go in the
/// cheapest order (`order::fold_into`; among equals, top first), the last contraction straight
/// into the output's order.
pub fn project<O: Operand>(eta_conj: &O, cores: &[O], s_next: &O, meter: &mut Meter) -> Result<O> {
    let z = s_next.contract(eta_conj, &[], meter)?;
    let top_first: Vec<&O> = cores.iter().collect();
    fold_into(&z, &top_first, &legs::proj_out(cores.len()), meter)
}

/// `S_j[Left.., OutLeft] = Σ conj(η_j)[OutLeft, Up, Down, OutRight] · W_j[Left.., Up, Down,
/// OutRight]`, from the folded site ([`super::fold_right`]).
pub fn project_folded<O: Operand>(eta_conj: &O, folded: &O, meter: &mut Meter) -> Result<O> {
    let order = legs::proj_out(num_left(folded));
    contract_into(folded, eta_conj, &[], &order, meter)
}

/// Number of `Left` legs of an operand (the layers of the stack).
fn num_left<O: Operand>(operand: &O) -> usize {
    operand
        .legs()
        .iter()
        .filter(|leg| matches!(leg, crate::tensor::Leg::Left(_)))
        .count()
}
