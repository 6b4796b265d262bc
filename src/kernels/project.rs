//! Right-to-left pass: project the remaining train onto the new basis, S_j.

use super::legs;
use super::order::fold;
use crate::tensor::{Meter, Operand};

/// `S_j[Left.., OutLeft] = Σ conj(η_j)[OutLeft, Up, Down, OutRight] · cores_j · S_{j+1}[Right.., OutRight]`.
///
/// `eta_conj` is the conjugated basis with legs [`legs::basis`]. S meets the basis first, so
/// that every intermediate scales with the basis rows a batch holds; the layers then go in the
/// cheapest order ([`fold`]; among equals, top first).
pub fn project<O: Operand>(eta_conj: &O, cores: &[O], s_next: &O, meter: &mut Meter) -> O {
    let z = s_next.contract(eta_conj, &[], meter);
    let top_first: Vec<&O> = cores.iter().collect();
    let z = fold(&z, &top_first, meter);
    z.arrange(&legs::proj_out(cores.len()), meter)
}
