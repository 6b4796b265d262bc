//! `Dispatcher`: dependency counts, ready queues, the gates that pace I/O against compute,
//! the store of values, and the graph itself, which the memory governor may rewrite.

use super::governor::{Admission, Governor};
use super::held_fetches::HeldFetches;
use super::rates::Rates;
use super::{Clock, Done, Job, Lanes, RunLog, SchedOptions};
use crate::store::{Store, Value};
use srcflow_graph::graph::TaskId;
use srcflow_graph::graph::{Lane, LaneId, SweepGraph, Task};
use srcflow_tensor::device::Block;
use srcflow_tensor::error::{Error, Result};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod compute_watch;
mod gates;
mod progress_feed;
mod rewrites;
mod work_left;

use compute_watch::ComputeWatch;
use progress_feed::ProgressFeed;
use work_left::WorkLeft;

/// Ready tasks of one lane, lowest step first.
type ReadyQueue = BinaryHeap<Reverse<(usize, usize)>>;

/// What the dispatcher does when no task of this process runs.
enum Idle {
    /// Leave the loop: everything ran, or the run failed and nothing runs.
    Stop,
    /// Dispatch again (the governor freed memory, or a failure needs no waiting).
    Retry,
    /// Wait for receive tasks, which other ranks' work completes.
    Wait,
}

/// How often the dispatcher looks for Ctrl-C while lanes are busy.
const POLL: Duration = Duration::from_millis(50);

/// The dispatcher's state.
pub(super) struct Dispatcher {
    /// The graph being run, with the half-batch rewrites made so far.
    graph: SweepGraph,
    options: SchedOptions,
    governor: Governor,
    rewrites: usize,
    /// Tasks started and not yet done, receive tasks included.
    running: usize,
    /// Receive tasks started and not yet done (they wait on other ranks, not on this one).
    network_running: usize,
    /// Whether receive tasks wait on other ranks (many run at once on the network lane), or
    /// are messages a model times (one at a time on each rank's network lane).
    receives_wait: bool,
    /// Tasks done.
    finished_count: usize,
    /// Polls of the lanes that timed out since the last report.
    quiet_polls: usize,
    /// Whether the lanes were told that the run failed.
    told_lanes: bool,
    /// Inputs each task still waits for, by node index.
    waiting_on: Vec<usize>,
    /// Tasks that have completed, by node index.
    finished: Vec<bool>,
    /// Every lane of the node, in the order they are offered work.
    lanes: Vec<LaneId>,
    ready: HashMap<LaneId, ReadyQueue>,
    busy: HashMap<LaneId, bool>,
    /// Compute and spill tasks not yet finished, by step.
    left: WorkLeft,
    /// Slices fetched (or being fetched) and not yet consumed.
    fetched: HeldFetches,
    /// When a policy asked to look again at a fetch it deferred.
    wake_at: Option<Instant>,
    store: Store,
    rates: Rates,
    /// The compute lanes' busy and idle time.
    compute: ComputeWatch,
    /// What the progress listener hears.
    progress: ProgressFeed,
    log: RunLog,
    clock: Arc<dyn Clock>,
}

impl Dispatcher {
    pub fn new(
        graph: &SweepGraph,
        options: SchedOptions,
        governor: Governor,
        clock: Arc<dyn Clock>,
    ) -> Self {
        let bound = graph.id_bound();
        let rates = Rates::for_disk(&options.disk);
        let progress = ProgressFeed::new(options.progress.clone());
        let mut d = Dispatcher {
            graph: graph.clone(),
            options,
            governor,
            rewrites: 0,
            running: 0,
            network_running: 0,
            receives_wait: false,
            finished_count: 0,
            quiet_polls: 0,
            told_lanes: false,
            waiting_on: vec![0; bound],
            finished: vec![false; bound],
            lanes: LaneId::all(graph.devices, graph.ranks),
            ready: HashMap::new(),
            busy: HashMap::new(),
            left: WorkLeft::default(),
            fetched: HeldFetches::default(),
            wake_at: None,
            store: Store::new(graph),
            rates,
            compute: ComputeWatch::default(),
            progress,
            log: RunLog::starting_at(clock.now()),
            clock,
        };
        for node in graph.task_ids() {
            let task = &graph[node];
            debug_assert!(d.lanes.contains(&task.lane_id()), "{task} has no lane");
            d.left.add(task, node.index());
            let preds = graph.incoming(node).count();
            d.waiting_on[node.index()] = preds;
            if preds == 0 {
                d.make_ready(node);
            }
        }
        d
    }

    fn make_ready(&mut self, node: TaskId) {
        let task = &self.graph[node];
        self.ready
            .entry(task.lane_id())
            .or_default()
            .push(Reverse((task.step, node.index())));
    }

