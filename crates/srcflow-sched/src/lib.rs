//! srcflow's execution layer: the store of values and its tiers ([`store`]), the scheduler that
//! runs a sweep graph's tasks on lanes under the memory governor ([`sched`]), ranks that share
//! one graph between processes ([`ranks`]) and the machine simulator ([`sim`]).
//!
//! Built on `srcflow-graph` and `srcflow-tensor`; knows nothing of files of cores or of the
//! engine that wires a run together (`srcflow`).

#![warn(missing_docs)]

pub mod liveness;
pub mod ranks;
pub mod sched;
pub mod sim;
pub mod store;
