//! `Clock`: where the scheduler reads the time — the wall clock for real runs, a virtual clock
//! that jumps from event to event when a run is simulated on a machine model.

use std::time::Instant;

/// The scheduler's source of time.
pub(crate) trait Clock: Send + Sync {
    /// The current time.
    fn now(&self) -> Instant;
}

/// The wall clock.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WallClock;

impl Clock for WallClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}
