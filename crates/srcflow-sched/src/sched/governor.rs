//! `Governor`: admits tasks by the device memory they ask for, and recovers from failed
//! allocations by releasing the pool's cache and rewriting nodes into half-batch nodes.
//!
//! Admission asks the pool whether a task's blocks fit now, counting physically free memory
//! and only those cached blocks large enough for a request. A batch that does not fit is
//! tried at half, a quarter, … down to one column; the first width that fits makes the node
//! split in two (the halves are admitted in turn, so splits recurse). Only when even one
//! column is refused is the cache released, and admission starts again from the top: a
//! release never by itself admits work. The first release is free; later ones must fit the
//! recovery budget (a fraction of the compute time done so far) with a release's cost to
//! spare. Blocks are allocated when a task is launched; an allocation that fails then (or
//! inside a kernel, for backends that allocate there) releases the cache (within the same
//! budget) and splits the node, or retries a task without a batch; the split is remembered
//! for that kernel when the memory really is short (the request still does not fit after the
//! release). A watchdog ends a run that
//! makes no progress while memory is being reclaimed with an error that names the task.

use super::device_request::DeviceRequest;
use super::out_of_memory::{out_of_memory, task_out_of_memory};
use super::{MemoryEvent, MemoryEventKind};
use srcflow_graph::graph::TaskId;
use srcflow_graph::graph::{DataId, Lane, Op, SweepGraph, Task};
use srcflow_tensor::device::{Block, CapacitySchedule, MemoryPool};
use srcflow_tensor::error::{Error, Result};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

/// Failed allocations in a row, with no task completing, after which the run stops.
const WATCHDOG_ATTEMPTS: usize = 16;

/// What admission says about a ready task.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Admission {
    /// Start it.
    Run,
    /// Rewrite it into two half-batch nodes first.
    Split,
    /// Remove it (a fold), its readers contracting the cores themselves.
    Unfold,
    /// Hold it until memory is freed.
    Wait,
}

/// What to do with a task whose allocation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Recovery {
    /// Queue it again (admission decides when it starts).
    Retry,
    /// Rewrite it into two half-batch nodes.
    Split,
}

/// The memory governor of one run.
pub struct Governor {
    /// Each device's pool, by device index.
    pools: Vec<Arc<dyn MemoryPool>>,
    recovery_budget: f64,
    schedule: CapacitySchedule,
    /// The finest batch each kernel had to be split to for lack of memory.
    finest: HashMap<Op, usize>,
    /// Outputs of half-batch nodes that a slice has allocated.
    open_slots: HashSet<DataId>,
    /// Nodes refused and not yet run (each refusal is reported once).
    refused: HashSet<usize>,
    /// Compute tasks refused and waiting for memory (reads and prefetches pause meanwhile).
    refused_compute: HashSet<usize>,
    releases: usize,
    release_s: f64,
    recovery_s: f64,
    compute_s: f64,
    failures_in_a_row: usize,
    events: Vec<MemoryEvent>,
}

/// What the governor did in one run.
#[derive(Clone, Debug, Default)]
pub struct GovernorLog {
    /// Every refusal, failure, release, rewrite and capacity change.
    pub events: Vec<MemoryEvent>,
    /// Seconds spent recovering: failed attempts, cache releases, re-planning and rewrites.
    pub recovery_s: f64,
    /// The finest batch each kernel was split to for lack of memory.
    pub finest_batch: BTreeMap<String, usize>,
}

impl Governor {
    /// A governor over the pools of a node's devices (by device index), with a recovery
    /// budget (fraction of compute time) and a schedule of capacity changes (for every device).
    pub fn new(
        pools: Vec<Arc<dyn MemoryPool>>,
        recovery_budget: f64,
        schedule: CapacitySchedule,
    ) -> Self {
        assert!(!pools.is_empty(), "a node has at least one device");
        Governor {
            pools,
            recovery_budget,
            schedule,
            finest: HashMap::new(),
            open_slots: HashSet::new(),
            refused: HashSet::new(),
            refused_compute: HashSet::new(),
            releases: 0,
            release_s: 0.0,
            recovery_s: 0.0,
            compute_s: 0.0,
            failures_in_a_row: 0,
            events: Vec::new(),
        }
    }

