//! The simulator's machine model: rates and fixed costs of kernels and lanes, which a sweep
//! graph is replayed on by the same dispatcher, planner, prefetch policies and memory governor
//! as real runs, on a virtual clock (`Engine::simulate` in srcflow, with the engine's
//! `ModelExecutor`). `srcflow simulate` runs it; `srcflow calibrate` measures a model of this
//! machine and refines it from the traces of runs.

mod compute_model;
mod coverage;
mod least_squares;
mod machine;

pub use compute_model::{ComputeModel, Observation, Reach, SeenShapes, KERNELS};
pub use coverage::{coverage, KernelCoverage};
pub use least_squares::NormalEquations;
pub use machine::{MachineModel, ModelTimer, HOST_COPY, IO_WRITE};
