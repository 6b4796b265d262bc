//! `Engine`: builds the sweep graph of a stack, runs it on a backend, and reports.

mod backend_values;
mod builder;
mod checkpointing;
mod collective;
mod device_use;
mod executor;
mod left_edge;
mod memory_report;
mod model_executor;
mod output_slots;
mod plan_cache;
mod ranked;
mod report;
mod run;
mod session;
mod sink;
mod source;
mod tiering;

pub use backend_values::BackendValues;
pub use builder::EngineBuilder;
pub use checkpointing::CheckpointUse;
pub use device_use::DeviceUse;
use left_edge::LeftEdgeSink;
pub use memory_report::MemoryReport;
use plan_cache::PlanKey;
pub use plan_cache::{Prepared, PLANS_KEPT, PLAN_TASKS_KEPT};
pub use report::{Internals, LaneUse, Report};
pub use run::Run;
pub use session::{Session, SessionStats, BACKENDS_KEPT};
pub use sink::{CoreSink, MemorySink};
pub use source::{CoreSource, MemorySource};
pub use tiering::Tiering;

use crate::alloc;
use crate::backend::Backend;
use crate::cancel::CancelToken;
use crate::device::{FaultyPool, MemoryPool, PoolConfig, SimulatedPool};
use crate::error::{Error, Result};
use crate::graph::{GraphOptions, Op, SweepGraph};
use crate::plan::{self, Drift, MemoryProfile, Plan, PlanRequest, PROCESS_BASELINE};
use crate::ranks::{AcrossNodes, Exchange, ExchangeLane, RankGraph, RankLayout, Transport};
use crate::sched::{self, Governor, Pacing, Progress, RunLog, SchedOptions};
use crate::sim::MachineModel;
use crate::store::DiskTier;
use crate::train::{Stack, StackShape};
use crate::Tier;
use executor::TaskRouter;
use model_executor::ModelExecutor;
use std::sync::Arc;
use std::time::Instant;

/// What a user chooses for one SRC run: the graph's shape, the sketches' seed and the threads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// The choices that shape the sweep graph: χ̄, batches, cutoff, oversampling, element
    /// type, devices, folding.
    pub graph: GraphOptions,
    /// Seed of the random test matrices.
    pub seed: u64,
    /// Worker threads for kernels (0: one per core), shared between the devices; on the CPU
    /// backend each device is a worker group with its share of the threads.
    pub threads: usize,
}

impl Options {
    /// Options with output bond `chi_out` and defaults for the rest (seed 0, all cores).
    pub fn new(chi_out: usize) -> Self {
        Options {
            graph: GraphOptions::new(chi_out),
            seed: 0,
            threads: 0,
        }
    }
}

/// Whose memory pools a run's governor allocates from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DeviceMemory {
    /// The backends' own pools: a real run.
    Backend,
    /// Simulated pools: a run on a machine model.
    Simulated,
}

/// Runs SRC sweeps on the backends of its devices.
pub struct Engine {
    options: Options,
    tiering: Tiering,
    /// One backend per device, each with its share of the threads (the session's).
    backends: Vec<Arc<dyn Backend>>,
    /// What outlives the engine's runs: backends and plans.
    session: Session,
    progress: Option<Arc<dyn Progress>>,
    /// How far reads, uploads and spills may drift from compute.
    pacing: Pacing,
    /// Whether [`Engine::run`] keeps the log of every task (for a trace).
    keeps_log: bool,
    /// Stops its runs cleanly once cancelled.
    cancel: CancelToken,
    /// The folder where its runs keep a checkpoint, and resume from it.
    checkpoint: Option<std::path::PathBuf>,
    /// How often the checkpoint keeps environments and projected environments.
    checkpoint_every: crate::checkpoint::CheckpointEvery,
    /// The transport to the other ranks and this one's place among them, when it is one of
    /// several.
    ranks: Option<(Arc<dyn Transport>, RankLayout)>,
}

impl Engine {
    /// An engine on the CPU backend: each device a worker group with its share of the threads
    /// (at least one each); [`EngineBuilder::backend`] picks another.
    pub fn new(options: Options) -> Result<Self> {
        EngineBuilder::new(options).build()
    }

    /// A builder for an engine computing with output bond `chi_out`, every other choice at its
    /// default until set.
    pub fn builder(chi_out: usize) -> EngineBuilder {
        EngineBuilder::new(Options::new(chi_out))
    }

