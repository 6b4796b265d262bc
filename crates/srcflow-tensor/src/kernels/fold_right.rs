//! Right-to-left pass: the cores of a site folded into S_{j+1}, shared by its sketch and its
//! projection.

use super::legs;
use super::order::fold_into;
use super::orders::OrderChoice;
use crate::error::Result;
use crate::tensor::{Meter, Operand};

/// `W_j[Left.., Up, Down, OutRight] = Σ cores_j · S_{j+1}[OutRight, Right..]`.
///
/// The sketch is then `C_{j-1} · W_j` and the projection `conj(η_j) · W_j`, one GEMM each:
/// where W is no larger than a few copies of S this does the work of the layers once per site
/// instead of once in each kernel. The layers go in the order `choice` chooses or follows.
pub fn fold_right<O: Operand>(
    cores: &[O],
    s_next: &O,
    choice: &mut OrderChoice,
    meter: &mut Meter,
) -> Result<O> {
    let top_first: Vec<&O> = cores.iter().collect();
    fold_into(
        s_next,
        &top_first,
        &legs::folded(cores.len()),
        choice,
        meter,
    )
}