    /// The pool of each device now, by device index.
    pub(super) fn pool_usages(&self) -> Vec<srcflow_tensor::device::PoolUsage> {
        self.pools.iter().map(|p| p.usage()).collect()
    }

    /// The pool of the device `task` runs on.
    fn pool(&self, task: &Task) -> &dyn MemoryPool {
        self.pools[task.device.min(self.pools.len() - 1)].as_ref()
    }

    /// True while a compute task waits for memory: prefetches and read-ahead pause meanwhile.
    pub(super) fn reclaiming(&self) -> bool {
        !self.refused_compute.is_empty()
    }

    /// Applies the capacity change due once compute has reached `step`.
    pub(super) fn on_frontier(&mut self, step: usize, at: f64) {
        if let Some(bytes) = self.schedule.due(step) {
            for pool in &self.pools {
                pool.set_capacity(bytes);
            }
            self.event(at, MemoryEventKind::Capacity, &"", bytes);
        }
    }

    /// Whether the ready task `node` may start now.
    pub(super) fn admit(&mut self, graph: &SweepGraph, node: TaskId, at: f64) -> Admission {
        let start = Instant::now();
        let events = self.events.len();
        let admission = self.decide(graph, node, at);
        if admission != Admission::Wait {
            self.refused.remove(&node.index());
            self.refused_compute.remove(&node.index());
        } else if graph[node].lane == Lane::Compute {
            self.refused_compute.insert(node.index());
        }
        if admission == Admission::Split {
            self.charge(events, start.elapsed().as_secs_f64());
        }
        admission
    }

    /// The blocks `node` asks for, allocated now (at launch), or an out-of-memory error.
    pub(super) fn allocate(&mut self, graph: &SweepGraph, node: TaskId) -> Result<Vec<Block>> {
        let task = &graph[node];
        let request = self.request(graph, task);
        request
            .blocks
            .iter()
            .map(|&bytes| {
                self.pool(task)
                    .allocate(bytes)
                    .map_err(|oom| task_out_of_memory(&oom, task, request.total()))
            })
            .collect()
    }

    /// Adds `seconds` spent rewriting a node to the recovery time and to the rewrite's event.
    pub(super) fn charge_rewrite(&mut self, seconds: f64) {
        let last = self
            .events
            .iter()
            .rposition(|e| e.kind == MemoryEventKind::Rewritten);
        self.charge(last.unwrap_or(self.events.len()), seconds);
    }

    /// Adds `seconds` to the recovery time and to the cost of the events from index `from` on
    /// (shared out evenly).
    fn charge(&mut self, from: usize, seconds: f64) {
        self.recovery_s += seconds;
        let from = from.min(self.events.len());
        let events = &mut self.events[from..];
        let share = seconds / events.len().max(1) as f64;
        for event in events {
            event.seconds += share;
        }
    }

    fn decide(&mut self, graph: &SweepGraph, node: TaskId, at: f64) -> Admission {
        let task = &graph[node];
        let request = self.request(graph, task);
        if request.blocks.is_empty() {
            return Admission::Run;
        }
        let width = graph
            .batch_of(task)
            .filter(|_| graph.can_split(node))
            .map(|c| c.len());
        if let (Some(width), Some(&finest)) = (width, self.finest.get(&task.op)) {
            if width > finest {
                self.event(at, MemoryEventKind::Rewritten, task, request.total());
                return Admission::Split;
            }
        }
        if task.lane != Lane::Compute {
            if self.pool(task).fits(&request.blocks) {
                return Admission::Run;
            }
        } else {
            if let Some(admission) = self.admit_compute(graph, node, width, &request, at) {
                return admission;
            }
            if self.may_release(task) {
                self.release(at, task);
                if let Some(admission) = self.admit_compute(graph, node, width, &request, at) {
                    return admission;
                }
            }
            if task.op.profile().unfolds {
                self.event(at, MemoryEventKind::Refused, task, request.total());
                self.event(at, MemoryEventKind::Rewritten, task, request.total());
                return Admission::Unfold;
            }
        }
        if self.refused.insert(node.index()) {
            self.event(at, MemoryEventKind::Refused, task, request.total());
        }
        Admission::Wait
    }

