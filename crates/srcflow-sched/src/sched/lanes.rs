//! `Lanes`: where the dispatcher sends tasks and hears back from — one worker thread per lane
//! for real runs ([`ThreadLanes`]), or a model of each task's duration on a virtual clock for
//! simulated ones (`ModelLanes`).

use super::Executor;
use crate::store::Value;
use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError, Sender};
use srcflow_graph::graph::TaskId;
use srcflow_graph::graph::{Lane, LaneId, Task};
use srcflow_tensor::backend::{take_primitive_times, PrimitiveTimes};
use srcflow_tensor::device::Block;
use srcflow_tensor::error::{Error, Result};
use std::collections::HashMap;
use std::sync::Arc;
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

/// A task handed to a lane (a copy: the dispatcher may rewrite its graph meanwhile), with the
/// device blocks allocated for it.
pub struct Job {
    /// The task's node in the dispatcher's graph.
    pub node: TaskId,
    /// The task.
    pub task: Arc<Task>,
    /// Its inputs, in the order of `Task::inputs`.
    pub inputs: Vec<Value>,
    /// The device blocks allocated for it at launch.
    pub blocks: Vec<Block>,
}

/// A lane's report that a task has ended.
pub struct Done {
    /// The task's node in the dispatcher's graph.
    pub node: TaskId,
    /// Its outputs, or why it failed.
    pub result: Result<Vec<Value>>,
    /// When it started on its lane.
    pub start: Instant,
    /// When it ended.
    pub end: Instant,
    /// The time its backend primitives took, by kind.
    pub primitives: PrimitiveTimes,
}

/// The lanes as the dispatcher sees them.
pub(super) trait Lanes {
    /// Starts `job` on its task's lane (which is idle).
    fn send(&mut self, job: Job);
    /// The next task to end within `timeout`, if any.
    fn recv(&mut self, timeout: Duration) -> Option<Done>;
    /// Told once that the run has failed with `why`, so that tasks waiting on other ranks
    /// give up.
    fn fail(&mut self, _why: &str) {}
    /// True while other ranks work towards this one's receive tasks (the network lane is in
    /// an exchange, not waiting for this rank's own values).
    fn awaits_others(&self) -> bool {
        false
    }
    /// True when a receive task waits for other ranks, so the network lane runs many at once;
    /// false where a model times receives as messages through one network link.
    fn receives_wait_on_ranks(&self) -> bool {
        false
    }
}

/// The server of the network lane, which runs with several ranks: it takes every receive task
/// the dispatcher starts (many at once) and reports each done when its value has arrived.
pub trait NetworkLane: Sync {
    /// Serves `jobs` until their channel closes, reporting each on `done`.
    fn serve(&self, jobs: Receiver<Job>, done: Sender<Done>);
    /// Makes [`NetworkLane::serve`] fail what it waits for and return, and tells the other
    /// ranks that this one failed with `why`.
    fn abort(&self, why: &str);
    /// True while it is inside an exchange (other ranks' work completes it).
    fn awaits_others(&self) -> bool;
}

/// One worker thread per lane of each device and per shared lane, fed over crossbeam channels;
/// a lane's thread starts with its first task, so lanes a run never uses (disk lanes of a run
/// that does not spill, collectives of one device) cost nothing.
pub(super) struct ThreadLanes<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    executor: &'env dyn Executor,
    senders: HashMap<LaneId, Sender<Job>>,
    done_tx: Sender<Done>,
    done: Receiver<Done>,
    network: Option<&'env dyn NetworkLane>,
    /// The lanes' threads, joined when the lanes are dropped.
    threads: Vec<ScopedJoinHandle<'scope, ()>>,
}

