//! `Pacing`: how far input reads, uploads and spills may drift from compute, in sweep steps.

/// How far I/O may run ahead of (or lag behind) compute; the planner reserves memory for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pacing {
    /// An input read may start when its step is at most this far past the oldest unfinished
    /// compute step.
    pub read_ahead_steps: usize,
    /// When devices share the sweep, a device's part of an input core (read into host memory
    /// up to `read_ahead_steps` early) is uploaded at most this many steps early: the upload is
    /// fast next to the read, and every core held early on a device is held on all of them.
    pub upload_ahead_steps: usize,
    /// A compute task waits while a spill this many steps older (at least 1) is unfinished, so
    /// spills falling behind hold back the left-to-right pass instead of piling up in memory.
    pub spill_lag_steps: usize,
}

impl Default for Pacing {
    fn default() -> Self {
        Pacing {
            read_ahead_steps: 2,
            upload_ahead_steps: 1,
            spill_lag_steps: 2,
        }
    }
}
