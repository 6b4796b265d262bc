//! Device options shared by `srcflow run`, `plan` and `graph`: injected faults, a capacity
//! schedule and the memory governor's recovery budget.

use clap::Args;
use srcflow::device::{CapacitySchedule, DeviceFault, DeviceOptions, OomFault};
use srcflow::ByteSize;
use srcflow::{Error, Result};

/// Faults to inject into the (simulated) device, by flags `--help` does not list (tests and
/// benches use them), and the governor's recovery budget.
#[derive(Args)]
pub struct DeviceArgs {
    /// Make a fraction of device allocations fail (0 to 1), with an optional seed: 0.05:7.
    #[arg(long, value_name = "RATE[:SEED]", hide = true)]
    inject_oom: Option<OomFault>,
    /// Make device DEVICE fail its N-th compute task (default the first): the run stops with
    /// that error and leaves no scratch or partial output.
    #[arg(long, value_name = "DEVICE[:N]", hide = true)]
    inject_device_failure: Option<DeviceFault>,
    /// Pre-fragment the device into segments of SIZE, each pinned in its middle, so no
    /// allocation larger than half a segment can be served.
    #[arg(long, value_name = "SIZE", hide = true)]
    fragment: Option<ByteSize>,
    /// Change the device's capacity when compute reaches a sweep step: 32MiB@10,16MiB@40.
    #[arg(long, value_name = "SIZE@STEP,…", hide = true)]
    shrink_device: Option<CapacitySchedule>,
    /// Recovery may cost this fraction of the compute time done before releases after the
    /// first are skipped.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.05)]
    recovery_budget: f64,
}

impl DeviceArgs {
    /// The device options these arguments ask for.
    pub fn resolve(self) -> Result<DeviceOptions> {
        if !(0.0..=1.0).contains(&self.recovery_budget) {
            return Err(Error::Invalid(format!(
                "--recovery-budget must be between 0 and 1, found {}",
                self.recovery_budget
            )));
        }
        let mut device = DeviceOptions::default();
        device.fragment = self.fragment.map(|size| size.0);
        device.inject_oom = self.inject_oom;
        device.inject_failure = self.inject_device_failure;
        device.capacity_schedule = self.shrink_device.unwrap_or_default();
        device.recovery_budget = self.recovery_budget;
        Ok(device)
    }
}
