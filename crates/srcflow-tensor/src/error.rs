//! The one error type of srcflow: every variant names its culprit.

use std::path::{Path, PathBuf};

/// Everything that can go wrong in srcflow, each naming what is at fault.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or directory could not be read, written or renamed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory at fault.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A core file is not a readable `.npy` array of the expected kind.
    #[error("layer '{layer}', site {site}, file {path}: {message}")]
    BadCore {
        /// Name of the layer.
        layer: String,
        /// Site index, from 0.
        site: usize,
        /// The `.npy` file at fault.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// Shapes do not fit together (bonds, physical legs, ranks, site counts).
    #[error("{0}")]
    Shape(String),
    /// `manifest.json` or another description file is missing or malformed.
    #[error("{path}: {message}")]
    Manifest {
        /// The manifest at fault.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A user-supplied option is out of range.
    #[error("{0}")]
    Invalid(String),
    /// The problem does not fit a memory budget, even with every environment that can move off
    /// that memory moved and the batch as small as it helps.
    #[error(
        "the problem does not fit: at site {site} ({kernel} kernel) the {memory} needs {needed}, \
         {over} more than the budget of {budget}, even with every environment that can move off \
         it moved and the batch as small as it helps; raise {setting} or lower \
         `GraphOptions::chi_out`{advice}",
        over = crate::ByteSize(.needed.0.saturating_sub(.budget.0))
    )]
    DoesNotFit {
        /// The site of the kernel whose peak does not fit.
        site: usize,
        /// That kernel (env, sketch, qr, …).
        kernel: &'static str,
        /// The memory the budget bounds ("device memory", "host memory", …).
        memory: String,
        /// Bytes the kernel's peak needs in that memory.
        needed: crate::ByteSize,
        /// The budget.
        budget: crate::ByteSize,
        /// The setting that raises the budget, as the library names it (`` `Budgets::device` ``).
        setting: &'static str,
        /// What else would make it fit, after the rest of the message (or nothing).
        advice: String,
    },
    /// The checkpoint a run was given is of another run (another problem, options or build of
    /// srcflow): the run does not resume from it, and leaves it as it is.
    #[error(
        "the checkpoint {} is of another run, so this one does not resume from it: {}. Run the \
         same problem with the same options and srcflow to resume it, or remove it or give \
         `EngineBuilder::checkpoint` another folder to start afresh",
        .dir.display(),
        .differences.join("; ")
    )]
    CheckpointMismatch {
        /// The checkpoint's folder.
        dir: PathBuf,
        /// What differs, one setting each: "seed 3 there, 4 here".
        differences: Vec<String>,
    },
    /// A device, driver or library the run needs is not on this machine (no CUDA driver, no
    /// NVRTC, a device id it does not have).
    #[error("{0}")]
    Unavailable(String),
    /// A call into CUDA (the driver, cuBLAS, cuSOLVER) failed: the call, and what it said.
    #[error("CUDA: {0}")]
    Cuda(String),
    /// A numerical routine failed (for example an SVD that did not converge).
    #[error("{0}")]
    Numeric(String),
    /// A task could not get the device memory it needs: an allocation failed (which the memory
    /// governor recovers from), or the governor gave up (`why` says why).
    #[error("out of device memory in {task} (site {site}, {kernel} kernel): needs {needed}, {available}{why}")]
    OutOfMemory {
        /// The task, with its columns.
        task: String,
        /// Its site.
        site: usize,
        /// Its kernel (env, sketch, qr, …).
        kernel: &'static str,
        /// Bytes it asked for.
        needed: crate::ByteSize,
        /// What the device had: free memory and the largest cached block.
        available: String,
        /// Why the governor gave up, when it is more than the shortfall itself.
        why: String,
        /// True when the failure was injected (`--inject-oom`).
        injected: bool,
    },
    /// A device's own allocator had no memory for a buffer a primitive needed (a GPU's driver
    /// said so); the task that ran it turns it into [`Error::OutOfMemory`].
    #[error("the device's allocator could not give {bytes}: {said}")]
    DeviceOutOfMemory {
        /// Bytes asked for.
        bytes: crate::ByteSize,
        /// What the allocator said.
        said: String,
    },
    /// A device failed while running a task; the whole run stops.
    #[error("device {device} failed in {task}: {reason}")]
    DeviceFailed {
        /// The device.
        device: usize,
        /// The task it was running.
        task: String,
        /// What went wrong.
        reason: String,
    },
    /// A stored value's file no longer holds what srcflow wrote into it (its checksum, type or
    /// shape differ): the value is never used.
    #[error("{path} no longer holds what srcflow wrote there: {why}")]
    Damaged {
        /// The file at fault.
        path: PathBuf,
        /// What differs.
        why: String,
    },
    /// The user pressed Ctrl-C; the run stopped and removed its scratch and partial output.
    #[error("interrupted; scratch files and partial output removed")]
    Interrupted,
}

/// Result with srcflow's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// A core file at fault: its layer, site and path, and what is wrong.
    pub fn bad_core(layer: &str, site: usize, path: &Path, message: String) -> Self {
        Error::BadCore {
            layer: layer.to_string(),
            site,
            path: path.to_path_buf(),
            message,
        }
    }

    /// True for an out-of-memory error, which the memory governor may recover from.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, Error::OutOfMemory { .. })
    }

    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}
