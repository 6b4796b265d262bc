//! `WorkLeft`: the compute and spill tasks not yet finished, by sweep step: where compute's
//! frontier is, the flops still to do before a step, and how far spills lag behind.

use srcflow_graph::graph::{Lane, Task};
use std::collections::{BTreeMap, BTreeSet};

/// Unfinished compute and spill tasks of a run, by step.
#[derive(Default)]
pub(super) struct WorkLeft {
    /// Unfinished compute tasks as (step, node index): the first is the frontier.
    compute: BTreeSet<(usize, usize)>,
    /// Flops of unfinished compute tasks, per step.
    flops: BTreeMap<usize, f64>,
    /// Unfinished spill tasks, per step.
    spills: BTreeMap<usize, usize>,
}

impl WorkLeft {
    /// Counts `task` (node `index`) as left to do.
    pub fn add(&mut self, task: &Task, index: usize) {
        if task.lane == Lane::Compute {
            self.compute.insert((task.step, index));
            self.add_flops(task.step, task.flops);
        }
        if task.op.profile().spills_to.is_some() {
            *self.spills.entry(task.step).or_default() += 1;
        }
    }

    /// Counts `task` (node `index`) as done.
    pub fn finish(&mut self, task: &Task, index: usize) {
        if task.lane == Lane::Compute {
            self.compute.remove(&(task.step, index));
            let step_done = self
                .compute
                .range((task.step, 0)..(task.step + 1, 0))
                .next()
                .is_none();
            if step_done {
                self.flops.remove(&task.step);
            } else if let Some(flops) = self.flops.get_mut(&task.step) {
                *flops -= task.flops;
            }
        }
        if task.op.profile().spills_to.is_some() {
            let count = self.spills.get_mut(&task.step).expect("counted");
            *count -= 1;
            if *count == 0 {
                self.spills.remove(&task.step);
            }
        }
    }

    /// Counts the compute task of node `index` at `step` as left (a rewrite made it); its
    /// flops are added apart ([`WorkLeft::add_flops`]).
    pub fn add_compute(&mut self, step: usize, index: usize) {
        self.compute.insert((step, index));
    }

    /// Forgets the compute task of node `index` at `step` (a rewrite removed it).
    pub fn remove_compute(&mut self, step: usize, index: usize) {
        self.compute.remove(&(step, index));
    }

    /// Adds `flops` (negative to take away) to what `step` has left.
    pub fn add_flops(&mut self, step: usize, flops: f64) {
        *self.flops.entry(step).or_default() += flops;
    }

    /// The first unfinished compute task as (step, node index).
    pub fn first_compute(&self) -> Option<(usize, usize)> {
        self.compute.first().copied()
    }

    /// Lowest sweep step with unfinished compute (`usize::MAX` when none is left).
    pub fn frontier(&self) -> usize {
        self.first_compute().map_or(usize::MAX, |(step, _)| step)
    }

    /// The step of the oldest unfinished spill.
    pub fn oldest_spill(&self) -> Option<usize> {
        self.spills.keys().next().copied()
    }

    /// Flops left per step, lowest step first.
    pub fn flops_by_step(&self) -> impl Iterator<Item = (&usize, &f64)> {
        self.flops.iter()
    }
}