    /// Dispatches and collects until every task has run, or returns the first error (which
    /// the lanes are told of, so that tasks waiting on other ranks give up).
    pub fn run(&mut self, lanes: &mut dyn Lanes) -> Result<RunLog> {
        let ran = self.run_tasks(lanes);
        if let Err(e) = &ran {
            self.tell_lanes(lanes, e);
        }
        self.compute.stalls.busy(self.clock.now());
        ran.map(|()| self.take_log())
    }

    /// The loop of [`Dispatcher::run`].
    fn run_tasks(&mut self, lanes: &mut dyn Lanes) -> Result<()> {
        let mut failure: Option<Error> = None;
        self.receives_wait = lanes.receives_wait_on_ranks();
        loop {
            if failure.is_none() && self.options.cancel.is_cancelled() {
                failure = Some(Error::Interrupted);
            }
            if failure.is_none() {
                match self.dispatch(lanes) {
                    Ok(started) => self.running += started,
                    Err(fatal) => failure = Some(fatal),
                }
                self.watch_compute();
            }
            if let Some(why) = &failure {
                self.tell_lanes(lanes, why);
            }
            if self.running == self.network_running {
                match self.when_idle(lanes, &mut failure) {
                    Idle::Stop => break,
                    Idle::Retry => continue,
                    Idle::Wait => {}
                }
            }
            let wait = self.wake_at.map_or(POLL, |at| {
                at.saturating_duration_since(self.clock.now()).min(POLL)
            });
            let Some(report) = lanes.recv(wait) else {
                self.quiet_polls += 1;
                continue;
            };
            self.quiet_polls = 0;
            self.take_report(report, &mut failure);
        }
        if let Some(e) = failure {
            return Err(e);
        }
        let (finished, total) = (self.finished_count, self.total_nodes());
        if finished != total {
            return Err(Error::Invalid(format!(
                "sweep graph stalled: {finished} of {total} tasks ran (a cycle?)"
            )));
        }
        Ok(())
    }

    /// Tells the lanes once that the run failed with `why`.
    fn tell_lanes(&mut self, lanes: &mut dyn Lanes, why: &Error) {
        if !self.told_lanes {
            lanes.fail(&why.to_string());
            self.told_lanes = true;
        }
    }

    /// What to do when no task of this process runs (receive tasks may wait on other ranks):
    /// stop when all is done or failed, let the governor free memory, or wait for the network.
    /// A refused task is an out-of-memory error unless other ranks are still working towards
    /// this one's receives (the network lane is inside an exchange, or reported since the
    /// last quiet poll).
    fn when_idle(&mut self, lanes: &dyn Lanes, failure: &mut Option<Error>) -> Idle {
        let running = self.running;
        if running == 0 && (failure.is_some() || self.finished_count == self.total_nodes()) {
            return Idle::Stop;
        }
        if failure.is_none() {
            let awaited = running > 0 && (lanes.awaits_others() || self.quiet_polls == 0);
            match self.governor.unstick(&self.graph, self.now_s(), awaited) {
                Ok(true) => return Idle::Retry,
                Ok(false) if running == 0 => return Idle::Stop,
                Ok(false) => {}
                Err(e) => *failure = Some(e),
            }
        }
        if running == 0 {
            Idle::Retry
        } else {
            Idle::Wait
        }
    }

