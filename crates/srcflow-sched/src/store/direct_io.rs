//! `DirectIo`: whether spill files bypass the page cache (`O_DIRECT`), as `--direct-io` says.

use crate::error::{Error, Result};
use std::fmt;
use std::path::Path;
use std::str::FromStr;

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
                "--direct-io always: the filesystem of the scratch folder {} does not take \
                 O_DIRECT ({e}); give a --scratch-dir on one that does, or --direct-io auto",
                dir.display()
            ))),
        }
    }
}

impl FromStr for DirectIo {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        match text {
            "auto" => Ok(DirectIo::Auto),
            "always" | "on" => Ok(DirectIo::Always),
            "never" | "off" => Ok(DirectIo::Never),
            _ => Err(Error::Invalid(format!(
                "unknown direct I/O choice '{text}': expected auto, always or never"
            ))),
        }
    }
}

impl fmt::Display for DirectIo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            DirectIo::Auto => "auto",
            DirectIo::Always => "always",
            DirectIo::Never => "never",
        };
        f.write_str(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_parse_and_always_checks_the_folder() {
        for choice in [DirectIo::Auto, DirectIo::Always, DirectIo::Never] {
            assert_eq!(choice.to_string().parse::<DirectIo>().unwrap(), choice);
        }
        assert!("sometimes".parse::<DirectIo>().is_err());
        let dir = tempfile::tempdir().unwrap();
        DirectIo::Never.check(Path::new("/nowhere")).unwrap();
        let missing = DirectIo::Always
            .check(&dir.path().join("missing"))
            .unwrap_err();
        assert!(missing.to_string().contains("missing"), "{missing}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
