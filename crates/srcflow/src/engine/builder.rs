//! `EngineBuilder`: every choice of a run in one place, each with its default until set.

use super::{Engine, Options, Session, Tiering};
use crate::checkpoint::CheckpointEvery;
use srcflow_graph::graph::GraphOptions;
use srcflow_sched::ranks::{RankLayout, Transport};
use srcflow_sched::sched::{Pacing, Progress};
use srcflow_tensor::backend::{Backend, BackendKind};
use srcflow_tensor::cancel::CancelToken;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::files;
use std::path::PathBuf;
use std::sync::Arc;

/// Builds an [`Engine`]: the graph's options, the sketches' seed and threads, the backend of
/// each device, the out-of-core choices ([`Tiering`]: the memory budgets, the prefetch policy,
/// any [`PrefetchPolicy`](srcflow_sched::sched::PrefetchPolicy)), how far I/O may drift from
/// compute, and whether runs keep the log of every task for a trace.
pub struct EngineBuilder {
    options: Options,
    backends: Option<Vec<Box<dyn Backend>>>,
    kind: BackendKind,
    device_ids: Option<Vec<usize>>,
    tiering: Tiering,
    pacing: Pacing,
    progress: Option<Arc<dyn Progress>>,
    keeps_log: bool,
    checkpoint: Option<PathBuf>,
    checkpoint_every: CheckpointEvery,
    cancel: CancelToken,
    ranks: Option<Arc<dyn Transport>>,
    session: Option<Session>,
}

impl EngineBuilder {
    /// A builder starting from `options`, everything else at its default: CPU backends,
    /// no budgets (every environment stays on the device), the bandwidth-aware prefetch
    /// policy, no log kept.
    pub fn new(options: Options) -> Self {
        EngineBuilder {
            options,
            backends: None,
            kind: BackendKind::default(),
            device_ids: None,
            tiering: Tiering::default(),
            pacing: Pacing::default(),
            progress: None,
            keeps_log: false,
            checkpoint: None,
            checkpoint_every: CheckpointEvery::default(),
            cancel: CancelToken::new(),
            ranks: None,
            session: None,
        }
    }

    /// The choices that shape the sweep graph (χ̄, batches, cutoff, oversampling, type,
    /// devices, folding).
    pub fn graph(mut self, graph: GraphOptions) -> Self {
        self.options.graph = graph;
        self
    }

    /// The seed of the random test matrices.
    pub fn seed(mut self, seed: u64) -> Self {
        self.options.seed = seed;
        self
    }

    /// Worker threads of the default CPU backends, shared between the devices (0: one per
    /// core).
    pub fn threads(mut self, threads: usize) -> Self {
        self.options.threads = threads;
        self
    }

    /// The backend of each device, one per device of the graph options (instead of
    /// [`EngineBuilder::backend`]'s).
    pub fn backends(mut self, backends: Vec<Box<dyn Backend>>) -> Self {
        self.backends = Some(backends);
        self
    }

    /// The kind of backend the devices compute on (default: the CPU).
    pub fn backend(mut self, kind: BackendKind) -> Self {
        self.kind = kind;
        self
    }

    /// The ids of the devices, one per device of the graph options: the GPUs a CUDA run uses
    /// (default: the first ones).
    pub fn device_ids(mut self, ids: Vec<usize>) -> Self {
        self.device_ids = Some(ids);
        self
    }

    /// Every out-of-core choice, the one place each is set: the budgets to plan for
    /// (`Tiering::with_budgets`), when fetches start (`Tiering::with_prefetch`), the disk's
    /// requests and the devices' memory.
    pub fn tiering(mut self, tiering: Tiering) -> Self {
        self.tiering = tiering;
        self
    }

    /// How far input reads, uploads and spills may drift from compute.
    pub fn pacing(mut self, pacing: Pacing) -> Self {
        self.pacing = pacing;
        self
    }

