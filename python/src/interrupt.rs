//! Runs the engine with the GIL released, so that reads of Python sites (and other Python
//! threads) proceed, while the calling thread watches for Ctrl-C and cancels the run on it.

use pyo3::prelude::*;
use srcflow::CancelToken;
use std::time::Duration;

/// How often the calling thread looks for a signal.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// The result of `work`, run on a thread of its own; a signal (Ctrl-C's KeyboardInterrupt)
/// cancels `cancel`, waits for `work` to stop and is raised.
pub fn run_interruptibly<T: Send>(
    py: Python<'_>,
    cancel: &CancelToken,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    let mut signal = None;
    let outcome = py.detach(|| {
        std::thread::scope(|scope| {
            let worker = scope.spawn(work);
            while !worker.is_finished() {
                std::thread::sleep(SIGNAL_POLL);
                if signal.is_none() {
                    if let Err(raised) = Python::attach(|py| py.check_signals()) {
                        cancel.cancel();
                        signal = Some(raised);
                    }
                }
            }
            worker.join()
        })
    });
    if let Some(raised) = signal {
        return Err(raised);
    }
    outcome.map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("srcflow's run panicked"))
}