    /// The first device's backend, which speaks for all (they are of one kind).
    fn backend(&self) -> &dyn Backend {
        self.backends[0].as_ref()
    }

    /// Kernel threads of each device.
    fn threads_per_device(&self) -> Vec<usize> {
        self.backends.iter().map(|b| b.threads()).collect()
    }

    /// The Chrome trace of the whole run of `graph` (`log`, this process's): its own, or with
    /// several ranks every rank's joined on rank 0 (`None` on the others). Every rank of a run
    /// calls it, after the run, or none does.
    pub fn whole_trace(
        &self,
        graph: &SweepGraph,
        log: &RunLog,
    ) -> Result<Option<serde_json::Value>> {
        match &self.ranks {
            Some((transport, layout)) => ranked::join_traces(&**transport, *layout, graph, log),
            None => Ok(Some(crate::trace::chrome_trace(graph, log))),
        }
    }

    /// The first device this process computes on (0 unless it is a rank after the first).
    fn first_device(&self) -> usize {
        self.own_devices().start
    }

    /// The devices this process computes on: all, or its rank's share.
    fn own_devices(&self) -> std::ops::Range<usize> {
        let devices = self.options.graph.devices;
        match &self.ranks {
            Some((_, layout)) => {
                let own = layout.devices_of(layout.rank, devices);
                own.start..own.end
            }
            None => 0..devices,
        }
    }

    /// The options this engine runs with.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The out-of-core choices this engine runs with.
    pub fn tiering(&self) -> &Tiering {
        &self.tiering
    }

    /// The graph this engine would run for `stack`, with its plan when budgets are set.
    pub fn prepare(&self, stack: &StackShape) -> Result<(SweepGraph, Option<Plan>)> {
        let prepared = self.prepared(stack)?;
        Ok(((*prepared.graph).clone(), prepared.plan))
    }

    /// Like [`Engine::prepare`], shared: the session's graph and plan for `stack` when it made
    /// them for the same shapes, options and budgets before, else new ones it keeps.
    pub fn prepared(&self, stack: &StackShape) -> Result<Prepared> {
        self.prepared_for(stack, self.backend().shares_host_memory())
    }

    /// The graph and plan for `stack` on a modelled machine (a GPU has memory of its own).
    pub fn prepare_on(
        &self,
        stack: &StackShape,
        machine: &MachineModel,
    ) -> Result<(SweepGraph, Option<Plan>)> {
        let prepared = self.prepared_for(stack, !machine.device_has_own_memory)?;
        Ok(((*prepared.graph).clone(), prepared.plan))
    }

    /// The graph and plan for `stack`, from the session's plans or made now;
    /// `shared_memory` when device memory is host memory.
    fn prepared_for(&self, stack: &StackShape, shared_memory: bool) -> Result<Prepared> {
        let key = PlanKey {
            stack: stack.clone(),
            graph: self.options.graph,
            pacing: self.pacing,
            windows: self.tiering.prefetch.windows_to_try(2 * stack.sites()),
            shared_memory,
        };
        let budgets = self.tiering.budgets.as_ref();
        self.session.prepared(key, budgets, || {
            let (graph, plan) = self.prepare_for(stack, shared_memory)?;
            Ok(Prepared {
                graph: Arc::new(graph),
                plan,
            })
        })
    }

    /// The graph and plan for `stack`, planned now; `shared_memory` when device memory is
    /// host memory. A plan that had to narrow the policy's prefetch window depends on its
    /// budgets: it has no budget floor.
    fn prepare_for(
        &self,
        stack: &StackShape,
        shared_memory: bool,
    ) -> Result<(SweepGraph, Option<Plan>)> {
        let Some(budgets) = &self.tiering.budgets else {
            return Ok((SweepGraph::build(stack, &self.options.graph)?, None));
        };
        let plan_with = |window| {
            plan::plan(&PlanRequest {
                stack,
                graph: self.options.graph,
                budgets,
                drift: self.drift(window),
                shared_memory,
            })
        };
        let steps = 2 * stack.sites();
        let windows = self.tiering.prefetch.windows_to_try(steps);
        let mut refusal = None;
        for (tried, &window) in windows.iter().enumerate() {
            match plan_with(window) {
                Ok((mut plan, mut graph)) => {
                    Self::log_plan(&plan);
                    if tried > 0 {
                        plan.same_from = None;
                    }
                    graph.planned_fetch_window = Some(window);
                    return Ok((graph, Some(plan)));
                }
                Err(e) => refusal = Some(e),
            }
        }
        let refusal = refusal.expect("a policy has at least one window");
        let narrowest = windows.into_iter().min().unwrap_or(0);
        let fitting = (0..narrowest).rev().find(|&w| plan_with(w).is_ok());
        Err(match fitting {
            Some(window) => narrower_window_fits(refusal, window),
            None => refusal,
        })
    }

