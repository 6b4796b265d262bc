//! The gates that pace I/O against compute: read-ahead for inputs, spill lag for the
//! left-to-right pass, and the prefetch policy with its byte window for fetches.

use super::super::FetchView;
use super::Dispatcher;
use srcflow_graph::graph::TaskId;
use srcflow_graph::graph::{Lane, LaneId, ReadAhead, Task};
use std::time::Duration;

impl Dispatcher {
    /// The gate of each lane: read-ahead for inputs, spill lag for the left-to-right pass,
    /// the prefetch policy and byte window for fetches. While the governor reclaims memory,
    /// nothing is read or fetched ahead of compute.
    pub(super) fn may_start(&mut self, task: &Task) -> bool {
        let frontier = self.frontier();
        let ahead = task.step > frontier;
        let paced_by = task.op.profile().read_ahead;
        let reads_input = paced_by.is_some();
        let read_ahead = match paced_by {
            Some(ReadAhead::UploadSteps) => self.options.pacing.upload_ahead_steps,
            Some(ReadAhead::InputSteps) | None => self.options.pacing.read_ahead_steps,
        };
        match task.lane {
            _ if ahead && reads_input && self.governor.reclaiming() => false,
            _ if reads_input => task.step <= frontier.saturating_add(read_ahead),
            Lane::Compute => !self.behind_on_spills(task.step),
            Lane::Upload | Lane::DiskRead if ahead && self.governor.reclaiming() => false,
            Lane::Upload | Lane::DiskRead => self.may_fetch(task, frontier),
            Lane::Io | Lane::Download | Lane::DiskWrite | Lane::Collective | Lane::Network => true,
        }
    }

    /// True when a spill older than the allowed lag (at least one step) is unfinished at `step`.
    pub(super) fn behind_on_spills(&self, step: usize) -> bool {
        let lag = self.options.pacing.spill_lag_steps.max(1);
        self.left
            .oldest_spill()
            .is_some_and(|oldest| oldest + lag <= step)
    }

    /// Whether a fetch may start: always for the step compute is at, otherwise when there is
    /// room for it and the policy agrees; a policy that names a later moment sets the
    /// dispatcher's next wake-up.
    pub(super) fn may_fetch(&mut self, task: &Task, frontier: usize) -> bool {
        if task.step <= frontier {
            return true;
        }
        if !self.room_for(task, frontier) {
            return false;
        }
        let view = FetchView {
            step: task.step,
            frontier,
            spare_seconds: self.spare_seconds(task.lane_id()),
            seconds_to_fetch: self.fetch_seconds(task),
        };
        match self.options.prefetch.start_in(&view) {
            Some(due) if due <= 0.0 => true,
            Some(due) => {
                let at = self.clock.now() + Duration::from_secs_f64(due);
                self.wake_at = Some(self.wake_at.map_or(at, |w| w.min(at)));
                false
            }
            None => false,
        }
    }

    /// Room for a prefetch: within the policy's window of steps (which the planner counted), or
    /// within the memory the plan leaves free at every step before the window in which it
    /// counts this slice, less what earlier fetches hold there beyond their own windows; an
    /// upload must also fit the device memory the plan leaves free, less what uploads hold.
    pub(super) fn room_for(&self, task: &Task, frontier: usize) -> bool {
        let ahead = self.options.prefetch.window_steps();
        if task.step <= frontier.saturating_add(ahead) {
            return true;
        }
        let Some(spare) = &self.options.spare_memory_by_step else {
            return false;
        };
        let modelled_from = task.step.saturating_sub(ahead);
        if modelled_from <= frontier {
            return false;
        }
        let upload_to = (task.lane == Lane::Upload).then_some(task.device);
        spare.range(frontier..modelled_from).all(|(&step, free)| {
            let held = self.fetched.beyond_window(step, ahead, None);
            let fits_memory = held + task.moved_bytes <= free.memory;
            fits_memory
                && upload_to.is_none_or(|device| {
                    self.fetched.beyond_window(step, ahead, Some(device)) + task.moved_bytes
                        <= free.device
                })
        })
    }

    /// Estimated seconds to bring `task`'s data to the device.
    pub(super) fn fetch_seconds(&self, task: &Task) -> Option<f64> {
        let route: &[Lane] = if task.lane == Lane::DiskRead {
            &[Lane::DiskRead, Lane::Upload]
        } else {
            &[Lane::Upload]
        };
        self.rates.seconds_to_move(task.moved_bytes, route)
    }

    /// The spare time of `lane`'s pending fetches, in the order it will run them (see
    /// [`FetchView::spare_seconds`]). The compute left before a step is the flops of earlier
    /// steps not yet done, shared by the devices at the measured rate of one, less what the
    /// lane's device has already done of its running task.
    pub(super) fn spare_seconds(&self, lane: LaneId) -> Option<f64> {
        let rate = self.rates.per_second(Lane::Compute)? * self.graph.active_devices() as f64;
        let running = self.compute.running_for(lane.device, self.clock.now());
        let mut pending: Vec<(usize, usize)> = self.ready.get(&lane)?.iter().map(|r| r.0).collect();
        pending.sort_unstable();
        let mut earlier_steps = self.left.flops_by_step().peekable();
        let (mut flops_before, mut queued, mut spare) = (0.0, 0.0, f64::INFINITY);
        for (step, index) in pending {
            while let Some((_, flops)) = earlier_steps.next_if(|(&s, _)| s < step) {
                flops_before += flops;
            }
            queued += self.fetch_seconds(&self.graph[TaskId::new(index)])?;
            let until = (flops_before / rate - running).max(0.0);
            spare = spare.min(until - queued);
        }
        Some(spare)
    }
}
