//! Durable file updates: write a temporary file, flush it to the disk, rename it over the
//! final name and flush the directory, so that a kill at any moment leaves the old file or
//! the new one, whole.

use crate::error::{Error, Result};
use std::fs::File;
use std::io::Write;
use std::path::Path;

/// Suffix of a file still being written; what a kill leaves of one in a checkpoint is removed
/// when the checkpoint is opened again.
pub const TEMPORARY: &str = ".srcflow-tmp";

/// Replaces `path` by a file holding `bytes`, durably: a failure (named by `path`) leaves
/// nothing behind.
pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    let temporary = temporary_of(path);
    let written = File::create(&temporary)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()))
        .map_err(|e| Error::io(path, e))
        .and_then(|()| publish(&temporary, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

/// Flushes the written file `temporary` to the disk and renames it to `path`, durably.
pub(crate) fn publish(temporary: &Path, path: &Path) -> Result<()> {
    flush_and_rename(temporary, path)?;
    sync_folder_of(path)
}

/// Flushes the data of the written file `temporary` to the disk and renames it to `path`; the
/// new name is durable only once its folder is flushed (a record made after this, which names
/// the file, must find it there before trusting it).
pub fn flush_and_rename(temporary: &Path, path: &Path) -> Result<()> {
    File::open(temporary)
        .and_then(|file| file.sync_data())
        .and_then(|()| std::fs::rename(temporary, path))
        .map_err(|e| Error::io(path, e))
}

/// Removes the file `path` if it is there (one already gone is no error).
pub fn remove_if_there(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, e)),
        _ => Ok(()),
    }
}

/// The temporary name `path` is written under.
pub fn temporary_of(path: &Path) -> std::path::PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(TEMPORARY);
    name.into()
}

/// Flushes every file under `dir` (and below), then `dir` itself, to the disk.
pub fn sync_tree(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    for entry in entries {
        let path = entry.map_err(|e| Error::io(dir, e))?.path();
        if path.is_dir() {
            sync_tree(&path)?;
        } else {
            File::open(&path)
                .and_then(|file| file.sync_all())
                .map_err(|e| Error::io(&path, e))?;
        }
    }
    File::open(dir)
        .and_then(|dir| dir.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// Flushes the folder holding `path` (its entries: names made or renamed) to the disk.
pub fn sync_folder_of(path: &Path) -> Result<()> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
    let folder = parent.unwrap_or(Path::new("."));
    File::open(folder)
        .and_then(|dir| dir.sync_all())
        .map_err(|e| Error::io(folder, e))
}
