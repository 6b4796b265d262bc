//! This process's part of a run, wired together: the checkpoint it resumes from, its rank's
//! share of the graph and the exchanges with the other ranks, the scratch directory, the task
//! router, the scheduler on lanes or inline, and the report.

use super::executor::TaskRouter;
use super::left_edge::LeftEdgeSink;
use super::scheduling::{with_memory_held_before, DeviceMemory};
use super::{ranked, CheckpointUse, CoreSink, CoreSource, Engine, Report};
use srcflow_graph::graph::SweepGraph;
use srcflow_sched::ranks::{ExchangeLane, RankGraph};
use srcflow_sched::sched::{self, Governor, RunLog, SchedOptions};
use srcflow_tensor::alloc;
use srcflow_tensor::error::Result;
use std::sync::Arc;
use std::time::Instant;

impl Engine {
    /// `result`; an error is first told to the other ranks, if any, which would otherwise
    /// wait for this one in their next exchange.
    pub(super) fn telling_ranks<T>(&self, result: Result<T>) -> Result<T> {
        if let (Err(error), Some((transport, _))) = (&result, &self.ranks) {
            transport.abort(&error.to_string());
        }
        result
    }

    /// Runs this process's part of `graph`: all of it, or its rank's share.
    pub(super) fn run_rank_of(
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
            tasks = graph.task_count(),
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
}

/// The result of `work` (a run's dispatcher), run on a thread of its own while the calling
/// thread calls `watch` every [`srcflow_tensor::WATCH_EVERY`] until it is done: the calling thread is
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
        srcflow_tensor::cancel::wait_watching(&finished, watch);
        worker
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}
