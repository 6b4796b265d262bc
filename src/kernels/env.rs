//! Left-to-right pass: the next sketched environment C_j.

use super::{absorb, legs};
use crate::tensor::{Leg, Meter, Operand};

/// `C_j[Col, Right..] = Σ C_{j-1}[Col, Left..] · cores_j · Ω_j[Up, Down, Col]`.
///
/// `c_prev` has legs [`legs::env_in`], `omega` [`legs::omega`]; the result has [`legs::env_out`].
pub fn env<O: Operand>(c_prev: &O, cores: &[O], omega: &O, meter: &mut Meter) -> O {
    let x = absorb(c_prev, cores, meter);
    let c = x.contract(omega, &[Leg::Col], meter);
    c.arrange(&legs::env_out(cores.len()), meter)
}