    /// Run when the whole request fits, split when some narrower batch does (the refusal of
    /// the whole and the rewrite are recorded).
    fn admit_compute(
        &mut self,
        graph: &SweepGraph,
        node: TaskId,
        width: Option<usize>,
        request: &DeviceRequest,
        at: f64,
    ) -> Option<Admission> {
        let task = &graph[node];
        if self.pool(task).fits(&request.blocks) {
            return Some(Admission::Run);
        }
        let open = self.slot_open(task);
        let narrower = std::iter::successors(width.map(|w| w / 2), |&w| (w > 1).then_some(w / 2));
        for w in narrower {
            let smaller = DeviceRequest::at_width(graph, task, w, open)?;
            if self.pool(task).fits(&smaller.blocks) {
                self.remember(task.op, w);
                let total = request.total();
                if self.refused.insert(node.index()) {
                    self.event(at, MemoryEventKind::Refused, task, total);
                }
                self.event(at, MemoryEventKind::Rewritten, task, total);
                return Some(Admission::Split);
            }
        }
        None
    }

    /// Records that `task` (node `node`) finished with `outputs_made` outputs after `seconds`.
    pub(super) fn on_done(&mut self, node: TaskId, task: &Task, outputs_made: usize, seconds: f64) {
        self.failures_in_a_row = 0;
        self.refused.remove(&node.index());
        self.refused_compute.remove(&node.index());
        if task.lane == Lane::Compute {
            self.compute_s += seconds;
        }
        if task.within.is_some() {
            if outputs_made == 0 {
                self.open_slots.insert(task.outputs[0]);
            } else {
                self.open_slots.remove(&task.outputs[0]);
            }
        }
    }

    /// What to do after `node`'s allocation failed with `error` in an attempt of `seconds`.
    pub(super) fn recover(
        &mut self,
        graph: &SweepGraph,
        node: TaskId,
        error: &Error,
        seconds: f64,
        at: f64,
    ) -> Result<Recovery> {
        let task = &graph[node];
        let injected = matches!(error, Error::OutOfMemory { injected: true, .. });
        let request = self.request(graph, task);
        self.failures_in_a_row += 1;
        self.recovery_s += seconds;
        let event = self.event(at, MemoryEventKind::OutOfMemory, task, request.total());
        event.seconds = seconds;
        event.injected = injected;
        if self.failures_in_a_row >= WATCHDOG_ATTEMPTS {
            let last = if injected {
                ", the last injected by `DeviceOptions::inject_oom`"
            } else {
                ""
            };
            let why = format!(
                " (watchdog: {WATCHDOG_ATTEMPTS} allocations failed in a row with no task \
                 completing{last})"
            );
            return Err(out_of_memory(
                task,
                request.total(),
                &self.pool(task).usage(),
                &why,
            ));
        }
        if self.may_release(task) {
            self.release(at, task);
        }
        if !graph.can_split(node) {
            self.event(at, MemoryEventKind::Retried, task, request.total())
                .injected = injected;
            return Ok(Recovery::Retry);
        }
        if !self.pool(task).fits(&request.blocks) {
            let width = graph.batch_of(task).map_or(1, |c| c.len());
            self.remember(task.op, width / 2);
        }
        self.event(at, MemoryEventKind::Rewritten, task, request.total())
            .injected = injected;
        Ok(Recovery::Split)
    }

    /// What to do when nothing of this process is running and tasks are still to run: release
    /// the cache and try again (`Ok(true)`), give up with an error naming the refused task, or,
    /// when no task was refused, nothing (`Ok(false)`: the graph itself is stuck). While values
    /// from other ranks are `awaited`, their arrival may yet free memory: nothing, not an error.
    pub(super) fn unstick(&mut self, graph: &SweepGraph, at: f64, awaited: bool) -> Result<bool> {
        let Some(&index) = self.refused.iter().min() else {
            return Ok(false);
        };
        let task = &graph[TaskId::new(index)];
        if self.pool(task).usage().releasable > 0 {
            self.release(at, task);
            return Ok(true);
        }
        if awaited {
            return Ok(false);
        }
        let request = self.request(graph, task);
        let why = " (nothing else running can free memory; lower `GraphOptions::batch_cols` or the budgets)";
        Err(out_of_memory(
            task,
            request.total(),
            &self.pool(task).usage(),
            why,
        ))
    }

