//! The simulator: a sweep graph replayed on a model of a machine, by the same dispatcher,
//! planner, prefetch policies and memory governor as real runs, on a virtual clock
//! ([`crate::sched::simulate`]). `srcflow simulate` runs it; `srcflow calibrate` measures a
//! model of this machine.

mod calibrate;
mod machine;
mod model_executor;

pub use calibrate::calibrate;
pub use machine::MachineModel;
pub use model_executor::ModelExecutor;
