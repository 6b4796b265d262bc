//! `Budgets`: how much device memory, host memory and scratch disk a run may use.

use serde::Serialize;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::ByteSize;
use std::path::{Path, PathBuf};

/// The memory and disk a run may use, in bytes, and where its scratch files go.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Budgets {
    /// Device memory per device (on the CPU backend: an arena carved out of host memory).
    pub device: u64,
    /// Host memory for the whole process (on the CPU backend the device arena counts here too).
    pub host: u64,
    /// Scratch disk space.
    pub disk: u64,
    /// Directory under which the run's scratch directory is made.
    pub scratch_dir: PathBuf,
    /// Whether `device` was left out and is the host budget: a device budget too small is then
    /// reported as the host budget's, the one the user set.
    #[serde(skip)]
    pub device_follows_host: bool,
}

impl Budgets {
    /// Budgets of `device` bytes per device, `host` bytes of host memory and `disk` bytes of
    /// scratch disk under the folder `scratch_dir`, all given (none detected).
    pub fn new(device: u64, host: u64, disk: u64, scratch_dir: PathBuf) -> Budgets {
        Budgets {
            device,
            host,
            disk,
            scratch_dir,
            device_follows_host: false,
        }
    }

    /// Budgets with every size left out (`None`) taken from what this machine has now: host
    /// memory 90 % of `MemAvailable`, device memory the host budget, disk 95 % of the free space
    /// under the scratch directory (`$TMPDIR`, else `/tmp`, when none is given). A scratch
    /// directory given must be an existing folder.
    pub fn detect(
        device: Option<u64>,
        host: Option<u64>,
        disk: Option<u64>,
        scratch_dir: Option<PathBuf>,
    ) -> Result<Budgets> {
        let host = match host {
            Some(bytes) => bytes,
            None => available_memory()? / 10 * 9,
        };
        if let Some(dir) = &scratch_dir {
            srcflow_tensor::files::existing_folder(dir, "scratch folder")?;
        }
        let scratch_dir = scratch_dir.unwrap_or_else(std::env::temp_dir);
        let disk = match disk {
            Some(bytes) => bytes,
            None => free_space(&scratch_dir)? / 20 * 19,
        };
        Ok(Budgets {
            device: device.unwrap_or(host),
            host,
            disk,
            scratch_dir,
            device_follows_host: device.is_none(),
        })
    }

    /// Refuses a host budget above this machine's memory (`MemTotal`): a run cannot keep it,
    /// and it is most often a unit mistyped (`1PB`).
    pub fn within_machine(&self) -> Result<()> {
        let total = meminfo_bytes("MemTotal")?;
        if self.host <= total {
            return Ok(());
        }
        Err(Error::Invalid(format!(
            "the host budget `Budgets::host` of {} is more than this machine's memory ({}); \
             give at most that",
            ByteSize(self.host),
            ByteSize(total)
        )))
    }

    /// The setting to raise when the device budget is too small: the device budget's, or the
    /// host budget's when the device budget was left out and follows it.
    pub(crate) fn device_setting(&self) -> &'static str {
        match self.device_follows_host {
            true => "`Budgets::host` (the device budget, left out, is the host budget)",
            false => "`Budgets::device`",
        }
    }
}

/// `MemAvailable` from `/proc/meminfo`, in bytes.
pub(crate) fn available_memory() -> Result<u64> {
    meminfo_bytes("MemAvailable")
}

/// The field `name` of `/proc/meminfo`, in bytes.
fn meminfo_bytes(name: &str) -> Result<u64> {
    let path = Path::new("/proc/meminfo");
    let text =
        srcflow_tensor::files::read_regular_to_string(path).map_err(|e| Error::io(path, e))?;
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kb| kb.trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .ok_or_else(|| {
            Error::Invalid(format!(
                "cannot read {name} from /proc/meminfo; give the host budget"
            ))
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
