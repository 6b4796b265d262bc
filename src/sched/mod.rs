//! The scheduler: runs a sweep graph's ready tasks on lanes and collects what they produce.
//!
//! One dispatcher (the calling thread) owns the store of values and the ready queues; each
//! lane is a worker thread fed over a crossbeam channel; workers report completions back over
//! another channel. A lane runs one task at a time, lowest sweep step first; kernels inside a
//! task use all the threads of the backend's pool. Values are dropped as soon as their last
//! consumer has finished.

mod log;
mod store;

pub use log::{RunLog, TaskEvent};

use crate::error::{Error, Result};
use crate::graph::{Lane, SweepGraph, Task};
use crate::tensor::Tensor;
use crossbeam_channel::{unbounded, Receiver, Sender};
use petgraph::stable_graph::NodeIndex;
use petgraph::Direction;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::Instant;
use store::Store;

/// Runs one task given its inputs (in the order of `Task::inputs`), returning its outputs.
pub trait Executor: Sync {
    /// Executes `task`.
    fn execute(&self, task: &Task, inputs: Vec<Arc<Tensor>>) -> Result<Vec<Tensor>>;
}

/// How far input reads may run ahead of compute, in sweep steps.
#[derive(Clone, Copy, Debug)]
pub struct SchedOptions {
    /// An I/O task may start when its step is at most this far past the oldest unfinished compute step.
    pub read_ahead_steps: usize,
}

impl Default for SchedOptions {
    fn default() -> Self {
        SchedOptions {
            read_ahead_steps: 2,
        }
    }
}

/// A task handed to a lane.
struct Job {
    node: NodeIndex,
    inputs: Vec<Arc<Tensor>>,
}

/// A lane's report that a task has ended.
struct Done {
    node: NodeIndex,
    result: Result<Vec<Tensor>>,
    start: Instant,
    end: Instant,
}

/// Ready tasks of one lane, lowest step first.
type ReadyQueue = BinaryHeap<Reverse<(usize, usize)>>;

/// Runs every task of `graph` with `executor`; returns when all are done or the first fails.
pub fn run(graph: &SweepGraph, executor: &dyn Executor, options: SchedOptions) -> Result<RunLog> {
    let lanes = [Lane::Compute, Lane::Io];
    let (done_tx, done_rx) = unbounded::<Done>();
    std::thread::scope(|scope| {
        let mut senders = HashMap::new();
        for lane in lanes {
            let (tx, rx) = unbounded::<Job>();
            senders.insert(lane, tx);
            let done_tx = done_tx.clone();
            scope.spawn(move || worker(graph, executor, rx, done_tx));
        }
        let mut dispatcher = Dispatcher::new(graph, options);
        let outcome = dispatcher.run(&senders, &done_rx);
        drop(senders);
        outcome
    })
}

/// A lane's thread: runs jobs until its channel closes.
fn worker(graph: &SweepGraph, executor: &dyn Executor, jobs: Receiver<Job>, done: Sender<Done>) {
    for job in jobs {
        let task = &graph.graph[job.node];
        let start = Instant::now();
        let run = std::panic::AssertUnwindSafe(|| executor.execute(task, job.inputs));
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

/// The dispatcher's state: dependency counts, ready queues, the store and the log.
struct Dispatcher<'g> {
    graph: &'g SweepGraph,
    options: SchedOptions,
    waiting_on: HashMap<NodeIndex, usize>,
    ready: HashMap<Lane, ReadyQueue>,
    busy: HashMap<Lane, bool>,
    unfinished_compute: BTreeMap<usize, usize>,
    store: Store,
    log: RunLog,
}

impl<'g> Dispatcher<'g> {
    fn new(graph: &'g SweepGraph, options: SchedOptions) -> Self {
        let mut d = Dispatcher {
            graph,
            options,
            waiting_on: HashMap::new(),
            ready: HashMap::new(),
            busy: HashMap::new(),
            unfinished_compute: BTreeMap::new(),
            store: Store::new(graph),
            log: RunLog::new(),
        };
        for node in graph.graph.node_indices() {
            let task = &graph.graph[node];
            if task.lane == Lane::Compute {
                *d.unfinished_compute.entry(task.step).or_default() += 1;
            }
            let preds = graph
                .graph
                .edges_directed(node, Direction::Incoming)
                .count();
            d.waiting_on.insert(node, preds);
            if preds == 0 {
                d.make_ready(node);
            }
        }
        d
    }

    fn make_ready(&mut self, node: NodeIndex) {
        let task = &self.graph.graph[node];
        self.ready
            .entry(task.lane)
            .or_default()
            .push(Reverse((task.step, node.index())));
    }

    /// Dispatches and collects until every task has run, or returns the first error.
    fn run(&mut self, lanes: &HashMap<Lane, Sender<Job>>, done: &Receiver<Done>) -> Result<RunLog> {
        let total = self.graph.graph.node_count();
        let mut finished = 0;
        let mut running = 0;
        let mut failure: Option<Error> = None;
        loop {
            if failure.is_none() {
                running += self.dispatch(lanes);
            }
            if running == 0 {
                break;
            }
            let report = done.recv().expect("a lane is running");
            running -= 1;
            let task = &self.graph.graph[report.node];
            self.busy.insert(task.lane, false);
            match report.result {
                Ok(outputs) if failure.is_none() => {
                    self.log.record(report.node, task, report.start, report.end);
                    self.complete(report.node, outputs);
                    finished += 1;
                }
                Ok(_) => {}
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        if finished != total {
            return Err(Error::Invalid(format!(
                "sweep graph stalled: {finished} of {total} tasks ran (a cycle?)"
            )));
        }
        Ok(std::mem::take(&mut self.log))
    }

    /// Starts the best ready task on every idle lane; returns how many were started.
    fn dispatch(&mut self, lanes: &HashMap<Lane, Sender<Job>>) -> usize {
        let mut started = 0;
        let frontier = self
            .unfinished_compute
            .keys()
            .next()
            .copied()
            .unwrap_or(usize::MAX);
        for (&lane, sender) in lanes {
            if self.busy.get(&lane).copied().unwrap_or(false) {
                continue;
            }
            let queue = self.ready.entry(lane).or_default();
            let Some(&Reverse((step, index))) = queue.peek() else {
                continue;
            };
            if lane == Lane::Io && step > frontier.saturating_add(self.options.read_ahead_steps) {
                continue;
            }
            queue.pop();
            let node = NodeIndex::new(index);
            let inputs = self.store.inputs(&self.graph.graph[node]);
            sender.send(Job { node, inputs }).expect("lane alive");
            self.busy.insert(lane, true);
            started += 1;
        }
        started
    }

    /// Stores a finished task's outputs, releases its inputs and readies its successors.
    fn complete(&mut self, node: NodeIndex, outputs: Vec<Tensor>) {
        let task = &self.graph.graph[node];
        self.store.finish(task, outputs);
        if task.lane == Lane::Compute {
            let count = self
                .unfinished_compute
                .get_mut(&task.step)
                .expect("counted");
            *count -= 1;
            if *count == 0 {
                self.unfinished_compute.remove(&task.step);
            }
        }
        let successors: Vec<NodeIndex> = self
            .graph
            .graph
            .neighbors_directed(node, Direction::Outgoing)
            .collect();
        for next in successors {
            let waiting = self.waiting_on.get_mut(&next).expect("known node");
            *waiting -= 1;
            if *waiting == 0 {
                self.make_ready(next);
            }
        }
    }
}
