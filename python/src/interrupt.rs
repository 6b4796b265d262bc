//! Runs the engine with the GIL released, so that reads of Python sites (and other Python
//! threads) proceed, while the calling thread watches for Ctrl-C and cancels the run on it.

use pyo3::prelude::*;
use srcflow::CancelToken;

/// The result of `work`, run with the GIL released; `work` gets the watch that the engine calls
/// on this thread about every [`srcflow::WATCH_EVERY`]: a signal there (Ctrl-C's
/// KeyboardInterrupt) cancels `cancel`, and is raised once `work` has stopped.
pub fn run_interruptibly<T: Send>(
    py: Python<'_>,
    cancel: &CancelToken,
    work: impl FnOnce(&mut dyn FnMut()) -> T + Send,
) -> PyResult<T> {
    let mut signal = None;
    let outcome = py.detach(|| {
        let mut watch = || {
            if signal.is_none() {
                if let Err(raised) = Python::attach(|py| py.check_signals()) {
                    cancel.cancel();
                    signal = Some(raised);
                }
            }
        };
        work(&mut watch)
    });
    match signal {
        Some(raised) => Err(raised),
        None => Ok(outcome),
    }
}
