//! Absorb one site of every layer into a left environment, bottom layer first.

use crate::tensor::{Meter, Operand};

/// `x[Col, Right.., Up, Down] = Σ C[Col, Left..] · cores` — the shared first half of env and sketch.
///
/// The bottom layer goes first, so the biggest GEMM (environment times ket core) needs no
/// permutation of the environment.
pub fn absorb<O: Operand>(c_prev: &O, cores: &[O], meter: &mut Meter) -> O {
    let (bottom, rest) = cores.split_last().expect("at least one layer");
    rest.iter()
        .rev()
        .fold(c_prev.contract(bottom, &[], meter), |x, core| {
            x.contract(core, &[], meter)
        })
}
