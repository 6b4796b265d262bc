//! `Tiering`: how a run uses the memory tiers — budgets, prefetch policy, disk I/O, the
//! device's faults and the governor's budget.

use crate::checkpoint::KillFault;
use srcflow_graph::plan::Budgets;
use srcflow_sched::sched::{Prefetch, PrefetchPolicy};
use srcflow_sched::store::{DiskFault, DiskIo, DiskRates};
use srcflow_tensor::device::DeviceOptions;
use std::sync::Arc;

/// Out-of-core choices of a run. The default plans nothing: every environment stays on the
/// device, as for problems that fit.
#[derive(Debug)]
#[non_exhaustive]
pub struct Tiering {
    /// Budgets to plan for; `None` keeps every environment on the device without planning.
    pub budgets: Option<Budgets>,
    /// When fetches of spilled environments start: [`Prefetch`] or any policy of the user's.
    pub prefetch: Arc<dyn PrefetchPolicy>,
    /// How the disk lanes move bytes: requests in flight, direct I/O, rate caps (experiments
    /// with a slow filesystem) and an emulated parallel filesystem.
    pub disk: DiskIo,
    /// Makes a scratch write fail (tests of cleanup).
    #[doc(hidden)]
    pub disk_fault: Option<DiskFault>,
    /// Kills the process at a chosen task (tests of resuming from a checkpoint).
    #[doc(hidden)]
    pub kill: Option<Arc<KillFault>>,
    /// The device's injected faults and capacity changes, and the recovery budget.
    pub device: DeviceOptions,
}

impl Default for Tiering {
    fn default() -> Self {
        Tiering {
            budgets: None,
            prefetch: Arc::new(Prefetch::default()),
            disk: DiskIo::default(),
            disk_fault: None,
            kill: None,
            device: DeviceOptions::default(),
        }
    }
}

impl Tiering {
    /// This tiering planned for `budgets` (`None`: nothing planned).
    pub fn with_budgets(self, budgets: impl Into<Option<Budgets>>) -> Self {
        Tiering {
            budgets: budgets.into(),
            ..self
        }
    }

    /// This tiering with fetches started by `prefetch`.
    pub fn with_prefetch(self, prefetch: Arc<dyn PrefetchPolicy>) -> Self {
        Tiering { prefetch, ..self }
    }

    /// This tiering with the device set up by `device`.
    pub fn with_device(self, device: DeviceOptions) -> Self {
        Tiering { device, ..self }
    }

    /// This tiering with the disk lanes capped at `rates`.
    pub fn with_disk_rates(self, rates: DiskRates) -> Self {
        let disk = DiskIo { rates, ..self.disk };
        Tiering { disk, ..self }
    }

    /// This tiering with the disk lanes moving bytes as `disk` says.
    pub fn with_disk_io(self, disk: DiskIo) -> Self {
        Tiering { disk, ..self }
    }

    /// This tiering making a scratch write fail as `fault` says.
    #[doc(hidden)]
    pub fn with_disk_fault(self, fault: impl Into<Option<DiskFault>>) -> Self {
        Tiering {
            disk_fault: fault.into(),
            ..self
        }
    }

    /// This tiering killing the process as `kill` says.
    #[doc(hidden)]
    pub fn with_kill(self, kill: impl Into<Option<Arc<KillFault>>>) -> Self {
        Tiering {
            kill: kill.into(),
            ..self
        }
    }
}
