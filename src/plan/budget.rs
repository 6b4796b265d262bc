//! `Budgets`: how much device memory, host memory and scratch disk a run may use.

use super::size::ByteSize;
use crate::error::{Error, Result};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The memory and disk a run may use, in bytes, and where its scratch files go.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Budgets {
    /// Device memory per device (on the CPU backend: an arena carved out of host memory).
    pub device: u64,
    /// Host memory for the whole process (on the CPU backend the device arena counts here too).
    pub host: u64,
    /// Scratch disk space.
    pub disk: u64,
    /// Directory under which the run's scratch directory is made.
    pub scratch_dir: PathBuf,
}

/// Budgets as the user gave them; `None` means "detect".
#[derive(Clone, Debug, Default, clap::Args)]
pub struct BudgetArgs {
    /// Device memory per device, e.g. 36GB or 36GiB (CPU backend default: the host budget).
    #[arg(long, value_name = "SIZE")]
    pub device_memory: Option<ByteSize>,
    /// Host memory for the run (default: 90 % of MemAvailable).
    #[arg(long, value_name = "SIZE")]
    pub host_memory: Option<ByteSize>,
    /// Scratch disk space (default: 95 % of the free space under the scratch directory).
    #[arg(long, value_name = "SIZE")]
    pub disk_space: Option<ByteSize>,
    /// Where spilled environments go (default: $TMPDIR, else /tmp).
    #[arg(long, value_name = "DIR")]
    pub scratch_dir: Option<PathBuf>,
}

impl BudgetArgs {
    /// Fills every budget the user left out from what this machine has now.
    pub fn resolve(&self) -> Result<Budgets> {
        let host = match self.host_memory {
            Some(size) => size.0,
            None => available_memory()? / 10 * 9,
        };
        let scratch_dir = self.scratch_dir.clone().unwrap_or_else(std::env::temp_dir);
        let disk = match self.disk_space {
            Some(size) => size.0,
            None => free_space(&scratch_dir)? / 20 * 19,
        };
        Ok(Budgets {
            device: self.device_memory.map_or(host, |size| size.0),
            host,
            disk,
            scratch_dir,
        })
    }
}

/// `MemAvailable` from `/proc/meminfo`, in bytes.
fn available_memory() -> Result<u64> {
    let path = Path::new("/proc/meminfo");
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    text.lines()
        .find_map(|line| line.strip_prefix("MemAvailable:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kb| kb.trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .ok_or_else(|| {
            Error::Invalid("cannot read MemAvailable from /proc/meminfo; give --host-memory".into())
        })
}

/// Bytes free to unprivileged users on the filesystem that holds (or will hold) `dir`.
fn free_space(dir: &Path) -> Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let dir = dir
        .ancestors()
        .find(|d| d.exists())
        .unwrap_or(Path::new("."));
    let c_path = std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(|_| {
        Error::Invalid(format!(
            "scratch directory {} contains a NUL byte",
            dir.display()
        ))
    })?;
    let mut stats = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `c_path` is a valid C string and `stats` is writable memory of the right type.
    let rc = unsafe { libc::statvfs(c_path.as_ptr(), stats.as_mut_ptr()) };
    if rc != 0 {
        return Err(Error::io(dir, std::io::Error::last_os_error()));
    }
    // SAFETY: statvfs returned 0, so it filled `stats`.
    let stats = unsafe { stats.assume_init() };
    // The two fields are of other integer types on other platforms.
    #[allow(clippy::unnecessary_cast)]
    Ok(stats.f_bavail as u64 * stats.f_frsize as u64)
}
