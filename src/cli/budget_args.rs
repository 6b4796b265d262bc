//! `--device-memory`, `--host-memory`, `--disk-space` and `--scratch-dir`.

use clap::Args;
use srcflow::plan::Budgets;
use srcflow::ByteSize;
use srcflow::Result;
use std::path::PathBuf;

/// Budgets as the user gave them; each left out is detected.
#[derive(Clone, Debug, Default, Args)]
pub struct BudgetArgs {
    /// Device memory per device, e.g. 36GB or 36GiB (CPU backend default: the host budget).
    #[arg(long, value_name = "SIZE")]
    device_memory: Option<ByteSize>,
    /// Host memory for the run (default: 90 % of MemAvailable).
    #[arg(long, value_name = "SIZE")]
    host_memory: Option<ByteSize>,
    /// Scratch disk space (default: 95 % of the free space under the scratch directory).
    #[arg(long, value_name = "SIZE")]
    disk_space: Option<ByteSize>,
    /// Where spilled environments go (default: $TMPDIR, else /tmp).
    #[arg(long, value_name = "DIR")]
    scratch_dir: Option<PathBuf>,
}

impl BudgetArgs {
    /// Fills every budget the user left out from what this machine has now.
    pub fn resolve(&self) -> Result<Budgets> {
        let bytes = |size: Option<ByteSize>| size.map(|s| s.0);
        Budgets::detect(
            bytes(self.device_memory),
            bytes(self.host_memory),
            bytes(self.disk_space),
            self.scratch_dir.clone(),
        )
    }
}
