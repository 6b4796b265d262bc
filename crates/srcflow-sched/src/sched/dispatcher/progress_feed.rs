//! `ProgressFeed`: what the dispatcher tells a [`Progress`] listener of each finished task,
//! with the bytes spilled so far.

use crate::graph::{Op, Pass, Task};
use crate::sched::Progress;
use std::sync::Arc;

/// The run's progress listener, if any, and the bytes spill tasks have moved off the device.
pub(super) struct ProgressFeed {
    /// Told of every finished task.
    listener: Option<Arc<dyn Progress>>,
    /// Bytes spill tasks have moved off the device so far.
    spilled: u64,
}

impl ProgressFeed {
    /// A feed to `listener` (none: only the spilled bytes are counted).
    pub fn new(listener: Option<Arc<dyn Progress>>) -> Self {
        ProgressFeed {
            listener,
            spilled: 0,
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
        if matches!(task.op, Op::Spill { .. }) {
            self.spilled += task.moved_bytes;
        }
        if let Some(listener) = &self.listener {
            listener.task_done(task, pass(), finished, total, self.spilled);
        }
    }
}
