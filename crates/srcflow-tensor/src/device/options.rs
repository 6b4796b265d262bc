//! `DeviceOptions`: how a run's device is set up (faults to inject, a capacity schedule) and
//! how much time the memory governor may spend recovering.

use super::{CapacitySchedule, DeviceFault, OomFault};

/// The device's faults and the governor's recovery budget.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DeviceOptions {
    /// Pre-fragments the device into pinned segments of this many bytes (`--fragment`).
    #[doc(hidden)]
    pub fragment: Option<u64>,
    /// Fails a fraction of device allocations (`--inject-oom`), on the first device.
    #[doc(hidden)]
    pub inject_oom: Option<OomFault>,
    /// Fails one compute task of one device (`--inject-device-failure`).
    #[doc(hidden)]
    pub inject_failure: Option<DeviceFault>,
    /// Changes the device's capacity at given sweep steps (`--shrink-device`).
    #[doc(hidden)]
    pub capacity_schedule: CapacitySchedule,
    /// Recovery may cost this fraction of the compute time done so far before cache releases
    /// after the first are skipped (`--recovery-budget`, 0.05 by default).
    pub recovery_budget: f64,
}

impl Default for DeviceOptions {
    fn default() -> Self {
        DeviceOptions {
            fragment: None,
            inject_oom: None,
            inject_failure: None,
            capacity_schedule: CapacitySchedule::default(),
            recovery_budget: 0.05,
        }
    }
}

impl DeviceOptions {
    /// These options with the device pre-fragmented into pinned segments of `bytes` (`None`:
    /// not fragmented).
    #[doc(hidden)]
    pub fn with_fragment(self, bytes: impl Into<Option<u64>>) -> Self {
        DeviceOptions {
            fragment: bytes.into(),
            ..self
        }
    }

    /// These options failing a fraction of device allocations as `fault` says.
    #[doc(hidden)]
    pub fn with_inject_oom(self, fault: impl Into<Option<OomFault>>) -> Self {
        DeviceOptions {
            inject_oom: fault.into(),
            ..self
        }
    }

    /// These options failing one compute task of one device as `fault` says.
    #[doc(hidden)]
    pub fn with_inject_failure(self, fault: impl Into<Option<DeviceFault>>) -> Self {
        DeviceOptions {
            inject_failure: fault.into(),
            ..self
        }
    }

    /// These options changing the device's capacity as `schedule` says.
    #[doc(hidden)]
    pub fn with_capacity_schedule(self, schedule: CapacitySchedule) -> Self {
        DeviceOptions {
            capacity_schedule: schedule,
            ..self
        }
    }

    /// These options with recovery budget `fraction` of the compute time done so far.
    pub fn with_recovery_budget(self, fraction: f64) -> Self {
        DeviceOptions {
            recovery_budget: fraction,
            ..self
        }
    }
}
