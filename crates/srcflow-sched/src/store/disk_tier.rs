//! `DiskTier`: the scratch disk as a tier — where spill tasks write and fetch tasks read.

use super::{DiskAccess, DiskFault, DiskIo, ScratchDir, SpillFile};
use srcflow_graph::graph::{Cols, Task};
use srcflow_tensor::cancel::CancelToken;
use srcflow_tensor::error::Result;
use srcflow_tensor::tensor::AnyTensor;
use std::path::Path;

/// The run's scratch directory with how its disk lanes reach it, and their faults.
#[derive(Debug)]
pub struct DiskTier<'f> {
    scratch: ScratchDir,
    reads: DiskAccess,
    writes: DiskAccess,
    fault: Option<&'f DiskFault>,
    cancel: CancelToken,
}

impl<'f> DiskTier<'f> {
    /// A disk tier in a new scratch directory under `parent` (stale ones there are removed),
    /// moving bytes as `io` says, whose transfers stop once `cancel` is cancelled. A folder
    /// whose filesystem refuses the direct I/O `io` needs is refused by name.
    pub fn create(
        parent: &Path,
        io: &DiskIo,
        fault: Option<&'f DiskFault>,
        cancel: CancelToken,
    ) -> Result<Self> {
        io.direct.check(parent)?;
        let (reads, writes) = io.accesses();
        Ok(DiskTier {
            scratch: ScratchDir::create(parent)?,
            reads,
            writes,
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
            &self.writes,
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
        file.read(&self.reads, &self.cancel)
    }
}
