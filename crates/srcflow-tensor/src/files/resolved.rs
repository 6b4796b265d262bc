//! Paths compared as the filesystem sees them, so that two names of one folder (relative and
//! absolute, through a symbolic link, with `..`) are known to be one before a run writes there.

use std::path::{Path, PathBuf};

/// `path` made absolute, with the symbolic links and `..` of the part of it that exists
/// resolved, and the part that does not exist yet appended as given.
pub fn resolved(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.as_path();
    let mut missing = vec![];
    loop {
        if let Ok(real) = existing.canonicalize() {
            return missing
                .iter()
                .rev()
                .fold(real, |path, name| path.join(name));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_os_string());
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

/// True when `path` is `folder` or lies inside it, as the filesystem sees them.
pub fn within(path: &Path, folder: &Path) -> bool {
    resolved(path).starts_with(resolved(folder))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_one_place_resolve_alike_whether_or_not_it_exists() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        std::os::unix::fs::symlink(&real, dir.path().join("link")).unwrap();
        let through_link = dir.path().join("link/new/file.json");
        assert_eq!(
            resolved(&through_link),
            resolved(&real.join("new/file.json"))
        );
        assert!(within(&through_link, &real));
        assert!(within(&dir.path().join("real/../real/x"), &real));
        assert!(within(&real, &real));
        assert!(!within(&dir.path().join("realm"), &real));
        assert!(!within(&real, &real.join("x")));
    }
}
