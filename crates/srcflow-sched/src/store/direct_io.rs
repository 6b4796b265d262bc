//! `DirectIo`: whether spill files bypass the page cache (`O_DIRECT`), as `--direct-io` and
//! `--no-direct-io` say.

use srcflow_tensor::error::{Error, Result};
use std::path::Path;

/// When spill files are opened with `O_DIRECT`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DirectIo {
    /// Direct where the filesystem takes it, through the page cache where it refuses (tmpfs).
    #[default]
    Auto,
    /// Always direct: a scratch folder on a filesystem that refuses it is refused by name.
    Always,
    /// Never direct: through the page cache, each file flushed and dropped from the cache once
    /// written and once read.
    Never,
}

impl DirectIo {
    /// Fails, naming `dir`, when this choice needs direct I/O and the filesystem of `dir`
    /// refuses it (tried on a file made and removed there).
    pub fn check(self, dir: &Path) -> Result<()> {
        if self != DirectIo::Always {
            return Ok(());
        }
        use std::os::unix::fs::OpenOptionsExt;
        let probe = dir.join(".srcflow-direct-io-probe");
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .custom_flags(libc::O_DIRECT)
            .open(&probe);
        let _ = std::fs::remove_file(&probe);
        match opened {
            Ok(_) => Ok(()),
            Err(e) => Err(Error::Invalid(format!(
                "direct I/O was asked for (`DiskIo::direct`), and the filesystem of {} does not \
                 take O_DIRECT ({e}): choose a folder on one that does, or leave direct I/O to \
                 where the filesystem takes it",
                dir.display()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_always_checks_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        DirectIo::Never.check(Path::new("/nowhere")).unwrap();
        let missing = DirectIo::Always
            .check(&dir.path().join("missing"))
            .unwrap_err();
        assert!(missing.to_string().contains("missing"), "{missing}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
