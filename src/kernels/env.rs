//! Left-to-right pass: the next sketched environment C_j.

use super::{absorb, legs};
use crate::error::Result;
use crate::tensor::{Leg, Meter, Operand};

/// `C_j[Col, Right..] = Σ C_{j-1}[Col, Left..] · cores_j · Ω_j[Up, Down, Col]`.
///
/// Ω is folded into the top core first (a small GEMM); the environment then meets that weighted
/// core in one batched contraction over the sketch columns, which halves the work of the top
/// layer and never builds the `Up`-wide intermediate.
/// `c_prev` has legs [`legs::env_in`], `omega` [`legs::omega`]; the result has [`legs::env_out`].
pub fn env<O: Operand>(c_prev: &O, cores: &[O], omega: &O, meter: &mut Meter) -> Result<O> {
    let (top, lower) = cores.split_first().expect("at least one layer");
    let weighted_top = omega.contract(top, &[], meter)?;
    let x = if lower.is_empty() {
        c_prev.clone()
    } else {
        absorb(c_prev, lower, meter)?
    };
    let c = x.contract(&weighted_top, &[Leg::Col], meter)?;
    c.arrange(&legs::env_out(cores.len()), meter)
}