    /// Logs what `plan` put where.
    fn log_plan(plan: &Plan) {
        tracing::info!(
            batch_cols = plan.batch_cols,
            fetch_window = plan.fetch_window,
            device = plan.count_on(Tier::Device),
            host = plan.count_on(Tier::Host),
            disk = plan.count_on(Tier::Disk),
            "plan: environments per tier"
        );
    }

    /// How far the scheduler will let I/O drift from compute with a prefetch window of
    /// `window` steps (the planner's model of it).
    fn drift(&self, window: usize) -> Drift {
        Drift {
            read_ahead_steps: self.pacing.read_ahead_steps,
            upload_ahead_steps: self.pacing.upload_ahead_steps,
            fetch_ahead_steps: window,
            spill_lag_steps: self.pacing.spill_lag_steps,
        }
    }

    /// The scheduler's options for `graph`: the policy's prefetch window, narrowed to the one
    /// the graph was planned for.
    fn sched_options(&self, graph: &SweepGraph) -> SchedOptions {
        let prefetch = &self.tiering.prefetch;
        let narrowed = graph.planned_fetch_window.and_then(|w| prefetch.within(w));
        SchedOptions {
            prefetch: narrowed.unwrap_or_else(|| Arc::clone(prefetch)),
            disk_rates: self.tiering.disk_rates,
            progress: self.progress.clone(),
            pacing: self.pacing,
            cancel: self.cancel.clone(),
            samples_memory: self.keeps_log,
            ..SchedOptions::default()
        }
    }

    /// Computes the compressed product of an in-memory stack: the output train, the report
    /// and, when the engine keeps it, the log of every task.
    pub fn run(&self, stack: &Stack) -> Result<Run> {
        let prepared = self.telling_ranks(self.prepared(&stack.shape()))?;
        let graph = &*prepared.graph;
        let sink = MemorySink::new(graph.output_kind(), graph.sites());
        let (report, log) = self.run_graph_logged(graph, &MemorySource::new(stack), &sink)?;
        let output = match &self.ranks {
            Some((transport, _)) => ranked::share_output(&**transport, graph, sink)?,
            None => sink.into_train()?,
        };
        self.remove_checkpoint()?;
        Ok(Run {
            output,
            report,
            log: self.keeps_log.then_some(log),
            graph: Arc::clone(&prepared.graph),
        })
    }

    /// Runs `graph`, reading cores from `source` and handing output cores to `sink`.
    pub fn run_graph(
        &self,
        graph: &SweepGraph,
        source: &dyn CoreSource,
        sink: &dyn CoreSink,
    ) -> Result<Report> {
        self.run_graph_logged(graph, source, sink)
            .map(|(report, _)| report)
    }

    /// Like [`Engine::run_graph`], also returning the log of every task (for traces); the log
    /// samples the memory held after every task only when the engine keeps its log
    /// ([`EngineBuilder::trace`]). Waits for the session's other runs to end first
    /// ([`Session::take_turn`]).
    pub fn run_graph_logged(
        &self,
        graph: &SweepGraph,
        source: &dyn CoreSource,
        sink: &dyn CoreSink,
    ) -> Result<(Report, RunLog)> {
        self.run_graph_watched(graph, source, sink, &mut || {})
    }

    /// Like [`Engine::run_graph_logged`], with the calling thread calling `watch` about every
    /// [`crate::WATCH_EVERY`] while the run goes on elsewhere: where a caller looks for its own
    /// reasons to stop (a signal) and cancels the engine's [`CancelToken`]. A rank of several
    /// dispatches on the calling thread and never watches (its launcher handles signals).
    pub fn run_graph_watched(
        &self,
        graph: &SweepGraph,
        source: &dyn CoreSource,
        sink: &dyn CoreSink,
        watch: &mut dyn FnMut(),
    ) -> Result<(Report, RunLog)> {
        let _turn = self.session.take_turn();
        self.telling_ranks(self.run_rank_of(graph, source, sink, watch))
    }

