//! What a run is scheduled with: the scheduler's options, the memory governor over a pool per
//! device (the backends' or simulated ones, with injected faults), the cap the plan puts on the
//! block cache, and the scratch directory of a run that spills to disk.

use super::Engine;
use srcflow_graph::graph::SweepGraph;
use srcflow_graph::plan::{MemoryProfile, PROCESS_BASELINE};
use srcflow_sched::sched::{Governor, SchedOptions};
use srcflow_sched::store::DiskTier;
use srcflow_tensor::alloc;
use srcflow_tensor::device::{FaultyPool, MemoryPool, PoolConfig, SimulatedPool};
use srcflow_tensor::error::Result;
use srcflow_tensor::Tier;
use std::sync::Arc;

/// Whose memory pools a run's governor allocates from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DeviceMemory {
    /// The backends' own pools: a real run.
    Backend,
    /// Simulated pools: a run on a machine model.
    Simulated,
}

impl Engine {
    /// The scheduler's options for `graph`: the policy's prefetch window, narrowed to the one
    /// the graph was planned for.
    pub(super) fn sched_options(&self, graph: &SweepGraph) -> SchedOptions {
        let prefetch = &self.tiering.prefetch;
        let narrowed = graph.planned_fetch_window.and_then(|w| prefetch.within(w));
        SchedOptions {
            prefetch: narrowed.unwrap_or_else(|| Arc::clone(prefetch)),
            disk: self.tiering.disk,
            progress: self.progress.clone(),
            pacing: self.pacing,
            cancel: self.cancel.clone(),
            samples_memory: self.keeps_log,
            ..SchedOptions::default()
        }
    }

    /// The scheduler's options, the memory governor over a fresh device pool, and the cap on
    /// the process's memory that the plan allows (`None` without budgets).
    pub(super) fn schedule(
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
    pub(super) fn disk_tier(&self, graph: &SweepGraph) -> Result<Option<DiskTier<'_>>> {
        let spills = graph
            .tasks()
            .any(|t| t.op.profile().spills_to == Some(Tier::Disk));
        if !spills {
            return Ok(None);
        }
        let parent = self
            .tiering
            .budgets
            .as_ref()
            .map_or_else(std::env::temp_dir, |b| b.scratch_dir.clone());
        let fault = self.tiering.disk_fault.as_ref();
        DiskTier::create(&parent, &self.tiering.disk, fault, self.cancel.clone()).map(Some)
    }
}

/// The cap on the process's resident memory for a run whose plan allows `peak` (its values and
/// [`PROCESS_BASELINE`]), raised by what the process already holds beyond that baseline when the
/// run starts: a host program's own data (a Python interpreter, NumPy, the input arrays) is not
/// the run's, and counting it would make the block cache unmap what it should keep. When no
/// other run is under way, the blocks cached since the last one (freed after it ended) are
/// unmapped first, so that they are neither counted as held nor kept.
pub(super) fn with_memory_held_before(peak: u64) -> u64 {
    alloc::release_cached_if_idle();
    let resident = alloc::resident_bytes().unwrap_or(0) as u64;
    peak + resident.saturating_sub(PROCESS_BASELINE)
}
