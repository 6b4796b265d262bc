//! `HeldFetches`: the slices fetched ahead of compute and not yet consumed, with the step
//! that needs each, so a prefetch beyond the plan's window counts only the memory the plan
//! does not already hold for them.

use srcflow_graph::graph::{DataId, Lane, LaneId, Stage, Task};
use std::collections::HashMap;

/// One fetched (or being fetched) slice.
#[derive(Clone, Copy, Debug)]
struct Held {
    lane: LaneId,
    step: usize,
    bytes: u64,
}

/// Fetched slices by the value they produce.
#[derive(Debug, Default)]
pub(crate) struct HeldFetches {
    held: HashMap<DataId, Held>,
}

impl HeldFetches {
    /// Counts the slice a starting fetch task produces.
    pub fn start(&mut self, task: &Task) {
        for &id in &task.outputs {
            let held = Held {
                lane: task.lane_id(),
                step: task.step,
                bytes: task.moved_bytes,
            };
            self.held.insert(id, held);
        }
    }

    /// Forgets the fetched slice `id` once nothing holds it any more.
    pub fn consumed(&mut self, id: &DataId) {
        if matches!(
            id,
            DataId::Spilled {
                stage: Stage::Device | Stage::HostReturn,
                ..
            }
        ) {
            self.held.remove(id);
        }
    }

    /// Bytes held at sweep step `step` beyond what a plan with a prefetch window of `window`
    /// steps counts: the slices whose window has not opened by `step`. With `upload_to`, only
    /// the slices uploaded to that device.
    pub fn beyond_window(&self, step: usize, window: usize, upload_to: Option<usize>) -> u64 {
        self.held
            .values()
            .filter(|h| h.step.saturating_sub(window) > step)
            .filter(|h| {
                upload_to
                    .is_none_or(|device| h.lane.lane == Lane::Upload && h.lane.device == device)
            })
            .map(|h| h.bytes)
            .sum()
    }
}
