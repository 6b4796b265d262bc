//! Leg names of the operands each kernel expects.

use crate::tensor::Leg;

/// Legs of layer `i`'s core in a stack of `k` layers: `[Left(i), Right(i), up, down]`.
pub fn core(i: usize, k: usize) -> Vec<Leg> {
    let up = if i == 0 { Leg::Up } else { Leg::Join(i - 1) };
    let down = if i + 1 == k { Leg::Down } else { Leg::Join(i) };
    vec![Leg::Left(i), Leg::Right(i), up, down]
}

/// Legs of an environment entering a site: `[Col, Left(0..k)]`.
pub fn env_in(k: usize) -> Vec<Leg> {
    std::iter::once(Leg::Col)
        .chain((0..k).map(Leg::Left))
        .collect()
}

/// Legs of an environment leaving a site: `[Col, Right(0..k)]`.
pub fn env_out(k: usize) -> Vec<Leg> {
    std::iter::once(Leg::Col)
        .chain((0..k).map(Leg::Right))
        .collect()
}

/// Legs of the test matrix Ω of a site: `[Up, Down, Col]`.
pub fn omega() -> Vec<Leg> {
    vec![Leg::Up, Leg::Down, Leg::Col]
}

/// Legs of a projected right environment S entering a site: `[OutRight, Right(0..k)]`.
pub fn proj_in(k: usize) -> Vec<Leg> {
    std::iter::once(Leg::OutRight)
        .chain((0..k).map(Leg::Right))
        .collect()
}

/// Legs of a projected right environment S leaving a site: `[OutLeft, Left(0..k)]`.
pub fn proj_out(k: usize) -> Vec<Leg> {
    std::iter::once(Leg::OutLeft)
        .chain((0..k).map(Leg::Left))
        .collect()
}

/// Legs of a site folded into S from the right, W: `[Left(0..k), Up, Down, OutRight]`.
pub fn folded(k: usize) -> Vec<Leg> {
    (0..k)
        .map(Leg::Left)
        .chain([Leg::Up, Leg::Down, Leg::OutRight])
        .collect()
}

/// Legs of a sketch block Y: `[Col, Up, Down, OutRight]`.
pub fn sketch() -> Vec<Leg> {
    vec![Leg::Col, Leg::Up, Leg::Down, Leg::OutRight]
}

/// Legs of an output core as the sweep makes it: `[OutLeft, Up, Down, OutRight]`.
pub fn basis() -> Vec<Leg> {
    vec![Leg::OutLeft, Leg::Up, Leg::Down, Leg::OutRight]
}