    /// The session this engine's backends and plans belong to.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// `result`; an error is first told to the other ranks, if any, which would otherwise
    /// wait for this one in their next exchange.
    fn telling_ranks<T>(&self, result: Result<T>) -> Result<T> {
        if let (Err(error), Some((transport, _))) = (&result, &self.ranks) {
            transport.abort(&error.to_string());
        }
        result
    }

    /// Runs this process's part of `graph`: all of it, or its rank's share.
    fn run_rank_of(
        &self,
        graph: &SweepGraph,
        source: &dyn CoreSource,
        sink: &dyn CoreSink,
        watch: &mut dyn FnMut(),
    ) -> Result<(Report, RunLog)> {
        let checkpoint = self.open_checkpoint(graph, source)?;
        let resumed = match &checkpoint {
            Some(checkpoint) => Some(self.checkpointed(graph, checkpoint)?),
            None => None,
        };
        let graph = resumed.as_ref().map_or(graph, |(g, _)| g);
        let rank_graph = self
            .ranks
            .as_ref()
            .map(|(_, layout)| RankGraph::of(graph, *layout, self.backend().shares_host_memory()));
        let network = match (&rank_graph, &self.ranks) {
            (Some(r), Some((t, _))) => {
                ranked::agree_on_exchanges(&**t, &r.exchanges)?;
                Some(ExchangeLane::new(Arc::clone(t), r.exchanges.clone()))
            }
            _ => None,
        };
        let graph = rank_graph.as_ref().map_or(graph, |r| &r.graph);
        let kill = self.kill();
        let disk = self.disk_tier(graph)?;
        let edge = graph.left_edge().map(|last| LeftEdgeSink::new(sink, last));
        let sink = edge.as_ref().map_or(sink, |edge| edge as &dyn CoreSink);
        let router = TaskRouter {
            graph,
            posts: network.as_ref().map(ExchangeLane::poster),
            backends: &self.backends,
            seed: self.options.seed,
            fault: self.tiering.device.inject_failure.clone(),
            source,
            sink,
            disk: disk.as_ref(),
            checkpoint: checkpoint.as_ref(),
            kill: kill.as_deref(),
            slots: Default::default(),
            bonds: std::sync::Mutex::new(vec![0; graph.sites() - 1]),
        };
        let (sched, governor, cap) = self.schedule(graph, DeviceMemory::Backend)?;
        let lease = alloc::CapLease::new(cap.map(with_memory_held_before));
        tracing::info!(
            sites = graph.sites(),
            tasks = graph.graph.node_count(),
            gflop = graph.total_flops() / 1e9,
            "sweep starts"
        );
        let (start, blocks) = (Instant::now(), alloc::stats());
        let network_lane = network.as_ref().map(|n| n as &dyn sched::NetworkLane);
        let log = match network_lane {
            None if sched::runs_inline(graph, self.backend().shares_host_memory()) => {
                self.run_inline(graph, &router, sched, governor, watch)
            }
            None => {
                watched_on_own_thread(watch, || sched::run(graph, &router, None, sched, governor))
            }
            Some(network) => sched::run(graph, &router, Some(network), sched, governor),
        };
        let (wall_s, after) = (start.elapsed().as_secs_f64(), alloc::stats());
        drop(lease);
        let log = match (&self.ranks, &network) {
            (Some((transport, _)), Some(lane)) => ranked::agree(&**transport, lane, log),
            _ => log,
        };
        let mut log = log?;
        if rank_graph.is_some() || resumed.is_some() {
            log.graph_after.get_or_insert_with(|| graph.clone());
        }
        log.resumed = resumed.as_ref().map(|(_, resumed)| *resumed);
        log.threads_per_device = self.threads_per_device();
        let mut report = Report::new(graph, &log, wall_s, self.backend());
        let own = self.own_devices();
        report.threads = self.backends[own].iter().map(|b| b.threads()).sum();
        report.network = network.as_ref().map_or(vec![], ExchangeLane::take_uses);
        tracing::info!(
            left_to_right_s = report.left_to_right_s,
            right_to_left_s = report.right_to_left_s,
            wall_s = report.wall_s,
            "sweep done"
        );
        report.out_bonds = router.written_bonds();
        if let Some(edge) = &edge {
            edge.correct(&mut report.out_bonds);
        }
        if let (Some(checkpoint), Some((_, resumed))) = (&checkpoint, &resumed) {
            let used = CheckpointUse::of(checkpoint, *resumed);
            report.checkpoint = Some(used);
        }
        report.blocks_mapped = after.mapped - blocks.mapped;
        report.blocks_released = after.unmapped - blocks.unmapped;
        Ok((report, log))
    }

