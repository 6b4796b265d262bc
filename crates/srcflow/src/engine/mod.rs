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
mod options;
mod output_slots;
mod plan_cache;
mod planning;
mod ranked;
mod report;
mod run;
mod run_part;
mod scheduling;
mod session;
mod simulation;
mod sink;
mod source;
mod tiering;

pub use backend_values::BackendValues;
pub use builder::EngineBuilder;
pub use checkpointing::CheckpointUse;
pub use device_use::DeviceUse;
pub use memory_report::MemoryReport;
pub use options::Options;
pub use plan_cache::{Prepared, PLANS_KEPT, PLAN_TASKS_KEPT};
pub use report::{Internals, LaneUse, Report};
pub use run::Run;
pub use session::{Session, SessionStats, BACKENDS_KEPT};
pub use sink::{CoreSink, MemorySink};
pub use source::{CoreSource, MemorySource};
pub use tiering::Tiering;

use srcflow_graph::graph::SweepGraph;
use srcflow_graph::train::Stack;
use srcflow_sched::ranks::{RankLayout, Transport};
use srcflow_sched::sched::{Pacing, Progress, RunLog};
use srcflow_tensor::backend::Backend;
use srcflow_tensor::cancel::CancelToken;
use srcflow_tensor::error::{Error, Result};
use std::sync::Arc;

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
    /// The sketch columns per task its checkpoint was made with, which it plans with.
    kept_batch: Option<usize>,
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
    /// [`srcflow_tensor::WATCH_EVERY`] while the run goes on elsewhere: where a caller looks for its own
    /// reasons to stop (a signal) and cancels the engine's [`CancelToken`]. A rank of several
    /// dispatches on the calling thread and never watches (its launcher handles signals). A
    /// value of the checkpoint found damaged when read back is removed from it and the run
    /// starts again, making it anew.
    pub fn run_graph_watched(
        &self,
        graph: &SweepGraph,
        source: &dyn CoreSource,
        sink: &dyn CoreSink,
        watch: &mut dyn FnMut(),
    ) -> Result<(Report, RunLog)> {
        let _turn = self.session.take_turn();
        let mut remade = 0;
        loop {
            match self.run_rank_of(graph, source, sink, watch) {
                Err(damaged @ Error::Damaged { .. }) => {
                    self.telling_ranks(self.forget_damaged(damaged, remade))?;
                    remade += 1;
                }
                ran => return self.telling_ranks(ran),
            }
        }
    }

    /// The session this engine's backends and plans belong to.
    pub fn session(&self) -> &Session {
        &self.session
    }
}
