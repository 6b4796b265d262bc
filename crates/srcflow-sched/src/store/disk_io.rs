//! `DiskIo`: how a run's disk lanes move bytes — requests in flight per transfer, direct I/O,
//! rate caps and an emulated filesystem — and `DiskAccess`, what one direction's transfers use.

use super::{DirectIo, DiskRates, DiskRequests, EmulatedDisk, Throttle};
use srcflow_tensor::error::{Error, Result};
use std::sync::Arc;

/// Requests in flight per transfer unless `--io-depth` says otherwise (measured on the local
/// disk of the development machine and on an emulated parallel filesystem: benches/README.md).
pub const DEFAULT_IO_DEPTH: usize = 8;

/// The most requests in flight per transfer a run accepts.
pub const MOST_IO_DEPTH: usize = 64;

/// The disk choices of a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiskIo {
    /// Requests in flight per transfer (each a large aligned chunk of the file).
    pub depth: usize,
    /// Whether spill files bypass the page cache.
    pub direct: DirectIo,
    /// Caps of the reader and writer lanes (`--disk-bandwidth`).
    pub rates: DiskRates,
    /// A parallel filesystem to emulate (`--disk-emulate`), for tests and benches.
    pub emulate: Option<DiskRequests>,
}

impl Default for DiskIo {
    fn default() -> Self {
        DiskIo {
            depth: DEFAULT_IO_DEPTH,
            direct: DirectIo::Auto,
            rates: DiskRates::default(),
            emulate: None,
        }
    }
}

impl DiskIo {
    /// Fails, naming the setting, unless the depth is 1 to [`MOST_IO_DEPTH`] and the rates and
    /// the emulated filesystem are sound.
    pub fn check(&self) -> Result<()> {
        if !(1..=MOST_IO_DEPTH).contains(&self.depth) {
            return Err(Error::Invalid(format!(
                "`DiskIo::depth`: {} requests in flight is not between 1 and {MOST_IO_DEPTH}",
                self.depth
            )));
        }
        self.rates.check()?;
        self.emulate.as_ref().map_or(Ok(()), DiskRequests::check)
    }

    /// What reads and writes use: the same depth and direct I/O choice, each lane's cap, and
    /// one emulated filesystem that both cross (a checkpoint's files, in a folder of their
    /// own, cross another).
    pub fn accesses(&self) -> (DiskAccess, DiskAccess) {
        let emulated = self.emulate.map(|r| Arc::new(EmulatedDisk::new(r)));
        let access = |cap| DiskAccess {
            depth: self.depth,
            direct: self.direct,
            throttle: Throttle::new(cap),
            emulated: emulated.clone(),
        };
        (access(self.rates.read), access(self.rates.write))
    }
}

/// How the transfers of one direction reach the disk.
#[derive(Clone, Debug)]
pub struct DiskAccess {
    /// Requests in flight per transfer.
    pub depth: usize,
    /// Whether files bypass the page cache.
    pub direct: DirectIo,
    /// The direction's rate cap.
    pub throttle: Throttle,
    /// The emulated filesystem every request waits on, if any.
    pub emulated: Option<Arc<EmulatedDisk>>,
}

impl Default for DiskAccess {
    /// The default depth, direct where the filesystem allows, uncapped, not emulated.
    fn default() -> Self {
        DiskIo::default().accesses().0
    }
}
