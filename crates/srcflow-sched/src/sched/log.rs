//! `RunLog`: when every task ran, for reports and traces.

use super::stall::{StallCause, StallSpell};
use super::{GovernorLog, Stalls};
use crate::store::TierBytes;
use srcflow_graph::graph::TaskId;
use srcflow_graph::graph::{Cols, Lane, Op, Pass, Resumed, SweepGraph, Task};
use srcflow_tensor::backend::PrimitiveTimes;
use srcflow_tensor::device::PoolUsage;
use srcflow_tensor::tensor::Work;
use std::time::{Instant, SystemTime};

/// One finished task.
#[derive(Clone, Debug)]
pub struct TaskEvent {
    /// The graph node.
    pub node: TaskId,
    /// What it did.
    pub op: Op,
    /// Its lane.
    pub lane: Lane,
    /// The device whose lane it ran on (0 for the node's shared lanes).
    pub device: usize,
    /// The rank whose lanes it ran on (0 but in a simulation of several ranks).
    pub rank: usize,
    /// Its site.
    pub site: usize,
    /// Its sweep step.
    pub step: usize,
    /// The sketch columns it covered (env, sketch, spill and fetch tasks).
    pub cols: Option<Cols>,
    /// For a half-batch node, the columns of the whole output it wrote a slice of.
    pub within: Option<Cols>,
    /// Seconds from the start of the run to the start of the task.
    pub start: f64,
    /// Seconds from the start of the run to the end of the task.
    pub end: f64,
    /// Real flops it did.
    pub flops: f64,
    /// Its work by kind of step (compute tasks).
    pub work: Work,
    /// Bytes it moved between tiers or files.
    pub bytes: u64,
    /// The time its backend primitives took, by kind (zero where the backend does not count).
    pub primitives: PrimitiveTimes,
}

/// Bytes held on each tier at one moment.
#[derive(Clone, Debug)]
pub struct MemorySample {
    /// Seconds from the start of the run.
    pub at: f64,
    /// Bytes per tier then.
    pub held: TierBytes,
    /// Each device's pool then, by device index.
    pub pools: Vec<PoolUsage>,
}

/// The finished tasks of one run, in completion order.
#[derive(Clone, Debug)]
pub struct RunLog {
    origin: Instant,
    /// Every finished task.
    pub events: Vec<TaskEvent>,
    /// Idle compute by cause: left-to-right pass, then right-to-left pass.
    pub stalls: [Stalls; 2],
    /// The most bytes each tier held.
    pub peak: TierBytes,
    /// Bytes each tier held after every completion.
    pub memory: Vec<MemorySample>,
    /// Idle spells of the compute lane: (start, end) in seconds from the start, pass, cause.
    pub stall_spells: Vec<(f64, f64, Pass, StallCause)>,
    /// What the memory governor did: refusals, releases, rewrites and their cost.
    pub governor: GovernorLog,
    /// The graph as the run left it, when the governor rewrote nodes into half batches or the
    /// run was one rank's part of a graph ([`crate::ranks::RankGraph`]).
    pub graph_after: Option<SweepGraph>,
    /// What the run skipped by resuming from a checkpoint (`None`: it kept no checkpoint).
    pub resumed: Option<Resumed>,
    /// Kernel threads of each device (empty when not known).
    pub threads_per_device: Vec<usize>,
    /// True for the log of a simulated run (its times come from a model, not a measurement).
    pub simulated: bool,
    /// The wall-clock time its clock starts at (traces of several ranks are aligned by it).
    pub started: SystemTime,
}

impl Default for RunLog {
    fn default() -> Self {
        RunLog::starting_at(Instant::now())
    }
}

impl RunLog {
    /// An empty log whose clock starts at `origin`.
    pub fn starting_at(origin: Instant) -> Self {
        RunLog {
            origin,
            events: Vec::new(),
            stalls: [Stalls::default(); 2],
            peak: TierBytes::default(),
            memory: Vec::new(),
            stall_spells: Vec::new(),
            governor: GovernorLog::default(),
            graph_after: None,
            resumed: None,
            threads_per_device: Vec::new(),
            simulated: false,
            started: SystemTime::now() - Instant::now().saturating_duration_since(origin),
        }
    }

    /// Seconds from the start of the run to `at`.
    pub fn seconds_at(&self, at: Instant) -> f64 {
        at.saturating_duration_since(self.origin).as_secs_f64()
    }

    /// Records the compute lane's idle spells.
    pub fn record_stalls(&mut self, spells: &[StallSpell]) {
        let secs = |t: Instant| t.saturating_duration_since(self.origin).as_secs_f64();
        self.stall_spells = spells
            .iter()
            .map(|s| (secs(s.start), secs(s.end), s.pass, s.cause))
            .collect();
    }

    /// Records what each tier and the device's pool hold at `at`.
    pub fn sample_memory(&mut self, at: Instant, held: TierBytes, pools: Vec<PoolUsage>) {
        let at = self.seconds_at(at);
        self.memory.push(MemorySample { at, held, pools });
    }

    /// Records that `task` ran from `start` to `end`, `primitives` of it in backend primitives.
    pub fn record(
        &mut self,
        node: TaskId,
        task: &Task,
        start: Instant,
        end: Instant,
        primitives: PrimitiveTimes,
    ) {
        let secs = |t: Instant| t.saturating_duration_since(self.origin).as_secs_f64();
        self.events.push(TaskEvent {
            node,
            op: task.op,
            lane: task.lane,
            device: task.lane_id().device,
            rank: task.rank,
            site: task.site,
            step: task.step,
            cols: task.cols,
            within: task.within,
            start: secs(start),
            end: secs(end),
            flops: task.flops,
            work: task.work,
            bytes: task.moved_bytes,
            primitives,
        });
    }

    /// Seconds from the first start to the last end of the events that `pick` selects.
    pub fn span(&self, pick: impl Fn(&TaskEvent) -> bool) -> f64 {
        let picked = self.events.iter().filter(|e| pick(e));
        let (start, end) = picked.fold((f64::INFINITY, 0.0_f64), |(s, e), ev| {
            (s.min(ev.start), e.max(ev.end))
        });
        if start.is_finite() {
            end - start
        } else {
            0.0
        }
    }

    /// Seconds the events that `pick` selects were running (summed).
    pub fn busy(&self, pick: impl Fn(&TaskEvent) -> bool) -> f64 {
        self.events
            .iter()
            .filter(|e| pick(e))
            .fold(0.0, |busy, e| busy + (e.end - e.start))
    }
}
