//! The scheduler: runs a sweep graph's ready tasks on lanes and collects what they produce.
//!
//! One dispatcher (the calling thread) owns the store of values and the ready queues; each
//! lane is a worker thread fed over a crossbeam channel; workers report completions back over
//! another channel. A lane runs one task at a time, lowest sweep step first; kernels inside a
//! task use all the threads of the backend's pool. Values are dropped as soon as their last
//! consumer has finished. Reads of input cores run a few steps ahead of compute, fetches of
//! spilled environments start when the prefetch policy says so, and the left-to-right pass
//! waits for spills that fall behind, so no tier overflows its plan.

mod dispatcher;
mod governor;
mod interrupt;
mod log;
mod memory_event;
mod prefetch;
mod progress;
mod rates;
mod stall;

pub use governor::{Governor, GovernorLog};
pub use interrupt::{install_ctrlc_handler, interrupted};
pub use log::{MemorySample, RunLog, TaskEvent};
pub use memory_event::{MemoryEvent, MemoryEventKind};
pub use prefetch::{FetchView, Prefetch, PrefetchPolicy};
pub use progress::Progress;
pub use stall::{StallCause, Stalls};

use crate::device::Block;
use crate::error::{Error, Result};
use crate::graph::{Lane, SweepGraph, Task};
use crate::plan::Spare;
use crate::store::Value;
use crossbeam_channel::{unbounded, Receiver, Sender};
use dispatcher::Dispatcher;
use petgraph::stable_graph::NodeIndex;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

/// Runs one task given its inputs (in the order of `Task::inputs`) and the device blocks the
/// scheduler allocated for it at launch (its [`DeviceRequest`](crate::device::DeviceRequest),
/// in order), returning its outputs.
pub trait Executor: Sync {
    /// Executes `task`.
    fn execute(&self, task: &Task, inputs: Vec<Value>, blocks: Vec<Block>) -> Result<Vec<Value>>;
}

/// How far I/O may run ahead of compute and behind it.
#[derive(Clone)]
pub struct SchedOptions {
    /// An input read may start when its step is at most this far past the oldest unfinished
    /// compute step.
    pub read_ahead_steps: usize,
    /// A compute task waits while a spill this many steps older (at least 1) is unfinished, so
    /// spills falling behind hold back the left-to-right pass instead of piling up in memory.
    pub spill_lag_steps: usize,
    /// When fetches of spilled environments start.
    pub prefetch: Prefetch,
    /// Memory the plan leaves unused at each sweep step (device and host together, and the
    /// device alone); a prefetch beyond the policy's window may use what stays free until its
    /// data is consumed (`None`: only the window).
    pub spare_memory_by_step: Option<BTreeMap<usize, Spare>>,
    /// Told of every finished task (`None`: nobody listens).
    pub progress: Option<Arc<dyn Progress>>,
}

impl Default for SchedOptions {
    fn default() -> Self {
        SchedOptions {
            read_ahead_steps: 2,
            spill_lag_steps: 2,
            prefetch: Prefetch::default(),
            spare_memory_by_step: None,
            progress: None,
        }
    }
}

/// A task handed to a lane (a copy: the dispatcher may rewrite its graph meanwhile), with the
/// device blocks allocated for it.
struct Job {
    node: NodeIndex,
    task: Task,
    inputs: Vec<Value>,
    blocks: Vec<Block>,
}

/// A lane's report that a task has ended.
struct Done {
    node: NodeIndex,
    result: Result<Vec<Value>>,
    start: Instant,
    end: Instant,
}

/// Runs every task of `graph` with `executor`, admitting them by device memory with
/// `governor`; returns when all are done or the first fails. The log holds the graph as
/// rewritten during the run when the governor split nodes.
pub fn run(
    graph: &SweepGraph,
    executor: &dyn Executor,
    options: SchedOptions,
    governor: Governor,
) -> Result<RunLog> {
    let (done_tx, done_rx) = unbounded::<Done>();
    std::thread::scope(|scope| {
        let mut senders = HashMap::new();
        for lane in Lane::ALL {
            let (tx, rx) = unbounded::<Job>();
            senders.insert(lane, tx);
            let done_tx = done_tx.clone();
            scope.spawn(move || worker(executor, rx, done_tx));
        }
        let mut dispatcher = Dispatcher::new(graph, options, governor);
        let outcome = dispatcher.run(&senders, &done_rx);
        drop(senders);
        outcome
    })
}

/// A lane's thread: runs jobs until its channel closes.
fn worker(executor: &dyn Executor, jobs: Receiver<Job>, done: Sender<Done>) {
    for job in jobs {
        let task = &job.task;
        let start = Instant::now();
        let run = std::panic::AssertUnwindSafe(|| executor.execute(task, job.inputs, job.blocks));
        let result = std::panic::catch_unwind(run).unwrap_or_else(|panic| {
            Err(Error::Invalid(format!(
                "task {task} failed: {}",
                panic_message(&panic)
            )))
        });
        let _ = done.send(Done {
            node: job.node,
            result,
            start,
            end: Instant::now(),
        });
    }
}

/// The text of a caught panic.
fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "internal error".into())
}
