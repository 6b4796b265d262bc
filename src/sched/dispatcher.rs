//! `Dispatcher`: dependency counts, ready queues, the gates that pace I/O against compute,
//! the store of values, and the graph itself, which the memory governor may rewrite.

use super::governor::{Admission, Governor, Recovery};
use super::held_fetches::HeldFetches;
use super::rates::Rates;
use super::stall::{StallCause, StallClock};
use super::{Clock, FetchView, Job, Lanes, RunLog, SchedOptions};
use crate::device::Block;
use crate::error::{Error, Result};
use crate::graph::{Lane, LaneId, Op, SweepGraph, Task};
use crate::store::{Store, Value};
use petgraph::stable_graph::NodeIndex;
use petgraph::visit::{EdgeRef, NodeIndexable};
use petgraph::Direction;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Ready tasks of one lane, lowest step first.
type ReadyQueue = BinaryHeap<Reverse<(usize, usize)>>;

/// How often the dispatcher looks for Ctrl-C while lanes are busy.
const POLL: Duration = Duration::from_millis(50);

/// The dispatcher's state.
pub(super) struct Dispatcher {
    /// The graph being run, with the half-batch rewrites made so far.
    graph: SweepGraph,
    options: SchedOptions,
    governor: Governor,
    rewrites: usize,
    /// Bytes spill tasks have moved off the device so far.
    spilled: u64,
    /// Inputs each task still waits for, by node index.
    waiting_on: Vec<usize>,
    /// Tasks that have completed, by node index.
    finished: Vec<bool>,
    /// Every lane of the node, in the order they are offered work.
    lanes: Vec<LaneId>,
    ready: HashMap<LaneId, ReadyQueue>,
    busy: HashMap<LaneId, bool>,
    /// Unfinished compute tasks as (step, node index): the first is the frontier.
    compute_left: BTreeSet<(usize, usize)>,
    /// Flops of unfinished compute tasks, per step.
    flops_left: BTreeMap<usize, f64>,
    /// Unfinished spill tasks, per step.
    spills_left: BTreeMap<usize, usize>,
    /// Slices fetched (or being fetched) and not yet consumed.
    fetched: HeldFetches,
    /// When the running compute task of each busy device started.
    compute_since: HashMap<usize, Instant>,
    /// When a policy asked to look again at a fetch it deferred.
    wake_at: Option<Instant>,
    store: Store,
    rates: Rates,
    stalls: StallClock,
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
        let bound = graph.graph.node_bound();
        let disk_rates = options.disk_rates;
        let mut d = Dispatcher {
            graph: graph.clone(),
            options,
            governor,
            rewrites: 0,
            spilled: 0,
            waiting_on: vec![0; bound],
            finished: vec![false; bound],
            lanes: LaneId::all(graph.devices),
            ready: HashMap::new(),
            busy: HashMap::new(),
            compute_left: BTreeSet::new(),
            flops_left: BTreeMap::new(),
            spills_left: BTreeMap::new(),
            fetched: HeldFetches::default(),
            compute_since: HashMap::new(),
            wake_at: None,
            store: Store::new(graph),
            rates: Rates::capped(disk_rates),
            stalls: StallClock::default(),
            log: RunLog::starting_at(clock.now()),
            clock,
        };
        for node in graph.graph.node_indices() {
            let task = &graph.graph[node];
            if task.lane == Lane::Compute {
                d.compute_left.insert((task.step, node.index()));
                *d.flops_left.entry(task.step).or_default() += task.flops;
            }
            if matches!(task.op, Op::Spill { .. }) {
                *d.spills_left.entry(task.step).or_default() += 1;
            }
            let preds = graph
                .graph
                .edges_directed(node, Direction::Incoming)
                .count();
            d.waiting_on[node.index()] = preds;
            if preds == 0 {
                d.make_ready(node);
            }
        }
        d
    }

    fn make_ready(&mut self, node: NodeIndex) {
        let task = &self.graph.graph[node];
        self.ready
            .entry(task.lane_id())
            .or_default()
            .push(Reverse((task.step, node.index())));
    }

    /// Dispatches and collects until every task has run, or returns the first error.
    pub fn run(&mut self, lanes: &mut dyn Lanes) -> Result<RunLog> {
        let (mut finished, mut running) = (0, 0);
        let mut failure: Option<Error> = None;
        loop {
            if failure.is_none() && self.options.cancel.is_cancelled() {
                failure = Some(Error::Interrupted);
            }
            if failure.is_none() {
                match self.dispatch(lanes) {
                    Ok(started) => running += started,
                    Err(fatal) => failure = Some(fatal),
                }
                self.watch_compute();
            }
            if running == 0 {
                if failure.is_some() || finished == self.total_nodes() {
                    break;
                }
                match self.governor.unstick(&self.graph, self.now_s()) {
                    Ok(true) => continue,
                    Ok(false) => break,
                    Err(e) => failure = Some(e),
                }
                continue;
            }
            let wait = self.wake_at.map_or(POLL, |at| {
                at.saturating_duration_since(self.clock.now()).min(POLL)
            });
            let Some(report) = lanes.recv(wait) else {
                continue;
            };
            running -= 1;
            let task = self.graph.graph[report.node].clone();
            self.busy.insert(task.lane_id(), false);
            if task.lane == Lane::Compute {
                self.compute_since.remove(&task.device);
            }
            let seconds = (report.end - report.start).as_secs_f64();
            match report.result {
                Ok(outputs) if failure.is_none() => {
                    self.log
                        .record(report.node, &task, report.start, report.end);
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
                    finished += 1;
                    self.tell_progress(&task, finished);
                }
                Err(e) if failure.is_none() && e.is_out_of_memory() => {
                    if let Err(fatal) = self.recover(report.node, &e, seconds) {
                        failure = Some(fatal);
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    failure.get_or_insert(e);
                }
            }
        }
        self.stalls.busy(self.clock.now());
        if let Some(e) = failure {
            return Err(e);
        }
        let total = self.total_nodes();
        if finished != total {
            return Err(Error::Invalid(format!(
                "sweep graph stalled: {finished} of {total} tasks ran (a cycle?)"
            )));
        }
        let mut log = std::mem::take(&mut self.log);
        if self.rewrites > 0 {
            log.graph_after = Some(self.graph.clone());
        }
        log.governor = self.governor.take_log();
        log.stalls = [self.stalls.left_to_right, self.stalls.right_to_left];
        log.record_stalls(&self.stalls.spells);
        log.peak = self.store.peak();
        Ok(log)
    }

    /// Tells the listener, if any, that `task` finished as the `finished`-th task.
    fn tell_progress(&mut self, task: &Task, finished: usize) {
        if matches!(task.op, Op::Spill { .. }) {
            self.spilled += task.moved_bytes;
        }
        if let Some(progress) = &self.options.progress {
            let pass = self.graph.pass_of(task.op, task.step);
            progress.task_done(task, pass, finished, self.total_nodes(), self.spilled);
        }
    }

    /// Seconds since the start of the run.
    fn now_s(&self) -> f64 {
        self.log.seconds_at(self.clock.now())
    }

    /// Tasks in the graph now (rewrites add one each).
    fn total_nodes(&self) -> usize {
        self.graph.graph.node_count()
    }

    /// Lowest sweep step with unfinished compute.
    fn frontier(&self) -> usize {
        self.compute_left
            .first()
            .map_or(usize::MAX, |&(step, _)| step)
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
                        break;
                    }
                    Err(oom) => self.recover(node, &oom, 0.0)?,
                }
            }
        }
        Ok(started)
    }

    /// Sends `node` with its inputs and `blocks` to its lane.
    fn launch(&mut self, lanes: &mut dyn Lanes, node: NodeIndex, blocks: Vec<Block>) {
        let task = self.graph.graph[node].clone();
        let lane = task.lane_id();
        if matches!(task.op, Op::Fetch { .. }) {
            self.fetched.start(&task);
        }
        let inputs = self.store.inputs(&task);
        lanes.send(Job {
            node,
            task,
            inputs,
            blocks,
        });
        self.busy.insert(lane, true);
        if lane.lane == Lane::Compute {
            self.stalls.busy(self.clock.now());
            self.compute_since.insert(lane.device, self.clock.now());
        }
    }

    /// Hands a failed allocation of `node` (after `seconds` of trying) to the governor and
    /// queues what it decides: the node again, or its two halves.
    fn recover(&mut self, node: NodeIndex, oom: &Error, seconds: f64) -> Result<()> {
        let at = self.now_s();
        match self.governor.recover(&self.graph, node, oom, seconds, at)? {
            Recovery::Retry => self.make_ready(node),
            Recovery::Split => self.split(node),
        }
        Ok(())
    }

    /// The head of `lane`'s queue when its gate and the governor let it start; a head the
    /// governor splits is replaced by its first half, which is asked about in turn.
    fn next_admitted(&mut self, lane: LaneId) -> Option<NodeIndex> {
        loop {
            let &Reverse((_, index)) = self.ready.entry(lane).or_default().peek()?;
            let node = NodeIndex::new(index);
            let task = self.graph.graph[node].clone();
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

    /// Rewrites `node` into two half-batch nodes and brings every count up to date: the
    /// halves are ready, its consumers wait for one more producer, its inputs have one more
    /// reader.
    fn split(&mut self, node: NodeIndex) {
        let start = self.clock.now();
        let old = self.graph.graph[node].clone();
        let halves = self
            .graph
            .split_in_halves(node)
            .expect("the governor splits only tasks with a batch of 2 or more");
        self.rewrites += 1;
        let bound = self.graph.graph.node_bound();
        self.waiting_on.resize(bound, 0);
        self.finished.resize(bound, false);
        self.compute_left.remove(&(old.step, node.index()));
        let mut flops = -old.flops;
        for half in halves {
            self.waiting_on[half.index()] = 0;
            self.finished[half.index()] = false;
            self.compute_left.insert((old.step, half.index()));
            flops += self.graph.graph[half].flops;
            self.make_ready(half);
        }
        *self.flops_left.entry(old.step).or_default() += flops;
        let consumers: Vec<NodeIndex> = self
            .graph
            .graph
            .neighbors_directed(halves[1], Direction::Outgoing)
            .collect();
        for consumer in consumers {
            self.waiting_on[consumer.index()] += 1;
        }
        for id in &old.inputs {
            self.store.add_reader(*id);
        }
        let seconds = self.clock.now().saturating_duration_since(start);
        self.governor.charge_rewrite(seconds.as_secs_f64());
    }

    /// Removes the fold `node` and brings every count up to date: its readers wait for the
    /// producers of its inputs instead, with their unfolded flops, and those inputs have its
    /// readers as readers in its stead.
    fn unfold(&mut self, node: NodeIndex) {
        let start = self.clock.now();
        let fold = self.graph.graph[node].clone();
        let before: f64 = self
            .graph
            .graph
            .neighbors_directed(node, Direction::Outgoing)
            .map(|reader| self.graph.graph[reader].flops)
            .sum();
        let readers = self
            .graph
            .unfold(node)
            .expect("the governor unfolds only fold tasks");
        self.rewrites += 1;
        self.compute_left.remove(&(fold.step, node.index()));
        let after: f64 = readers.iter().map(|&r| self.graph.graph[r].flops).sum();
        *self.flops_left.entry(fold.step).or_default() += after - before - fold.flops;
        for &reader in &readers {
            let waiting = self
                .graph
                .graph
                .neighbors_directed(reader, Direction::Incoming)
                .filter(|source| !self.finished[source.index()])
                .count();
            self.waiting_on[reader.index()] = waiting;
            if waiting == 0 {
                self.make_ready(reader);
            }
        }
        for &id in &fold.inputs {
            self.store.pass_reads(id, 1, readers.len());
        }
        let seconds = self.clock.now().saturating_duration_since(start);
        self.governor.charge_rewrite(seconds.as_secs_f64());
    }

    /// The gate of each lane: read-ahead for inputs, spill lag for the left-to-right pass,
    /// the prefetch policy and byte window for fetches. While the governor reclaims memory,
    /// nothing is read or fetched ahead of compute.
    fn may_start(&mut self, task: &Task) -> bool {
        let frontier = self.frontier();
        let ahead = task.step > frontier;
        let reads_input = task.lane == Lane::Io || task.op == Op::UploadPart;
        let read_ahead = if task.op == Op::UploadPart {
            self.options.pacing.upload_ahead_steps
        } else {
            self.options.pacing.read_ahead_steps
        };
        match task.lane {
            _ if ahead && reads_input && self.governor.reclaiming() => false,
            _ if reads_input => task.step <= frontier.saturating_add(read_ahead),
            Lane::Compute => !self.behind_on_spills(task.step),
            Lane::Upload | Lane::DiskRead if ahead && self.governor.reclaiming() => false,
            Lane::Upload | Lane::DiskRead => self.may_fetch(task, frontier),
            Lane::Io | Lane::Download | Lane::DiskWrite | Lane::Collective => true,
        }
    }

    /// True when a spill older than the allowed lag (at least one step) is unfinished at `step`.
    fn behind_on_spills(&self, step: usize) -> bool {
        let lag = self.options.pacing.spill_lag_steps.max(1);
        self.spills_left
            .keys()
            .next()
            .is_some_and(|&oldest| oldest + lag <= step)
    }

    /// Whether a fetch may start: always for the step compute is at, otherwise when there is
    /// room for it and the policy agrees; a policy that names a later moment sets the
    /// dispatcher's next wake-up.
    fn may_fetch(&mut self, task: &Task, frontier: usize) -> bool {
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
    fn room_for(&self, task: &Task, frontier: usize) -> bool {
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
    fn fetch_seconds(&self, task: &Task) -> Option<f64> {
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
    fn spare_seconds(&self, lane: LaneId) -> Option<f64> {
        let rate = self.rates.per_second(Lane::Compute)? * self.graph.active_devices() as f64;
        let running = self.compute_since.get(&lane.device).map_or(0.0, |t| {
            self.clock.now().saturating_duration_since(*t).as_secs_f64()
        });
        let mut pending: Vec<(usize, usize)> = self.ready.get(&lane)?.iter().map(|r| r.0).collect();
        pending.sort_unstable();
        let mut earlier_steps = self.flops_left.iter().peekable();
        let (mut flops_before, mut queued, mut spare) = (0.0, 0.0, f64::INFINITY);
        for (step, index) in pending {
            while let Some((_, flops)) = earlier_steps.next_if(|(&s, _)| s < step) {
                flops_before += flops;
            }
            queued += self.fetch_seconds(&self.graph.graph[NodeIndex::new(index)])?;
            let until = (flops_before / rate - running).max(0.0);
            spare = spare.min(until - queued);
        }
        Some(spare)
    }

    /// Books an idle compute lane's time to what the next compute task waits for.
    fn watch_compute(&mut self) {
        if !self.compute_since.is_empty() {
            return;
        }
        let Some(&(step, index)) = self.compute_left.first() else {
            return;
        };
        let node = NodeIndex::new(index);
        let pass = self.graph.pass_of(self.graph.graph[node].op, step);
        let compute = self.graph.graph[node].lane_id();
        let cause = if self.ready.get(&compute).is_some_and(|q| !q.is_empty()) {
            StallCause::Spill
        } else {
            self.missing_input(node)
        };
        self.stalls.idle(self.clock.now(), pass, cause);
    }

    /// What kind of producer `node` still waits for.
    fn missing_input(&self, node: NodeIndex) -> StallCause {
        let mut cause = StallCause::Other;
        for edge in self.graph.graph.edges_directed(node, Direction::Incoming) {
            if self.finished[edge.source().index()] {
                continue;
            }
            match self.graph.graph[edge.source()].op {
                Op::Fetch { .. } => return StallCause::Environment,
                Op::ReadSite { .. } => cause = StallCause::InputCore,
                _ => {}
            }
        }
        cause
    }

    /// Stores a finished task's outputs, releases its inputs and readies its successors.
    fn complete(&mut self, node: NodeIndex, outputs: Vec<Value>) {
        let task = &self.graph.graph[node].clone();
        self.finished[node.index()] = true;
        self.store.finish(task, outputs);
        let now = self.clock.now();
        self.log
            .sample_memory(now, self.store.in_use(), self.governor.pool_usages());
        self.release_fetched(task);
        if task.lane == Lane::Compute {
            self.compute_left.remove(&(task.step, node.index()));
            let step_done = self
                .compute_left
                .range((task.step, 0)..(task.step + 1, 0))
                .next()
                .is_none();
            if step_done {
                self.flops_left.remove(&task.step);
            } else if let Some(flops) = self.flops_left.get_mut(&task.step) {
                *flops -= task.flops;
            }
        }
        if matches!(task.op, Op::Spill { .. }) {
            let count = self.spills_left.get_mut(&task.step).expect("counted");
            *count -= 1;
            if *count == 0 {
                self.spills_left.remove(&task.step);
            }
        }
        let successors: Vec<NodeIndex> = self
            .graph
            .graph
            .neighbors_directed(node, Direction::Outgoing)
            .collect();
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
