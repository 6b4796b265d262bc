//! `DiskTier`: the scratch disk as a tier — where spill tasks write and fetch tasks read.

use super::{DiskFault, DiskRates, ScratchDir, SpillFile, Throttle};
use crate::cancel::CancelToken;
use crate::error::Result;
use crate::graph::{Cols, Task};
use crate::tensor::AnyTensor;
use std::path::Path;

/// The run's scratch directory with the rate caps and faults of its disk lanes.
#[derive(Debug)]
pub struct DiskTier<'f> {
    scratch: ScratchDir,
    write_throttle: Throttle,
    read_throttle: Throttle,
    fault: Option<&'f DiskFault>,
    cancel: CancelToken,
}

impl<'f> DiskTier<'f> {
    /// A disk tier in a new scratch directory under `parent` (stale ones there are removed),
    /// whose transfers stop once `cancel` is cancelled.
    pub fn create(
        parent: &Path,
        rates: DiskRates,
        fault: Option<&'f DiskFault>,
        cancel: CancelToken,
    ) -> Result<Self> {
        Ok(DiskTier {
            scratch: ScratchDir::create(parent)?,
            write_throttle: Throttle::new(rates.write),
            read_throttle: Throttle::new(rates.read),
            fault,
            cancel,
        })
    }

    /// The run's scratch directory.
    pub fn dir(&self) -> &Path {
        self.scratch.path()
    }

    /// Writes the environment slice of `task` (a spill to disk) to its own file.
    pub fn write(&self, task: &Task, tensor: &AnyTensor) -> Result<SpillFile> {
        let cols = task.cols.unwrap_or(Cols { start: 0, end: 0 });
        let name = format!("env-{:05}-{}-{}.bin", task.site, cols.start, cols.end);
        SpillFile::write(
            self.dir().join(name),
            tensor,
            self.write_throttle,
            self.write_fault(),
            &self.cancel,
        )
    }

    /// The injected error of this spill write, when the fault names it (tests): a spill a
    /// checkpoint writes for the tier counts as one of its writes.
    pub fn write_fault(&self) -> Option<std::io::Error> {
        self.fault.and_then(DiskFault::on_write)
    }

    /// Reads a spilled slice back.
    pub fn read(&self, file: &SpillFile) -> Result<AnyTensor> {
        file.read(self.read_throttle, &self.cancel)
    }
}
