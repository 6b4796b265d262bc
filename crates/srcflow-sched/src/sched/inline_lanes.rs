//! `InlineLanes`: every task run on the dispatcher's own thread as it starts, for sweeps whose
//! lanes would only hand tiny tasks back and forth (one device in host memory, nothing spilled:
//! see [`super::runs_inline`]).

use super::lanes::{run_job, Lanes};
use super::{Done, Executor, Job};
use std::collections::VecDeque;
use std::time::Duration;

/// Lanes that run each task when it is sent, on the calling thread, and hand its report back
/// at the next [`Lanes::recv`]: no thread, channel or wake-up per task.
pub(super) struct InlineLanes<'a> {
    executor: &'a dyn Executor,
    ended: VecDeque<Done>,
}

impl<'a> InlineLanes<'a> {
    /// Lanes running tasks with `executor`.
    pub fn new(executor: &'a dyn Executor) -> Self {
        InlineLanes {
            executor,
            ended: VecDeque::new(),
        }
    }
}

impl Lanes for InlineLanes<'_> {
    fn send(&mut self, job: Job) {
        self.ended.push_back(run_job(self.executor, job));
    }

    /// The report of the oldest task run and not yet reported; every task sent has ended, so
    /// there is nothing to wait for.
    fn recv(&mut self, _timeout: Duration) -> Option<Done> {
        self.ended.pop_front()
    }
}
