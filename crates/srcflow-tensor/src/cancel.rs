//! `CancelToken`: asks one run to stop cleanly (scratch and partial output removed), from
//! another thread — the CLI's signal handler, or a library user's.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often a run calls the watch of the thread that started it (`Engine::run_graph_watched`),
/// where a caller checks for its own reasons to stop (Python's Ctrl-C).
pub const WATCH_EVERY: Duration = Duration::from_millis(20);

/// A flag shared by a run and whoever may cancel it; clones share the flag.
#[derive(Clone, Debug, Default)]
pub struct CancelToken {
    cancelled: Arc<AtomicBool>,
}

impl CancelToken {
    /// A token not yet cancelled.
    pub fn new() -> Self {
        CancelToken::default()
    }

    /// Asks the run to stop; returns true when it had been asked already.
    pub fn cancel(&self) -> bool {
        self.cancelled.swap(true, Ordering::SeqCst)
    }

    /// True once the run has been asked to stop.
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    /// [`Error::Interrupted`] once the run has been asked to stop.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            return Err(Error::Interrupted);
        }
        Ok(())
    }

    /// Sleeps until `deadline`, or fails with [`Error::Interrupted`] within [`WATCH_EVERY`] of
    /// the run being asked to stop.
    pub fn sleep_until(&self, deadline: Instant) -> Result<()> {
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            self.check()?;
            std::thread::sleep(left.min(WATCH_EVERY));
        }
        self.check()
    }
}

/// Waits until `finished` receives (or its sender is gone: the work ended, or panicked), calling
/// `watch` every [`WATCH_EVERY`] meanwhile: how a thread that started work elsewhere stays free
/// to look for reasons to stop.
pub fn wait_watching(finished: &crossbeam_channel::Receiver<()>, watch: &mut dyn FnMut()) {
    use crossbeam_channel::RecvTimeoutError;
    while let Err(RecvTimeoutError::Timeout) = finished.recv_timeout(WATCH_EVERY) {
        watch();
    }
}