impl<'scope, 'env> ThreadLanes<'scope, 'env> {
    /// Lanes whose workers run in `scope`, running tasks with `executor`; the network lanes
    /// among `lanes` are `network`'s, started now, when the run has several ranks.
    pub fn start(
        scope: &'scope Scope<'scope, 'env>,
        executor: &'env dyn Executor,
        network: Option<&'env dyn NetworkLane>,
        lanes: Vec<LaneId>,
    ) -> Self {
        let (done_tx, done) = unbounded::<Done>();
        let mut started = ThreadLanes {
            scope,
            executor,
            senders: HashMap::new(),
            done_tx,
            done,
            network,
            threads: Vec::new(),
        };
        if let Some(network) = network {
            for lane in lanes.into_iter().filter(|l| l.lane == Lane::Network) {
                let (tx, rx) = unbounded::<Job>();
                let done_tx = started.done_tx.clone();
                let thread = started.scope.spawn(move || network.serve(rx, done_tx));
                started.threads.push(thread);
                started.senders.insert(lane, tx);
            }
        }
        started
    }

    /// A new worker thread running the jobs sent on the channel returned.
    fn start_worker(&mut self) -> Sender<Job> {
        let (tx, rx) = unbounded::<Job>();
        let (executor, done_tx) = (self.executor, self.done_tx.clone());
        let thread = self.scope.spawn(move || worker(executor, rx, done_tx));
        self.threads.push(thread);
        tx
    }
}

/// Closes the lanes' channels and joins their threads. A scope's end waits only for its
/// threads' closures, not for their thread-locals to be torn down; joining waits for both, so
/// what those hold (the GEMM library's per-thread workspace) is freed when a run returns, not
/// while the next call runs.
impl Drop for ThreadLanes<'_, '_> {
    fn drop(&mut self) {
        self.senders.clear();
        for thread in self.threads.drain(..) {
            if let Err(panic) = thread.join() {
                if !std::thread::panicking() {
                    std::panic::resume_unwind(panic);
                }
            }
        }
    }
}

impl Lanes for ThreadLanes<'_, '_> {
    fn fail(&mut self, why: &str) {
        if let Some(network) = self.network {
            network.abort(why);
        }
    }

    fn awaits_others(&self) -> bool {
        self.network.is_some_and(|n| n.awaits_others())
    }

    fn receives_wait_on_ranks(&self) -> bool {
        self.network.is_some()
    }

    fn send(&mut self, job: Job) {
        let lane = job.task.lane_id();
        if !self.senders.contains_key(&lane) {
            let sender = self.start_worker();
            self.senders.insert(lane, sender);
        }
        self.senders[&lane].send(job).expect("lane alive");
    }

    fn recv(&mut self, timeout: Duration) -> Option<Done> {
        match self.done.recv_timeout(timeout) {
            Ok(done) => Some(done),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => unreachable!("lanes outlive the dispatcher"),
        }
    }
}

/// A lane's thread: runs jobs until its channel closes.
fn worker(executor: &dyn Executor, jobs: Receiver<Job>, done: Sender<Done>) {
    for job in jobs {
        let _ = done.send(run_job(executor, job));
    }
}

/// Runs `job` with `executor` on the calling thread: its report, timed, with the time its
/// backend primitives took.
pub(super) fn run_job(executor: &dyn Executor, job: Job) -> Done {
    let start = Instant::now();
    let result = execute(executor, &job.task, job.inputs, job.blocks);
    Done {
        node: job.node,
        result,
        start,
        end: Instant::now(),
        primitives: take_primitive_times(),
    }
}

/// Runs `task`, turning a panic into an error that names it.
pub(super) fn execute(
    executor: &dyn Executor,
    task: &Task,
    inputs: Vec<Value>,
    blocks: Vec<Block>,
) -> Result<Vec<Value>> {
    let run = std::panic::AssertUnwindSafe(|| executor.execute(task, inputs, blocks));
    std::panic::catch_unwind(run).unwrap_or_else(|panic| {
        Err(Error::Invalid(format!(
            "task {task} failed: {}",
            panic_message(&panic)
        )))
    })
}

/// The text of a caught panic.
fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "internal error".into())
}
