//! `ScratchDir`: the per-run directory of spilled environments, removed at the end, on error,
//! and — if the run died — at the start of the next run.

use crate::liveness::process_is_gone;
use srcflow_tensor::error::{Error, Result};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Prefix of the name of every run's scratch directory.
pub const RUN_SCRATCH: &str = "srcflow-scratch-";
/// Prefix of a scratch directory still being set up (never cleaned by other runs).
const CREATING: &str = ".srcflow-creating-";
/// The lock file a live run holds inside its scratch directory.
const LOCK: &str = ".lock";

/// A scratch directory owned by this run: locked while alive, removed on drop.
#[derive(Debug)]
pub struct ScratchDir {
    path: PathBuf,
    _lock: File,
}

impl ScratchDir {
    /// Removes stale scratch directories under `parent` (a folder that must exist), then makes
    /// this run's own: set up and locked under a name other runs leave alone, then renamed, so
    /// no cleaner sees it unlocked.
    pub fn create(parent: &Path) -> Result<Self> {
        srcflow_tensor::files::existing_folder(parent, "scratch folder")?;
        clean_stale(parent);
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let name = format!("{}-{stamp}", std::process::id());
        let setup = parent.join(format!("{CREATING}{name}"));
        let path = parent.join(format!("{RUN_SCRATCH}{name}"));
        std::fs::create_dir(&setup).map_err(|e| Error::io(&setup, e))?;
        let locked = File::create(setup.join(LOCK))
            .and_then(|file| {
                try_lock(&file)?
                    .then_some(file)
                    .ok_or_else(|| std::io::Error::other("lock held by another process"))
            })
            .and_then(|file| std::fs::rename(&setup, &path).map(|()| file));
        match locked {
            Ok(file) => Ok(ScratchDir { path, _lock: file }),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&setup);
                Err(Error::io(&path, e))
            }
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Removes every scratch directory of this user under `parent` whose run is gone (its lock is
/// free); returns how many it removed. A directory it cannot remove is reported on stderr and
/// left alone: a stranger's leftovers must not stop this run.
pub fn clean_stale(parent: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(RUN_SCRATCH) || !owned_by_me(&entry) {
            continue;
        }
        let dir = entry.path();
        let abandoned = match File::open(dir.join(LOCK)) {
            Ok(file) => try_lock(&file).unwrap_or(false),
            Err(_) => owner_is_gone(&name.to_string_lossy()),
        };
        if !abandoned {
            continue;
        }
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => removed += 1,
            Err(e) => tracing::warn!(
                "cannot remove the stale scratch directory {}: {e}",
                dir.display()
            ),
        }
    }
    removed
}

/// True when the directory entry belongs to the user running this process.
fn owned_by_me(entry: &std::fs::DirEntry) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let me = unsafe { libc::geteuid() };
    entry.metadata().is_ok_and(|m| m.uid() == me)
}

/// Takes an exclusive lock on `file` without waiting; false if another process holds it.
pub fn try_lock(file: &File) -> std::io::Result<bool> {
    // SAFETY: flock on an open descriptor.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(false)
    } else {
        Err(e)
    }
}

/// True when the process id in a scratch directory's name no longer exists (no lock file).
fn owner_is_gone(name: &str) -> bool {
    let pid = name
        .strip_prefix(RUN_SCRATCH)
        .and_then(|rest| rest.split('-').next())
        .and_then(|pid| pid.parse::<i32>().ok());
    pid.is_some_and(process_is_gone)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_directory_is_kept_and_a_dead_one_removed() {
        let parent = tempfile::tempdir().unwrap();
        let live = ScratchDir::create(parent.path()).unwrap();
        let dead = parent.path().join(format!("{RUN_SCRATCH}1-1"));
        std::fs::create_dir(&dead).unwrap();
        File::create(dead.join(LOCK)).unwrap();
        File::create(dead.join("env-00001.bin")).unwrap();
        assert_eq!(clean_stale(parent.path()), 1);
        assert!(!dead.exists() && live.path().exists());
        let path = live.path().to_path_buf();
        drop(live);
        assert!(!path.exists());
    }
}
