//! `DeviceFault`: an injected device failure (`--inject-device-failure`), to prove that a
//! failing device stops the whole run cleanly.

use crate::error::{Error, Result};
use crate::fault_spec::head_and_nth;
use std::fmt::Display;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Fails the `nth` compute task (from 1) that runs on `device`.
#[derive(Debug)]
pub struct DeviceFault {
    device: usize,
    nth: usize,
    tasks: AtomicUsize,
}

impl DeviceFault {
    /// The device that fails.
    pub fn device(&self) -> usize {
        self.device
    }

    /// The error the compute task `task`, run on `device`, fails with, if it is the one chosen
    /// to fail.
    pub fn on_compute_task(&self, device: usize, task: &impl Display) -> Result<()> {
        if device != self.device {
            return Ok(());
        }
        let count = self.tasks.fetch_add(1, Ordering::Relaxed) + 1;
        if count != self.nth {
            return Ok(());
        }
        Err(Error::DeviceFailed {
            device: self.device,
            task: task.to_string(),
            reason: format!(
                "injected failure (`DeviceOptions::inject_failure` {}:{})",
                self.device, self.nth
            ),
        })
    }
}

impl Clone for DeviceFault {
    /// A fault on the same device and task, with its own count of tasks.
    fn clone(&self) -> Self {
        DeviceFault {
            device: self.device,
            nth: self.nth,
            tasks: AtomicUsize::new(0),
        }
    }
}

impl FromStr for DeviceFault {
    type Err = Error;

    /// Parses `D` or `D:N`: device D fails its N-th compute task (default the first).
    fn from_str(text: &str) -> Result<Self> {
        let bad = || {
            Error::Invalid(format!(
                "cannot read device failure '{text}': expected DEVICE or DEVICE:N (N ≥ 1)"
            ))
        };
        let (device, nth) = head_and_nth(text).ok_or_else(bad)?;
        let device = device.parse().map_err(|_| bad())?;
        Ok(DeviceFault {
            device,
            nth,
            tasks: AtomicUsize::new(0),
        })
    }
}