    /// Runs `graph` with every task on one thread of its device's compute stream (the CPU
    /// backend's pool), as [`sched::run_inline`] does: kernels need no hand-over there. The
    /// calling thread calls `watch` meanwhile.
    fn run_inline(
        &self,
        graph: &SweepGraph,
        router: &TaskRouter<'_>,
        sched: SchedOptions,
        governor: Governor,
        watch: &mut dyn FnMut(),
    ) -> Result<RunLog> {
        let mut given = Some((sched, governor));
        let mut log = None;
        let mut work = || {
            let (sched, governor) = given.take().expect("the backend runs the sweep once");
            log = Some(sched::run_inline(graph, router, sched, governor));
        };
        self.backends[self.first_device()].within_watched(&mut work, watch);
        log.expect("the backend ran the sweep")
    }

    /// Simulates the run of `graph` on `machine`: the same plan, scheduler, prefetch policy and
    /// memory governor, with each task taking the time the model gives it (the disk lanes capped
    /// by the tiering's disk bandwidth). Returns the report and log of the modelled run. A
    /// graph of several ranks takes [`Self::simulate_across_nodes`], which also knows which
    /// of their all-gathers land in place.
    pub fn simulate(&self, graph: &SweepGraph, machine: &MachineModel) -> Result<(Report, RunLog)> {
        self.simulate_exchanging(graph, &[], machine)
    }

    /// Simulates the run of several ranks `ranked` ([`crate::ranks::across_nodes`]) on
    /// `machine`, as [`Self::simulate`] does, with the S all-gathers its ranks receive in place
    /// where the devices compute in host memory ([`crate::ranks::Exchange::in_place`]).
    pub fn simulate_across_nodes(
        &self,
        ranked: &AcrossNodes,
        machine: &MachineModel,
    ) -> Result<(Report, RunLog)> {
        self.simulate_exchanging(&ranked.graph, &ranked.exchanges, machine)
    }

    /// Simulates `graph`, whose ranks run `exchanges`, on `machine`.
    fn simulate_exchanging(
        &self,
        graph: &SweepGraph,
        exchanges: &[Exchange],
        machine: &MachineModel,
    ) -> Result<(Report, RunLog)> {
        machine.validate()?;
        if graph.ranks > 1 {
            machine.check_network()?;
        }
        let machine = machine.clone().with_disk_caps(self.tiering.disk_rates);
        let (sched, governor, _) = self.schedule(graph, DeviceMemory::Simulated)?;
        let threads = self.threads_per_device();
        let timer = machine.timer(&threads).with_exchanges(exchanges);
        let executor = ModelExecutor::new(graph);
        let mut log = sched::simulate(graph, &executor, sched, governor, &timer)?;
        log.threads_per_device = threads;
        log.simulated = true;
        let wall = log.events.iter().map(|e| e.end).fold(0.0, f64::max);
        let mut report = Report::new(graph, &log, wall, self.backend());
        report.backend = format!("model: {}", machine.name);
        // The simulator's own resident memory says nothing of the modelled run's.
        report.peak_rss_bytes = None;
        let ran = log.graph_after.as_ref().unwrap_or(graph);
        report.model_coverage = crate::sim::coverage(&machine, ran, &log.threads_per_device);
        Ok((report, log))
    }

