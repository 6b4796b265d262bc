//! A run simulated on a machine model: the same plan, scheduler, prefetch policy and memory
//! governor as a real run, with each task taking the time the model gives it.

use super::model_executor::ModelExecutor;
use super::scheduling::DeviceMemory;
use super::{Engine, Report};
use srcflow_graph::graph::SweepGraph;
use srcflow_sched::ranks::{AcrossNodes, Exchange};
use srcflow_sched::sched::{self, RunLog};
use srcflow_sched::sim::MachineModel;
use srcflow_tensor::error::Result;

impl Engine {
    /// Simulates the run of `graph` on `machine`: the same plan, scheduler, prefetch policy and
    /// memory governor, with each task taking the time the model gives it (the disk lanes capped
    /// by the tiering's disk bandwidth). Returns the report and log of the modelled run. A
    /// graph of several ranks takes [`Self::simulate_across_nodes`], which also knows which
    /// of their all-gathers land in place.
    pub fn simulate(&self, graph: &SweepGraph, machine: &MachineModel) -> Result<(Report, RunLog)> {
        self.simulate_exchanging(graph, &[], machine)
    }

    /// Simulates the run of several ranks `ranked` ([`srcflow_sched::ranks::across_nodes`]) on
    /// `machine`, as [`Self::simulate`] does, with the S all-gathers its ranks receive in place
    /// where the devices compute in host memory ([`srcflow_sched::ranks::Exchange::in_place`]).
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
        let machine = machine.clone().with_disk_io(&self.tiering.disk);
        let (sched, governor, _) = self.schedule(graph, DeviceMemory::Simulated)?;
        let threads = self.threads_per_device();
        let timer = machine
            .timer(&threads)
            .with_exchanges(exchanges)
            .with_io_depth(self.tiering.disk.depth);
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
        report.model_coverage =
            srcflow_sched::sim::coverage(&machine, ran, &log.threads_per_device);
        Ok((report, log))
    }
}
