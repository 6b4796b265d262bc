//! Checks that the folders a run writes into exist: srcflow makes no folder the user named, so a
//! mistyped path is an error before any work, not a folder created and left behind.

use crate::error::{Error, Result};
use std::io::ErrorKind;
use std::path::Path;

/// Checks that `folder` is an existing folder; the error names it as the user's `role` for it
/// (for example "scratch folder").
pub fn existing_folder(folder: &Path, role: &str) -> Result<()> {
    match std::fs::metadata(folder) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(_) => Err(refused(
            folder,
            ErrorKind::NotADirectory,
            role,
            "is a file, not a folder",
        )),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(refused(
            folder,
            ErrorKind::NotFound,
            role,
            "does not exist; srcflow makes no folders: create it first",
        )),
        Err(e) => Err(Error::io(folder, e)),
    }
}

/// Checks that the folder `path` would be written into exists (the current folder for a bare
/// name); the error names that folder and `path`'s `role`.
pub fn existing_parent(path: &Path, role: &str) -> Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    existing_folder(parent, &format!("folder of the {role} {}", path.display()))
}

/// Checks that `path` (the user's `role` for it, such as "trace (--trace)") can be written as a
/// file before any work: its folder exists and it is not itself a folder. A file already
/// there is replaced.
pub fn output_file(path: &Path, role: &str) -> Result<()> {
    existing_parent(path, role)?;
    if path.is_dir() {
        return Err(refused(
            path,
            ErrorKind::IsADirectory,
            role,
            "is a folder; give a file path",
        ));
    }
    Ok(())
}

/// Checks that `path` (the user's `role` for it) is new, in a folder that exists: what a
/// directory srcflow writes atomically needs, checked before any work.
pub fn fresh_path(path: &Path, role: &str) -> Result<()> {
    existing_parent(path, role)?;
    refuse_existing(path)
}

/// Fails when `path` exists (file, directory or link), so no result is ever overwritten.
pub fn refuse_existing(path: &Path) -> Result<()> {
    if path.symlink_metadata().is_ok() {
        return Err(Error::Invalid(format!(
            "output path {} already exists; choose a new one",
            path.display()
        )));
    }
    Ok(())
}

/// An I/O error of `kind` at `folder`, saying that the `role` `what`.
fn refused(folder: &Path, kind: ErrorKind, role: &str, what: &str) -> Error {
    Error::io(
        folder,
        std::io::Error::new(kind, format!("the {role} {what}")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_file_that_is_a_folder_or_in_a_missing_one_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let err = output_file(dir.path(), "trace (--trace)")
            .unwrap_err()
            .to_string();
        assert!(err.contains("the trace (--trace) is a folder"), "{err}");
        let lost = dir.path().join("no/such/run.json");
        let err = output_file(&lost, "trace (--trace)")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("trace (--trace)") && err.contains("does not exist"),
            "{err}"
        );
        let file = dir.path().join("run.json");
        std::fs::write(&file, "old").unwrap();
        assert!(output_file(&file, "trace (--trace)").is_ok());
    }

    #[test]
    fn a_missing_or_file_folder_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(existing_folder(dir.path(), "scratch folder").is_ok());
        let err = existing_folder(&file, "scratch folder")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("file: the scratch folder is a file, not a folder"),
            "{err}"
        );
        let missing = dir.path().join("missing/out");
        let err = existing_parent(&missing, "output").unwrap_err().to_string();
        assert!(
            err.contains("missing: the folder of the output") && err.contains("does not exist"),
            "{err}"
        );
        assert!(existing_parent(Path::new("bare-name"), "trace").is_ok());
    }
}