    /// Told of every finished task.
    pub fn progress(mut self, progress: Arc<dyn Progress>) -> Self {
        self.progress = Some(progress);
        self
    }

    /// A token that stops the engine's runs cleanly once cancelled (from another thread).
    pub fn cancel(mut self, cancel: CancelToken) -> Self {
        self.cancel = cancel;
        self
    }

    /// Whether [`Engine::run`] keeps the log of every task, from which
    /// [`super::Run::write_trace`] writes a Chrome trace, and whether every run's log samples
    /// the memory held after each task (a trace's memory counters; off, a run skips them).
    pub fn trace(mut self, keep: bool) -> Self {
        self.keeps_log = keep;
        self
    }

    /// Keeps what a run needs to go on after a kill in the folder `dir` (made if missing; its
    /// parent must exist), and resumes from what is there when it is a checkpoint of the same
    /// run: the same problem, options, seed, devices and srcflow. [`Engine::run`] removes the
    /// checkpoint once it has the output; after [`Engine::run_graph`], whose sink the caller
    /// owns, [`Engine::remove_checkpoint`] does, once the output is safe.
    pub fn checkpoint(mut self, dir: impl Into<PathBuf>) -> Self {
        self.checkpoint = Some(dir.into());
        self
    }

    /// How often the checkpoint keeps an environment and a projected environment: at every
    /// `sites`-th site (default 1: all). Output cores are kept at every site, and so are
    /// environments spilled to disk (their spill is their write). A run that keeps its
    /// environments in memory writes them only for the checkpoint: fewer cost less, and a
    /// resumed run makes those between again.
    pub fn checkpoint_every(self, sites: usize) -> Self {
        self.checkpoint_paced(CheckpointEvery::Sites(sites))
    }

    /// Like [`EngineBuilder::checkpoint_every`], by sites or by time: with
    /// [`CheckpointEvery::Interval`], the environments and S of the first site a pass reaches
    /// once the interval has passed since it last kept one (a kill loses about that much of the
    /// pass under way, up to one site more). Runs of several ranks take sites only.
    pub fn checkpoint_paced(mut self, every: CheckpointEvery) -> Self {
        self.checkpoint_every = every;
        self
    }

    /// Runs as one rank of several over `transport` (MPI's, or [`srcflow_sched::ranks::InProcessRanks`]):
    /// the devices of the graph options are those of all ranks, each rank computing on its
    /// contiguous share of them with [`EngineBuilder::threads`] threads; every rank's
    /// [`Engine::run`](super::Engine::run) returns the whole product.
    pub fn ranks(mut self, transport: Arc<dyn Transport>) -> Self {
        self.ranks = Some(transport);
        self
    }

    /// The session whose backends the engine computes on and whose plans it reuses (default:
    /// a session of its own, so every engine makes its backends anew).
    pub fn session(mut self, session: Session) -> Self {
        self.session = Some(session);
        self
    }

