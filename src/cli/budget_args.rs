//! `--device-memory`, `--host-memory`, `--disk-space` and `--scratch-dir`.

use clap::Args;
use srcflow::plan::Budgets;
use srcflow::ByteSize;
use srcflow::Result;
use std::path::PathBuf;

/// Budgets as the user gave them; each left out is detected.
#[derive(Clone, Debug, Default, Args)]
pub struct BudgetArgs {
    /// Device memory per device, e.g. 36GB, 36GiB or 36G (= GiB) (CPU backend default: the host
    /// budget).
    #[arg(long, value_name = "SIZE", value_parser = ByteSize::budget)]
    device_memory: Option<ByteSize>,
    /// Host memory for the run, e.g. 60GB (default: 90 % of MemAvailable); `run` refuses one
    /// above this machine's memory.
    #[arg(long, value_name = "SIZE", value_parser = ByteSize::budget)]
    host_memory: Option<ByteSize>,
    /// Scratch disk space (default: 95 % of the free space under the scratch directory).
    #[arg(long, value_name = "SIZE", value_parser = ByteSize::budget)]
    disk_space: Option<ByteSize>,
    /// Where spilled environments go (default: $TMPDIR, else /tmp).
    #[arg(long, value_name = "DIR")]
    scratch_dir: Option<PathBuf>,
}

impl BudgetArgs {
    /// The scratch folder given (`--scratch-dir`), if any.
    pub fn scratch_dir(&self) -> Option<&std::path::Path> {
        self.scratch_dir.as_deref()
    }

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
