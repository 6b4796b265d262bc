//! Stall accounting: when each device's compute lane is busy, and what an idle compute lane
//! waits for (an environment, an input core, a spill), booked by pass.

use super::Dispatcher;
use crate::sched::stall::{StallCause, StallClock};
use srcflow_graph::graph::Supply;
use srcflow_graph::graph::TaskId;
use std::collections::HashMap;
use std::time::Instant;

/// The compute lanes' busy and idle time.
#[derive(Default)]
pub(super) struct ComputeWatch {
    /// When the running compute task of each busy device started.
    since: HashMap<usize, Instant>,
    /// The idle time booked so far, by pass and cause.
    pub stalls: StallClock,
}

impl ComputeWatch {
    /// A compute task started on `device` at `now`.
    pub fn started(&mut self, device: usize, now: Instant) {
        self.stalls.busy(now);
        self.since.insert(device, now);
    }

    /// The compute task of `device` ended.
    pub fn ended(&mut self, device: usize) {
        self.since.remove(&device);
    }

    /// Seconds the running compute task of `device` has run at `now` (0 when none runs).
    pub fn running_for(&self, device: usize, now: Instant) -> f64 {
        self.since
            .get(&device)
            .map_or(0.0, |t| now.saturating_duration_since(*t).as_secs_f64())
    }
}

impl Dispatcher {
    /// Books an idle compute lane's time to what the next compute task waits for.
    pub(super) fn watch_compute(&mut self) {
        if !self.compute.since.is_empty() {
            return;
        }
        let Some((step, index)) = self.left.first_compute() else {
            return;
        };
        let node = TaskId::new(index);
        let pass = self.graph.pass_of(self.graph[node].op, step);
        let compute = self.graph[node].lane_id();
        let cause = if self.ready.get(&compute).is_some_and(|q| !q.is_empty()) {
            StallCause::Spill
        } else {
            self.missing_input(node)
        };
        self.compute.stalls.idle(self.clock.now(), pass, cause);
    }

    /// What kind of producer `node` still waits for.
    fn missing_input(&self, node: TaskId) -> StallCause {
        let mut cause = StallCause::Other;
        for edge in self.graph.incoming(node) {
            if self.finished[edge.from.index()] {
                continue;
            }
            match self.graph[edge.from].op.profile().supplies {
                Supply::StoredValue => return StallCause::Environment,
                Supply::InputCore => cause = StallCause::InputCore,
                Supply::Other => {}
            }
        }
        cause
    }
}