    /// The scheduler's options, the memory governor over a fresh device pool, and the cap on
    /// the process's memory that the plan allows (`None` without budgets).
    fn schedule(
        &self,
        graph: &SweepGraph,
        memory: DeviceMemory,
    ) -> Result<(SchedOptions, Governor, Option<u64>)> {
        let device = &self.tiering.device;
        let pools = (0..graph.devices)
            .map(|device| self.device_pool(device, memory))
            .collect::<Result<_>>()?;
        let governor = Governor::new(
            pools,
            device.recovery_budget,
            device.capacity_schedule.clone(),
        );
        let options = self.sched_options(graph);
        let drift = self.drift(options.prefetch.window_steps());
        let profile = self
            .tiering
            .budgets
            .as_ref()
            .map(|_| MemoryProfile::of(graph, drift));
        let shared = self.backend().shares_host_memory();
        let cap = profile.as_ref().map(|p| p.process_peak(shared));
        let allowed = match &self.tiering.budgets {
            Some(budgets) if shared => budgets.host.saturating_sub(PROCESS_BASELINE),
            _ => 0,
        };
        let sched = SchedOptions {
            spare_memory_by_step: profile.map(|p| p.spare_by_step(allowed)),
            ..options
        };
        Ok((sched, governor, cap))
    }

    /// The memory of device `device`: its backend's pool, or a simulated one, with the device
    /// budget as capacity (unlimited without budgets) and the faults the tiering asks for
    /// (injected allocation failures on the rank's first device only).
    fn device_pool(&self, device: usize, memory: DeviceMemory) -> Result<Arc<dyn MemoryPool>> {
        let options = &self.tiering.device;
        let config = PoolConfig {
            capacity: self.tiering.budgets.as_ref().map(|b| b.device),
            fragment: options.fragment,
        };
        let pool = match memory {
            DeviceMemory::Backend => self.backends[device].memory_pool(config)?,
            DeviceMemory::Simulated => Box::new(SimulatedPool::new(config)?),
        };
        Ok(
            match options
                .inject_oom
                .clone()
                .filter(|_| device == self.first_device())
            {
                Some(fault) => Arc::new(FaultyPool::new(pool, fault)),
                None => Arc::from(pool),
            },
        )
    }

    /// A scratch directory for the run when `graph` spills to disk.
    fn disk_tier(&self, graph: &SweepGraph) -> Result<Option<DiskTier<'_>>> {
        let spills = graph
            .graph
            .node_weights()
            .any(|t| t.op == Op::Spill { to: Tier::Disk });
        if !spills {
            return Ok(None);
        }
        let parent = self
            .tiering
            .budgets
            .as_ref()
            .map_or_else(std::env::temp_dir, |b| b.scratch_dir.clone());
        let fault = self.tiering.disk_fault.as_ref();
        DiskTier::create(&parent, self.tiering.disk_rates, fault, self.cancel.clone()).map(Some)
    }
}

/// The cap on the process's resident memory for a run whose plan allows `peak` (its values and
/// [`PROCESS_BASELINE`]), raised by what the process already holds beyond that baseline when the
/// run starts: a host program's own data (a Python interpreter, NumPy, the input arrays) is not
/// the run's, and counting it would make the block cache unmap what it should keep. When no
/// other run is under way, the blocks cached since the last one (freed after it ended) are
/// unmapped first, so that they are neither counted as held nor kept.
fn with_memory_held_before(peak: u64) -> u64 {
    alloc::release_cached_if_idle();
    let resident = alloc::resident_bytes().unwrap_or(0) as u64;
    peak + resident.saturating_sub(PROCESS_BASELINE)
}

/// The result of `work` (a run's dispatcher), run on a thread of its own while the calling
/// thread calls `watch` every [`crate::WATCH_EVERY`] until it is done: the calling thread is
/// the one a Python signal reaches, and holding the GIL to look for it must not hold up the
/// dispatcher.
fn watched_on_own_thread<T: Send>(watch: &mut dyn FnMut(), work: impl FnOnce() -> T + Send) -> T {
    let (done, finished) = crossbeam_channel::bounded::<()>(1);
    std::thread::scope(|scope| {
        let worker = scope.spawn(move || {
            let out = work();
            let _ = done.send(());
            out
        });
        crate::cancel::wait_watching(&finished, watch);
        worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// `refusal` (a budget the plan cannot fit) with the hint that a prefetch window of `window`
/// steps, narrower than the policy's, fits.
fn narrower_window_fits(refusal: Error, window: usize) -> Error {
    let policy = match window {
        0 => "none".to_string(),
        k => format!("lookahead:{k}"),
    };
    match refusal {
        Error::Invalid(message) => Error::Invalid(format!(
            "{message}; or fetch fewer steps ahead: `Tiering::prefetch` {policy} fits"
        )),
        other => other,
    }
}
