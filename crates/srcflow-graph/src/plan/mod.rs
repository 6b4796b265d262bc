//! Planning a run before it starts: budgets, sizes, and the tier of every environment.

mod budget;
mod memory;
mod planner;

pub(crate) use budget::available_memory;
pub use budget::Budgets;
pub use memory::Peak;
pub use memory::{Drift, MemoryProfile, Spare, PROCESS_BASELINE};
pub use planner::{plan, BudgetFloor, Plan, PlanRequest};
