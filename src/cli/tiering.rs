//! Out-of-core options shared by `srcflow run`, `srcflow plan` and `srcflow graph`.

use super::budget_args::BudgetArgs;
use super::device_args::DeviceArgs;
use clap::Args;
use srcflow::checkpoint::KillFault;
use srcflow::engine::Tiering;
use srcflow::sched::Prefetch;
use srcflow::store::{DirectIo, DiskFault, DiskIo, DiskRates, DiskRequests, DEFAULT_IO_DEPTH};
use srcflow::Result;
use std::sync::Arc;

/// Budgets, prefetch policy and disk options.
#[derive(Args)]
pub struct TieringArgs {
    #[command(flatten)]
    budgets: BudgetArgs,
    /// When spilled environments are fetched back: none (on demand), lookahead:K (K steps
    /// ahead), or bandwidth[:W] (just in time from measured rates, W steps reserved).
    #[arg(long, value_name = "POLICY", default_value = "bandwidth")]
    prefetch: Prefetch,
    /// Cap the disk lanes to mimic a slow filesystem: RATE caps both reads and writes (e.g.
    /// 200MB/s); read=RATE and/or write=RATE, comma-separated, cap one each.
    #[arg(long, value_name = "RATES")]
    disk_bandwidth: Option<DiskRates>,
    /// Requests in flight per disk transfer (each a large aligned chunk of the file): more
    /// buys bandwidth from a parallel filesystem, whose requests each wait a latency.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_IO_DEPTH)]
    io_depth: usize,
    /// Spill and checkpoint files bypass the page cache (O_DIRECT), and a folder whose
    /// filesystem refuses it is refused before any work. Without it or --no-direct-io: direct
    /// where the filesystem takes it.
    #[arg(long)]
    direct_io: bool,
    /// Spill files go through the page cache, each flushed and dropped from it once written
    /// and once read.
    #[arg(long, conflicts_with = "direct_io")]
    no_direct_io: bool,
    /// Emulate a parallel filesystem for the scratch disk: LAT,STREAM,TOTAL (e.g.
    /// 20ms,10MiB/s,40MiB/s: each request waits LAT, then moves at most STREAM; all requests
    /// together move at most TOTAL). `simulate` times the disk lanes the same way.
    #[arg(long, value_name = "LAT,STREAM,TOTAL")]
    disk_emulate: Option<DiskRequests>,
    /// Make a scratch write fail, for testing cleanup: enospc or eio, optionally :N for the N-th.
    #[arg(long, value_name = "KIND[:N]", hide = true)]
    inject_disk_error: Option<DiskFault>,
    /// Kill this process (SIGKILL) in the N-th task of kind OP, for testing resume from
    /// --checkpoint: env, fold, sketch, qr, project, first, write, spill-disk or checkpoint
    /// (the last two after writing their file's data, before it takes its name). Under
    /// mpirun, @RANK kills that rank only.
    #[arg(long, value_name = "OP[:N][@RANK]", hide = true)]
    inject_kill: Option<KillFault>,
    #[command(flatten)]
    device: DeviceArgs,
}

impl TieringArgs {
    /// The scratch folder given (`--scratch-dir`), if any.
    pub fn scratch_dir(&self) -> Option<&std::path::Path> {
        self.budgets.scratch_dir()
    }

    /// Resolves the budgets (detecting what was left out) into the engine's tiering choices.
    pub fn resolve(self) -> Result<Tiering> {
        let mut tiering = Tiering::default()
            .with_budgets(self.budgets.resolve()?)
            .with_prefetch(Arc::new(self.prefetch))
            .with_device(self.device.resolve()?);
        tiering.disk = DiskIo {
            depth: self.io_depth,
            direct: match (self.direct_io, self.no_direct_io) {
                (true, _) => DirectIo::Always,
                (_, true) => DirectIo::Never,
                _ => DirectIo::Auto,
            },
            rates: self.disk_bandwidth.unwrap_or_default(),
            emulate: self.disk_emulate,
        };
        tiering.disk_fault = self.inject_disk_error;
        tiering.kill = self.inject_kill.map(Arc::new);
        Ok(tiering)
    }
}
