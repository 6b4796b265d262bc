//! `Progress`: how a caller hears that a run moves on (the CLI draws a progress bar with it).

use crate::graph::{Pass, Task};

/// Told of every finished task.
pub trait Progress: Send + Sync {
    /// `task` of `pass` finished; `done` of `total` tasks are done (the total grows when the
    /// memory governor splits a node) and `spilled` bytes have been moved off the device so far.
    fn task_done(&self, task: &Task, pass: Pass, done: usize, total: usize, spilled: u64);
}
