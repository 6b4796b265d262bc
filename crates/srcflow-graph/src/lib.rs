//! srcflow's sweep as data: tensor trains and stacks ([`train`]), the SRC sweep as a graph of
//! tasks ([`graph`]) and the planner that places its values on memory tiers ([`plan`]), with
//! the problems srcflow generates ([`gen`]) and exact reference products ([`ops`]).
//!
//! Built on `srcflow-tensor`; runs nothing (`srcflow-sched` does).

#![warn(missing_docs)]

pub mod gen;
pub mod graph;
pub mod ops;
pub mod plan;
pub mod test_matrix;
pub mod train;

pub use graph::SweepGraph;
pub use train::{Kind, Layer, Stack, Train};
