//! `ModelLanes`: lanes that take as long as a machine model says, on a virtual clock that jumps
//! from one task's end to the next — the discrete-event engine of `srcflow simulate`.

use super::lanes::{execute, Done, Job, Lanes};
use super::{Clock, Executor};
use srcflow_graph::graph::Task;
use srcflow_tensor::backend::PrimitiveTimes;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The least the virtual clock moves on a poll that no task ends in.
const TICK: Duration = Duration::from_micros(10);

/// How long a task takes on the modelled machine.
pub trait TaskTimer: Sync {
    /// Seconds `task` runs.
    fn seconds(&self, task: &Task) -> f64;
}

/// A clock that moves only when the simulation moves it.
#[derive(Debug)]
pub(crate) struct VirtualClock {
    origin: Instant,
    nanos: AtomicU64,
}

impl VirtualClock {
    /// A clock at time zero.
    pub fn new() -> Self {
        VirtualClock {
            origin: Instant::now(),
            nanos: AtomicU64::new(0),
        }
    }

    /// Moves the clock forward to `at` (never back).
    fn advance_to(&self, at: Instant) {
        let nanos = at.saturating_duration_since(self.origin).as_nanos() as u64;
        self.nanos.fetch_max(nanos, Ordering::Relaxed);
    }
}

impl Default for VirtualClock {
    fn default() -> Self {
        VirtualClock::new()
    }
}

impl Clock for VirtualClock {
    fn now(&self) -> Instant {
        self.origin + Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }
}

/// Lanes whose tasks end when the model says; the executor makes their (modelled) outputs.
pub(super) struct ModelLanes<'a> {
    executor: &'a dyn Executor,
    timer: &'a dyn TaskTimer,
    clock: &'a VirtualClock,
    /// Running tasks by end time (then start order).
    running: BinaryHeap<Reverse<(Instant, u64)>>,
    ends: Vec<Option<Done>>,
}

impl<'a> ModelLanes<'a> {
    /// Lanes timing tasks with `timer` on `clock`.
    pub fn new(
        executor: &'a dyn Executor,
        timer: &'a dyn TaskTimer,
        clock: &'a VirtualClock,
    ) -> Self {
        ModelLanes {
            executor,
            timer,
            clock,
            running: BinaryHeap::new(),
            ends: Vec::new(),
        }
    }
}

impl Lanes for ModelLanes<'_> {
    fn send(&mut self, job: Job) {
        let start = self.clock.now();
        let seconds = self.timer.seconds(&job.task).max(0.0);
        let end = start + Duration::from_secs_f64(seconds);
        let result = execute(self.executor, &job.task, job.inputs, job.blocks);
        self.running.push(Reverse((end, self.ends.len() as u64)));
        self.ends.push(Some(Done {
            node: job.node,
            result,
            start,
            end,
            primitives: PrimitiveTimes::default(),
        }));
    }

    /// Time moves on by at least [`TICK`] when nothing ends sooner, so a dispatcher polling
    /// with a zero timeout still sees the clock advance.
    fn recv(&mut self, timeout: Duration) -> Option<Done> {
        let limit = self.clock.now() + timeout.max(TICK);
        match self.running.peek() {
            Some(&Reverse((end, index))) if end <= limit => {
                self.running.pop();
                self.clock.advance_to(end);
                self.ends[index as usize].take()
            }
            _ => {
                self.clock.advance_to(limit);
                None
            }
        }
    }
}
