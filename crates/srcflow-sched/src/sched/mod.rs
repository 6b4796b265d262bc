//! The scheduler: runs a sweep graph's ready tasks on lanes and collects what they produce.
//!
//! One dispatcher (the calling thread) owns the store of values and the ready queues; each
//! lane is a worker thread fed over a crossbeam channel; workers report completions back over
//! another channel. A lane runs one task at a time, lowest sweep step first; kernels inside a
//! task use all the threads of the backend's pool. Values are dropped as soon as their last
//! consumer has finished. Reads of input cores run a few steps ahead of compute, fetches of
//! spilled environments start when the prefetch policy says so, and the left-to-right pass
//! waits for spills that fall behind, so no tier overflows its plan.

mod clock;
mod device_request;
mod dispatcher;
mod governor;
mod held_fetches;
mod inline_lanes;
mod lanes;
mod log;
mod memory_event;
mod model_lanes;
mod out_of_memory;
mod pacing;
mod prefetch;
mod progress;
mod rates;
mod stall;

pub(crate) use clock::{Clock, WallClock};
pub use governor::Governor;
pub use governor::GovernorLog;
pub use log::{MemorySample, RunLog, TaskEvent};
pub use memory_event::{MemoryEvent, MemoryEventKind};
pub(crate) use model_lanes::{TaskTimer, VirtualClock};
pub use pacing::Pacing;
pub use prefetch::{FetchView, Prefetch, PrefetchPolicy};
pub use progress::{progress_message, Progress};
pub use stall::{StallCause, Stalls};

use crate::store::{DiskIo, Value};
use dispatcher::Dispatcher;
use inline_lanes::InlineLanes;
pub use lanes::{Done, Job, NetworkLane};
use lanes::{Lanes, ThreadLanes};
use model_lanes::ModelLanes;
use srcflow_graph::graph::{LaneId, SweepGraph, Task};
use srcflow_graph::plan::Spare;
use srcflow_tensor::cancel::CancelToken;
use srcflow_tensor::device::Block;
use srcflow_tensor::error::Result;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Runs one task given its inputs (in the order of `Task::inputs`) and the device blocks the
/// scheduler allocated for it at launch (its `DeviceRequest`,
/// in order), returning its outputs.
pub trait Executor: Sync {
    /// Executes `task`.
    fn execute(&self, task: &Task, inputs: Vec<Value>, blocks: Vec<Block>) -> Result<Vec<Value>>;
}

/// How far I/O may run ahead of compute and behind it.
#[derive(Clone)]
pub struct SchedOptions {
    /// How far reads, uploads and spills may drift from compute.
    pub pacing: Pacing,
    /// Stops the run cleanly once cancelled.
    pub cancel: CancelToken,
    /// When fetches of spilled environments start.
    pub prefetch: Arc<dyn PrefetchPolicy>,
    /// How the disk lanes move bytes: their caps and the emulated filesystem are known
    /// before they are measured.
    pub disk: DiskIo,
    /// Memory the plan leaves unused at each sweep step (device and host together, and the
    /// device alone); a prefetch beyond the policy's window may use what stays free until its
    /// data is consumed (`None`: only the window).
    pub spare_memory_by_step: Option<BTreeMap<usize, Spare>>,
    /// Told of every finished task (`None`: nobody listens).
    pub progress: Option<Arc<dyn Progress>>,
    /// Whether the log samples the memory held after every task (a trace's counters; the
    /// report needs only the peaks, which are kept either way).
    pub samples_memory: bool,
}

impl Default for SchedOptions {
    fn default() -> Self {
        SchedOptions {
            pacing: Pacing::default(),
            cancel: CancelToken::default(),
            prefetch: Arc::new(Prefetch::default()),
            disk: DiskIo::default(),
            spare_memory_by_step: None,
            progress: None,
            samples_memory: true,
        }
    }
}

/// Runs every task of `graph` with `executor` (its receive tasks with `network`, when the run
/// has several ranks), admitting them by device memory with `governor`; returns when all are
/// done or the first fails. The log holds the graph as rewritten during the run when the
/// governor split nodes.
pub fn run(
    graph: &SweepGraph,
    executor: &dyn Executor,
    network: Option<&dyn NetworkLane>,
    options: SchedOptions,
    governor: Governor,
) -> Result<RunLog> {
    std::thread::scope(|scope| {
        let mut lanes = ThreadLanes::start(
            scope,
            executor,
            network,
            LaneId::all(graph.devices, graph.ranks),
        );
        let mut dispatcher = Dispatcher::new(graph, options, governor, Arc::new(WallClock));
        dispatcher.run(&mut lanes)
    })
}

/// Like [`run`], with every task run on the calling thread as it starts (`InlineLanes`): for
/// a graph that [`runs_inline`], where handing each task to a lane's thread would cost more
/// than the overlap it buys. The caller runs it where compute tasks run (a CPU device's pool).
pub fn run_inline(
    graph: &SweepGraph,
    executor: &dyn Executor,
    options: SchedOptions,
    governor: Governor,
) -> Result<RunLog> {
    let mut lanes = InlineLanes::new(executor);
    let mut dispatcher = Dispatcher::new(graph, options, governor, Arc::new(WallClock));
    dispatcher.run(&mut lanes)
}

/// Mean flops per compute task up to which a sweep [`runs_inline`]: 1 to 3 ms of work on two
/// cores. A lane costs two thread wake-ups per task (tens of microseconds on a virtual machine),
/// and the I/O tasks of sweeps this small (reads and writes of cores in memory) are too short
/// for overlapping them to gain as much (`benches/evolve.sh`'s χ = 64 quench sweeps ran about a
/// third faster inline).
const INLINE_FLOPS_PER_TASK: f64 = 32e6;

/// True when `graph` gains nothing from lanes of their own and may run with [`run_inline`]:
/// one device of one rank, in host memory (`shared_memory`), nothing spilled, fetched,
/// checkpointed or restored, and
/// compute tasks of `INLINE_FLOPS_PER_TASK` or fewer on average. Such a sweep's I/O tasks
/// are as small as its kernels, and handing each task to a lane's thread and back would cost
/// more than overlapping them gains.
pub fn runs_inline(graph: &SweepGraph, shared_memory: bool) -> bool {
    let tasks = || graph.tasks();
    let spills = tasks().any(|t| {
        let op = t.op.profile();
        op.spills_to.is_some() || op.fetches_from.is_some() || op.checkpoint
    });
    let compute = tasks()
        .filter(|t| t.lane == srcflow_graph::graph::Lane::Compute)
        .count();
    let small = graph.total_flops() <= INLINE_FLOPS_PER_TASK * compute.max(1) as f64;
    shared_memory && graph.devices == 1 && graph.ranks == 1 && !spills && small
}

/// Like [`run`], on a model of a machine: each task takes the time `timer` gives it, on a
/// virtual clock, and `executor` makes modelled outputs. The same dispatcher, gates, prefetch
/// policies and governor decide what runs when.
pub fn simulate(
    graph: &SweepGraph,
    executor: &dyn Executor,
    options: SchedOptions,
    governor: Governor,
    timer: &dyn TaskTimer,
) -> Result<RunLog> {
    let clock = Arc::new(VirtualClock::new());
    let mut lanes = ModelLanes::new(executor, timer, &clock);
    let mut dispatcher = Dispatcher::new(graph, options, governor, clock.clone());
    dispatcher.run(&mut lanes)
}
