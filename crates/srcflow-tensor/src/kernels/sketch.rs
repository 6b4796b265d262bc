//! Right-to-left pass: the sketch Y_j of a site, and the first site's core.

use super::contract_into::contract_into;
use super::orders::OrderChoice;
use super::{absorb, legs};
use crate::error::Result;
use crate::tensor::{Meter, Operand};

/// `Y_j[Col, Up, Down, OutRight] = Σ C_{j-1}[Col, Left..] · cores_j · S_{j+1}[OutRight, Right..]`,
/// the layers absorbed in the order `choice` chooses or follows.
pub fn sketch<O: Operand>(
    c_prev: &O,
    cores: &[O],
    s_next: &O,
    choice: &mut OrderChoice,
    meter: &mut Meter,
) -> Result<O> {
    let x = absorb(c_prev, cores, choice, meter)?;
    contract_into(&x, s_next, &[], &legs::sketch(), meter)
}

/// `Y_j[Col, Up, Down, OutRight] = Σ C_{j-1}[Col, Left..] · W_j[Left.., Up, Down, OutRight]`,
/// from the folded site ([`super::fold_right`]).
pub fn sketch_folded<O: Operand>(c_prev: &O, folded: &O, meter: &mut Meter) -> Result<O> {
    contract_into(c_prev, folded, &[], &legs::sketch(), meter)
}
