//! Right-to-left pass: project the remaining train onto the new basis, S_j.

use super::legs;
use crate::tensor::{Meter, Operand};

/// `S_j[Left.., OutLeft] = Σ conj(η_j)[OutLeft, Up, Down, OutRight] · cores_j · S_{j+1}[Right.., OutRight]`.
///
/// `eta_conj` is the conjugated basis with legs [`legs::basis`]; layers are absorbed top first.
pub fn project<O: Operand>(eta_conj: &O, cores: &[O], s_next: &O, meter: &mut Meter) -> O {
    let z = s_next.contract(eta_conj, &[], meter);
    let z = cores.iter().fold(z, |z, core| z.contract(core, &[], meter));
    z.arrange(&legs::proj_out(cores.len()), meter)
}
