//! `ProgressFeed`: what the dispatcher tells a [`Progress`] listener of each finished task,
//! with the bytes written to the disk tier so far.

use crate::sched::Progress;
use srcflow_graph::graph::{Pass, Task};
use srcflow_tensor::Tier;
use std::sync::Arc;

/// The run's progress listener, if any, and the bytes spill tasks have written to disk.
pub(super) struct ProgressFeed {
    /// Told of every finished task.
    listener: Option<Arc<dyn Progress>>,
    /// Bytes spill tasks have written to the disk tier so far.
    written: u64,
}

impl ProgressFeed {
    /// A feed to `listener` (none: only the bytes written to disk are counted).
    pub fn new(listener: Option<Arc<dyn Progress>>) -> Self {
        ProgressFeed {
            listener,
            written: 0,
        }
    }

    /// `task` finished as the `finished`-th of `total` tasks; `pass` says which pass it is of
    /// (asked only when someone listens).
    pub fn task_done(
        &mut self,
        task: &Task,
        finished: usize,
        total: usize,
        pass: impl FnOnce() -> Pass,
    ) {
        if task.op.profile().spills_to == Some(Tier::Disk) {
            self.written += task.moved_bytes;
        }
        if let Some(listener) = &self.listener {
            listener.task_done(task, pass(), finished, total, self.written);
        }
    }
}
