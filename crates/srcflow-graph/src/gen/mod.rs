//! Built-in problem generators: random trains, time-evolution MPOs, perturbed identities.

mod problem;
mod random;
mod size_check;
mod trotter;

pub use problem::{generate, ProblemKind, ProblemSpec};
pub use random::{perturbed_identity, random_mpo, random_mps};
pub use trotter::{time_evolution, Model};
