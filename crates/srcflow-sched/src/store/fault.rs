//! `DiskFault`: an injected disk error (`--inject-disk-error`), to prove cleanup on failure.

use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::fault_spec::head_and_nth;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Fails the `nth` scratch write (from 1) with an operating-system error.
#[derive(Debug)]
pub struct DiskFault {
    errno: i32,
    nth: usize,
    writes: AtomicUsize,
}

impl DiskFault {
    /// The error to report if this write is the one chosen to fail.
    pub fn on_write(&self) -> Option<std::io::Error> {
        let count = self.writes.fetch_add(1, Ordering::Relaxed) + 1;
        (count == self.nth).then(|| std::io::Error::from_raw_os_error(self.errno))
    }
}

impl Clone for DiskFault {
    /// A fault with the same error and position and its own count of writes.
    fn clone(&self) -> Self {
        DiskFault {
            errno: self.errno,
            nth: self.nth,
            writes: AtomicUsize::new(0),
        }
    }
}

impl FromStr for DiskFault {
    type Err = Error;

    /// Parses `enospc` or `eio`, optionally `:N` for the N-th write (default the first).
    fn from_str(text: &str) -> Result<Self> {
        let bad = || {
            Error::Invalid(format!(
                "cannot read disk fault '{text}': expected enospc or eio, optionally :N (N ≥ 1)"
            ))
        };
        let (kind, nth) = head_and_nth(text).ok_or_else(bad)?;
        let errno = match kind {
            "enospc" => libc::ENOSPC,
            "eio" => libc::EIO,
            _ => return Err(bad()),
        };
        Ok(DiskFault {
            errno,
            nth,
            writes: AtomicUsize::new(0),
        })
    }
}
