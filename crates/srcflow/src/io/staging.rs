//! `StagingDir`: a hidden sibling directory renamed into place only when complete.

use srcflow_sched::liveness::process_is_gone;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::files::refuse_existing;
use std::path::{Path, PathBuf};

/// A directory built under a temporary name next to its destination; removed unless committed.
pub(crate) struct StagingDir {
    staging: PathBuf,
    destination: PathBuf,
    committed: bool,
}

impl StagingDir {
    /// Starts building `destination`, which must not exist yet, in a folder that must.
    pub fn create(destination: &Path) -> Result<Self> {
        refuse_existing(destination)?;
        let name = destination.file_name().ok_or_else(|| {
            Error::Invalid(format!(
                "output path {} has no file name",
                destination.display()
            ))
        })?;
        let parent = destination
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        srcflow_tensor::files::existing_folder(
            parent,
            &format!("folder of {}", destination.display()),
        )?;
        let prefix = format!(".{}.srcflow-tmp-", staging_stem(&name.to_string_lossy()));
        remove_abandoned(parent, &prefix);
        let staging = parent.join(format!("{prefix}{}", std::process::id()));
        if staging.exists() {
            std::fs::remove_dir_all(&staging).map_err(|e| Error::io(&staging, e))?;
        }
        std::fs::create_dir(&staging).map_err(|e| Error::io(&staging, e))?;
        Ok(StagingDir {
            staging,
            destination: destination.to_path_buf(),
            committed: false,
        })
    }

    /// Where to write the contents.
    pub fn path(&self) -> &Path {
        &self.staging
    }

    /// Flushes the finished directory to the disk and renames it to its destination, durably:
    /// a kill or power loss after this leaves the whole of it there.
    pub fn commit(mut self) -> Result<()> {
        refuse_existing(&self.destination)?;
        srcflow_tensor::files::durable::sync_tree(&self.staging)?;
        std::fs::rename(&self.staging, &self.destination)
            .map_err(|e| Error::io(&self.destination, e))?;
        self.committed = true;
        srcflow_tensor::files::durable::sync_folder_of(&self.destination)
    }
}

impl Drop for StagingDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

/// The longest output name its staging name holds whole: a file name has at most 255 bytes,
/// and the staging name adds a dot, `.srcflow-tmp-` and a process id.
const WHOLE_NAME: usize = 200;

/// The part of the staging name that stands for the output name `name`: the name itself, or
/// for a longer one its start and the xxh3 hash of the whole (the same for every run, so that
/// a dead run's staging directory is found again).
fn staging_stem(name: &str) -> String {
    if name.len() <= WHOLE_NAME {
        return name.to_string();
    }
    let mut start = WHOLE_NAME - 17;
    while !name.is_char_boundary(start) {
        start -= 1;
    }
    let hash = xxhash_rust::xxh3::xxh3_64(name.as_bytes());
    format!("{}-{hash:016x}", &name[..start])
}

/// Removes staging directories `<prefix><pid>` under `parent` whose process is gone (a run
/// killed before it could clean up); one that cannot be removed is left, with a warning.
fn remove_abandoned(parent: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(|pid| pid.parse::<i32>().ok());
        if pid.is_some_and(process_is_gone) {
            if let Err(e) = std::fs::remove_dir_all(entry.path()) {
                tracing::warn!(
                    "cannot remove the abandoned output {}: {e}",
                    entry.path().display()
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_with_a_name_of_250_bytes_is_staged_and_committed() {
        let dir = tempfile::tempdir().unwrap();
        let destination = dir.path().join("o".repeat(250));
        let staging = StagingDir::create(&destination).unwrap();
        std::fs::write(staging.path().join("core.npy"), "x").unwrap();
        let (stem, other) = (
            staging_stem(&"o".repeat(250)),
            staging_stem(&"o".repeat(251)),
        );
        assert!(stem.len() <= WHOLE_NAME && stem != other, "{stem} {other}");
        staging.commit().unwrap();
        assert!(destination.join("core.npy").exists());
    }
}
