//! Out-of-core options shared by `srcflow run`, `srcflow plan` and `srcflow graph`.

use super::device_args::DeviceArgs;
use clap::Args;
use srcflow::engine::Tiering;
use srcflow::plan::{Bandwidth, BudgetArgs};
use srcflow::sched::Prefetch;
use srcflow::store::DiskFault;
use srcflow::Result;

/// Budgets, prefetch policy and disk options.
#[derive(Args)]
pub struct TieringArgs {
    #[command(flatten)]
    budgets: BudgetArgs,
    /// When spilled environments are fetched back: none (on demand), lookahead:K (K steps
    /// ahead), or bandwidth[:W] (just in time from measured rates, W steps reserved).
    #[arg(long, value_name = "POLICY", default_value = "bandwidth")]
    prefetch: Prefetch,
    /// Cap each disk lane (read, write) at this rate, e.g. 200MB/s, to mimic a slow filesystem.
    #[arg(long, value_name = "RATE")]
    disk_bandwidth: Option<Bandwidth>,
    /// Make a scratch write fail, for testing cleanup: enospc or eio, optionally :N for the N-th.
    #[arg(long, value_name = "KIND[:N]")]
    inject_disk_error: Option<DiskFault>,
    #[command(flatten)]
    device: DeviceArgs,
}

impl TieringArgs {
    /// Resolves the budgets (detecting what was left out) into the engine's tiering choices.
    pub fn resolve(self) -> Result<Tiering> {
        Ok(Tiering {
            budgets: Some(self.budgets.resolve()?),
            prefetch: self.prefetch,
            disk_bandwidth: self.disk_bandwidth,
            disk_fault: self.inject_disk_error,
            device: self.device.resolve()?,
        })
    }
}
