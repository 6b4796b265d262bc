//! Planning a run before it starts: budgets, sizes, and the tier of every environment.

mod budget;
mod memory;
mod planner;

pub use budget::Budgets;
pub use memory::{Drift, MemoryProfile, Peak, Spare, PROCESS_BASELINE};
pub use planner::{plan, Plan, PlanRequest};
