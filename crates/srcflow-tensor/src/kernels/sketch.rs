//! Right-to-left pass: the sketch Y_j of a site, and the first site's core.

use super::contract_into::contract_into;
use super::{absorb, legs};
use crate::error::Result;
use crate::tensor::{Meter, Operand};

/// `Y_j[Col, Up, Down, OutRight] = Σ C_{j-1}[Col, Left..] · cores_j · S_{j+1}[OutRight, Right..]`.
pub fn sketch<O: Operand>(c_prev: &O, cores: &[O], s_next: &O, meter: &mut Meter) -> Result<O> {
    let x = absorb(c_prev, cores, meter)?;
    contract_into(&x, s_next, &[], &legs::sketch(), meter)
}

/// `Y_j[Col, Up, Down, OutRight] = Σ C_{j-1}[Col, Left..] · W_j[Left.., Up, Down, OutRight]`,
/// from the folded site ([`super::fold_right`]).
pub fn sketch_folded<O: Operand>(c_prev: &O, folded: &O, meter: &mut Meter) -> Result<O> {
    contract_into(c_prev, folded, &[], &legs::sketch(), meter)
}