    /// What the governor did so far (its events are handed over, not copied).
    pub fn take_log(&mut self) -> GovernorLog {
        GovernorLog {
            events: std::mem::take(&mut self.events),
            recovery_s: self.recovery_s,
            finest_batch: self
                .finest
                .iter()
                .map(|(op, &w)| (op.name().to_string(), w))
                .collect(),
        }
    }

    fn request(&self, graph: &SweepGraph, task: &Task) -> DeviceRequest {
        DeviceRequest::of(graph, task, self.slot_open(task))
    }

    fn slot_open(&self, task: &Task) -> bool {
        task.within.is_some() && self.open_slots.contains(&task.outputs[0])
    }

    fn remember(&mut self, op: Op, width: usize) {
        let finest = self.finest.entry(op).or_insert(usize::MAX);
        *finest = (*finest).min(width.max(1));
    }

    /// A release is worth asking for when the cache holds a wholly unused segment; the first is
    /// free, later ones only while the time spent recovering (failed attempts, releases,
    /// re-planning and rewrites) plus two releases' cost stays within the budget: one for this
    /// release and a reserve for the next.
    fn may_release(&self, task: &Task) -> bool {
        if self.pool(task).usage().releasable == 0 {
            return false;
        }
        if self.releases == 0 {
            return true;
        }
        let cost = self.release_s / self.releases as f64;
        self.recovery_s + 2.0 * cost <= self.recovery_budget * self.compute_s
    }

    /// Releases the cache of `task`'s device on its behalf; the bytes it gave back.
    fn release(&mut self, at: f64, task: &Task) -> u64 {
        let start = Instant::now();
        let freed = self.pool(task).release_cache();
        let seconds = start.elapsed().as_secs_f64();
        self.releases += 1;
        self.release_s += seconds;
        self.recovery_s += seconds;
        self.event(at, MemoryEventKind::Released, task, freed)
            .seconds = seconds;
        freed
    }

    /// Records an event of `kind` about `task` at `at`, for `bytes`; the caller may fill in
    /// its cost and whether it was injected.
    fn event(
        &mut self,
        at: f64,
        kind: MemoryEventKind,
        task: &dyn std::fmt::Display,
        bytes: u64,
    ) -> &mut MemoryEvent {
        tracing::debug!(kind = kind.name(), %task, bytes, "memory governor");
        self.events.push(MemoryEvent {
            at,
            kind,
            task: task.to_string(),
            bytes,
            seconds: 0.0,
            injected: false,
        });
        self.events.last_mut().expect("just pushed")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use srcflow_tensor::device::{PoolConfig, SimulatedPool};

    /// A compute task of device 0.
    fn task() -> Task {
        Task {
            op: Op::Sketch,
            site: 0,
            cols: None,
            within: None,
            inputs: vec![],
            outputs: vec![],
            flops: 0.0,
            work: srcflow_tensor::tensor::Work::default(),
            orders: Default::default(),
            peak_bytes: 0,
            moved_bytes: 0,
            lane: Lane::Compute,
            device: 0,
            rank: 0,
            step: 0,
        }
    }

    /// Leaves 1 MiB cached in `pool`.
    fn cache(pool: &SimulatedPool) {
        drop(pool.allocate(1 << 20).unwrap());
    }

    #[test]
    fn the_first_release_is_free_and_later_ones_must_fit_the_budget() {
        let config = PoolConfig {
            capacity: Some(64 << 20),
            ..PoolConfig::default()
        };
        let pool = Arc::new(SimulatedPool::new(config).unwrap());
        let mut governor = Governor::new(vec![pool.clone()], 0.05, CapacitySchedule::default());
        assert!(
            !governor.may_release(&task()),
            "nothing cached, nothing to release"
        );
        cache(&pool);
        assert!(governor.may_release(&task()), "the first release is free");
        assert_eq!(governor.release(0.0, &task()), 1 << 20);
        (governor.release_s, governor.recovery_s) = (1e-3, 1e-3);
        cache(&pool);
        assert!(!governor.may_release(&task()), "no compute done, no budget");
        governor.compute_s = 0.05;
        assert!(
            !governor.may_release(&task()),
            "2.5 ms of budget: 1 ms spent, 2 ms needed"
        );
        governor.compute_s = 0.06;
        assert!(
            governor.may_release(&task()),
            "3 ms: one release and a reserve for the next"
        );
    }
}
