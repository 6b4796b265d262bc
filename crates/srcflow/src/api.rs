//! The library's front door: `src`, `apply` and `compress` on in-memory trains.

use crate::engine::{Engine, Options};
use srcflow_graph::train::{Stack, Train};
use srcflow_tensor::error::Result;

/// The compressed product `trains[0] · trains[1] · …` (mathematical order; the last acts first).
pub fn src(trains: &[&Train], options: &Options) -> Result<Train> {
    let stack = Stack::of_trains(trains)?;
    Ok(Engine::new(*options)?.run(&stack)?.output)
}

/// The compressed product `op · x` of an MPO and an MPS or MPO.
pub fn apply(op: &Train, x: &Train, options: &Options) -> Result<Train> {
    src(&[op, x], options)
}

/// `train` compressed to bonds of at most `options.graph.chi_out`.
pub fn compress(train: &Train, options: &Options) -> Result<Train> {
    src(&[train], options)
}