    /// The engine, once every choice is checked: the graph options, one backend per device,
    /// an injected device failure naming one of its devices.
    pub fn build(mut self) -> Result<Engine> {
        self.options.graph.check()?;
        let kept_batch = self.batch_of_checkpoint();
        if let Some(batch) = kept_batch {
            self.options.graph.batch_cols = Some(batch);
        }
        if let Err(refused) = self.checkpoint_every.check() {
            return Err(Error::Invalid(format!(
                "`EngineBuilder::checkpoint_every`: {refused}"
            )));
        }
        if let (CheckpointEvery::Interval(_), Some(_)) = (self.checkpoint_every, &self.ranks) {
            return Err(Error::Invalid(
                "`EngineBuilder::checkpoint_every`: a checkpoint is kept by time in runs of one \
                 process only, for now (each rank would keep other sites, and no whole S to \
                 resume from); give a number of sites under mpirun"
                    .into(),
            ));
        }
        self.tiering.disk.check()?;
        self.checkpoint_apart_from_scratch()?;
        let devices = self.options.graph.devices;
        let ids = self.device_ids.unwrap_or_else(|| (0..devices).collect());
        if ids.len() != devices {
            return Err(Error::Invalid(format!(
                "the run has {devices} device(s) but {} device id(s) were given",
                ids.len()
            )));
        }
        let layout = match &self.ranks {
            Some(t) => RankLayout::new(t.rank(), t.ranks(), devices)?,
            None => RankLayout::single(),
        };
        if let Some(kill) = &self.tiering.kill {
            kill.check_ranks(layout.ranks)?;
        }
        let own = layout.devices_of(layout.rank, devices);
        let kind = match self.kind {
            BackendKind::Auto if layout.ranks > 1 => BackendKind::Cpu,
            kind => kind.resolve(&ids),
        };
        let session = self.session.unwrap_or_default();
        let backends: Vec<Arc<dyn Backend>> = match (self.backends, kind) {
            (Some(backends), _) => backends.into_iter().map(Arc::from).collect(),
            (None, BackendKind::Cuda) if layout.ranks > 1 => {
                return Err(Error::Invalid(
                    "several ranks compute on the CPU backend only, for now: each rank would \
                     open every rank's GPUs (--backend cuda with mpirun -np 2 or more)"
                        .into(),
                ))
            }
            (None, BackendKind::Cuda) => ids
                .iter()
                .map(|&id| session.cuda_backend(id))
                .collect::<Result<_>>()?,
            (None, _) => {
                BackendKind::cpu_threads_of(devices, own.start..own.end, self.options.threads)?
                    .into_iter()
                    .enumerate()
                    .map(|(device, threads)| session.cpu_backend(device, threads))
                    .collect::<Result<_>>()?
            }
        };
        if backends.len() != devices {
            return Err(Error::Invalid(format!(
                "the run has {devices} device(s) but {} backend(s) were given",
                backends.len()
            )));
        }
        if let Some(fault) = &self.tiering.device.inject_failure {
            if fault.device() >= devices {
                return Err(Error::Invalid(format!(
                    "`DeviceOptions::inject_failure` names device {}, but the run has {devices} \
                     device(s), numbered from 0",
                    fault.device()
                )));
            }
        }
        Ok(Engine {
            options: self.options,
            tiering: self.tiering,
            backends,
            progress: self.progress,
            pacing: self.pacing,
            keeps_log: self.keeps_log,
            checkpoint: self.checkpoint,
            checkpoint_every: self.checkpoint_every,
            cancel: self.cancel,
            ranks: self.ranks.map(|transport| (transport, layout)),
            session,
            kept_batch,
        })
    }
}

impl EngineBuilder {
    /// The sketch columns per task of the checkpoint this engine resumes, when the batch is
    /// left to the planner: a resume plans with it, so that its sweep graph, and so its bits,
    /// are the checkpoint's whatever budgets the resuming machine has (a requeued job lands on
    /// a node with other memory).
    fn batch_of_checkpoint(&self) -> Option<usize> {
        match (&self.checkpoint, self.options.graph.batch_cols) {
            (Some(dir), None) => crate::checkpoint::batch_of(dir),
            _ => None,
        }
    }

    /// Refuses a checkpoint folder that is the scratch folder or holds it: a run that finishes
    /// removes its checkpoint folder when nothing else is left in it, and the scratch folder is
    /// the user's (a checkpoint inside the scratch folder is fine).
    fn checkpoint_apart_from_scratch(&self) -> Result<()> {
        let (Some(checkpoint), Some(budgets)) = (&self.checkpoint, &self.tiering.budgets) else {
            return Ok(());
        };
        let scratch = &budgets.scratch_dir;
        if !files::within(scratch, checkpoint) {
            return Ok(());
        }
        Err(Error::Invalid(format!(
            "`EngineBuilder::checkpoint` {} holds the scratch folder `Budgets::scratch_dir` {} \
             (or is it): give the checkpoint a folder of its own, such as one inside the \
             scratch folder",
            checkpoint.display(),
            scratch.display(),
        )))
    }
}
