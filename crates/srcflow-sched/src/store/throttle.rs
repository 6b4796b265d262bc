//! `Throttle`: caps a disk lane's rate, to reproduce a slow filesystem on any machine.

use srcflow_tensor::cancel::CancelToken;
use srcflow_tensor::error::Result;
use srcflow_tensor::Bandwidth;
use std::time::{Duration, Instant};

/// Paces one transfer so it moves no faster than a set rate (no cap when `None`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Throttle {
    rate: Option<Bandwidth>,
}

impl Throttle {
    /// A throttle at `rate` bytes per second, or none.
    pub fn new(rate: Option<Bandwidth>) -> Self {
        Throttle { rate }
    }

    /// Sleeps until `bytes_done` bytes since `start` no longer exceed the rate, or fails once
    /// `cancel` is cancelled.
    pub fn pace(&self, start: Instant, bytes_done: u64, cancel: &CancelToken) -> Result<()> {
        match self.rate {
            Some(Bandwidth(rate)) => {
                cancel.sleep_until(start + Duration::from_secs_f64(bytes_done as f64 / rate))
            }
            None => Ok(()),
        }
    }
}