    /// Records a lane's report that a task ended: its outputs stored and successors readied,
    /// an out-of-memory error recovered from, or the run's first failure kept in `failure`.
    fn take_report(&mut self, report: Done, failure: &mut Option<Error>) {
        self.running -= 1;
        let task = self.graph[report.node].clone();
        if !self.exclusive(task.lane_id()) {
            self.network_running -= 1;
        }
        self.busy.insert(task.lane_id(), false);
        if task.lane == Lane::Compute {
            self.compute.ended(task.device);
        }
        let seconds = (report.end - report.start).as_secs_f64();
        match report.result {
            Ok(outputs) if failure.is_none() => {
                self.log.record(
                    report.node,
                    &task,
                    report.start,
                    report.end,
                    report.primitives,
                );
                tracing::trace!(%task, seconds, "task done");
                let amount = if task.lane == Lane::Compute {
                    task.flops
                } else {
                    task.moved_bytes as f64
                };
                self.rates.record(task.lane, amount, seconds);
                self.governor
                    .on_done(report.node, &task, outputs.len(), seconds);
                self.complete(report.node, outputs);
                self.finished_count += 1;
                self.tell_progress(&task, self.finished_count);
            }
            Err(e) if failure.is_none() && e.is_out_of_memory() => {
                if let Err(fatal) = self.recover(report.node, &e, seconds) {
                    *failure = Some(fatal);
                }
            }
            Ok(_) => {}
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }

    /// The log of the finished run, with the graph as rewritten and the governor's events.
    fn take_log(&mut self) -> RunLog {
        let mut log = std::mem::take(&mut self.log);
        if self.rewrites > 0 {
            log.graph_after = Some(self.graph.clone());
        }
        log.governor = self.governor.take_log();
        let stalls = &self.compute.stalls;
        log.stalls = [stalls.left_to_right, stalls.right_to_left];
        log.record_stalls(&stalls.spells);
        log.peak = self.store.peak();
        log
    }

    /// Tells the progress listener, if any, that `task` finished as the `finished`-th task.
    fn tell_progress(&mut self, task: &Task, finished: usize) {
        let (total, graph) = (self.total_nodes(), &self.graph);
        let pass = || graph.pass_of(task.op, task.step);
        self.progress.task_done(task, finished, total, pass);
    }

    /// Seconds since the start of the run.
    fn now_s(&self) -> f64 {
        self.log.seconds_at(self.clock.now())
    }

    /// True when `lane` runs one task at a time: every lane but a network lane whose receives
    /// wait on other ranks.
    fn exclusive(&self, lane: LaneId) -> bool {
        lane.lane != Lane::Network || !self.receives_wait
    }

    /// Tasks in the graph now (rewrites add one each).
    fn total_nodes(&self) -> usize {
        self.graph.task_count()
    }

    /// Lowest sweep step with unfinished compute.
    fn frontier(&self) -> usize {
        self.left.frontier()
    }

    /// Starts the best ready task on every idle lane whose gate allows it; returns how many.
    /// Device blocks are allocated here, at launch, as a stream-ordered allocator does; a
    /// failed allocation goes to the governor, and the lane tries its (new) head again.
    fn dispatch(&mut self, lanes: &mut dyn Lanes) -> Result<usize> {
        let mut started = 0;
        self.wake_at = None;
        self.governor.on_frontier(self.frontier(), self.now_s());
        for lane in self.lanes.clone() {
            if self.busy.get(&lane).copied().unwrap_or(false) {
                continue;
            }
            while let Some(node) = self.next_admitted(lane) {
                self.ready.get_mut(&lane).expect("seen").pop();
                match self.governor.allocate(&self.graph, node) {
                    Ok(blocks) => {
                        self.launch(lanes, node, blocks);
                        started += 1;
                        if self.exclusive(lane) {
                            break;
                        }
                    }
                    Err(oom) => self.recover(node, &oom, 0.0)?,
                }
            }
        }
        Ok(started)
    }

    /// Sends `node` with its inputs and `blocks` to its lane (which stays free for more when it
    /// is the network's).
    fn launch(&mut self, lanes: &mut dyn Lanes, node: TaskId, blocks: Vec<Block>) {
        let task = self.graph[node].clone();
        let lane = task.lane_id();
        let exclusive = self.exclusive(lane);
        if task.op.profile().fetches_from.is_some() {
            self.fetched.start(&task);
        }
        let inputs = self.store.inputs(&task);
        lanes.send(Job {
            node,
            task,
            inputs,
            blocks,
        });
        self.busy.insert(lane, exclusive);
        if !exclusive {
            self.network_running += 1;
        }
        if lane.lane == Lane::Compute {
            self.compute.started(lane.device, self.clock.now());
        }
    }

    /// The head of `lane`'s queue when its gate and the governor let it start; a head the
    /// governor splits is replaced by its first half, which is asked about in turn.
    fn next_admitted(&mut self, lane: LaneId) -> Option<TaskId> {
        loop {
            let &Reverse((_, index)) = self.ready.entry(lane).or_default().peek()?;
            let node = TaskId::new(index);
            let task = self.graph[node].clone();
            if !self.may_start(&task) {
                return None;
            }
            match self.governor.admit(&self.graph, node, self.now_s()) {
                Admission::Run => return Some(node),
                Admission::Wait => return None,
                Admission::Split => {
                    self.ready.get_mut(&lane).expect("seen").pop();
                    self.split(node);
                }
                Admission::Unfold => {
                    self.ready.get_mut(&lane).expect("seen").pop();
                    self.unfold(node);
                }
            }
        }
    }

    /// Stores a finished task's outputs, releases its inputs and readies its successors.
    fn complete(&mut self, node: TaskId, outputs: Vec<Value>) {
        let task = &self.graph[node].clone();
        self.finished[node.index()] = true;
        self.store.finish(task, outputs);
        if self.options.samples_memory {
            let now = self.clock.now();
            self.log
                .sample_memory(now, self.store.in_use(), self.governor.pool_usages());
        }
        self.release_fetched(task);
        self.left.finish(task, node.index());
        let successors: Vec<TaskId> = self.graph.successors(node).collect();
        for next in successors {
            let waiting = &mut self.waiting_on[next.index()];
            *waiting -= 1;
            if *waiting == 0 {
                self.make_ready(next);
            }
        }
    }

    /// Forgets the fetched values `task` was the last to read.
    fn release_fetched(&mut self, task: &Task) {
        for id in &task.inputs {
            if !self.store.holds(id) {
                self.fetched.consumed(id);
            }
        }
    }
}
