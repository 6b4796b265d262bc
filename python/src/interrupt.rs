//! Runs the engine with the GIL released, so that reads of Python sites (and other Python
//! threads) proceed, while the calling thread watches for Ctrl-C and cancels the run on it.

use pyo3::prelude::*;
use srcflow::CancelToken;

/// The result of `work`, run with the GIL released; `work` gets the watch that the engine calls
/// on this thread about every [`srcflow::WATCH_EVERY`]. On Python's main thread (the one
/// signals reach) a signal there (Ctrl-C's KeyboardInterrupt) cancels `cancel`, and is raised
/// once `work` has stopped; on other threads the watch does nothing (it would take the GIL for
/// no signal). A panic becomes a `RuntimeError`.
pub fn run_interruptibly<T: Send>(
    py: Python<'_>,
    cancel: &CancelToken,
    work: impl FnOnce(&mut dyn FnMut()) -> T + Send,
) -> PyResult<T> {
    let on_main = on_main_thread(py)?;
    let mut signal = None;
    let outcome = py.detach(|| {
        let mut watch = || {
            if on_main && signal.is_none() {
                if let Err(raised) = Python::attach(|py| py.check_signals()) {
                    cancel.cancel();
                    signal = Some(raised);
                }
            }
        };
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&mut watch)))
    });
    if let Some(raised) = signal {
        return Err(raised);
    }
    outcome.map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("srcflow's run panicked"))
}

/// True on the thread Python runs signal handlers on.
fn on_main_thread(py: Python<'_>) -> PyResult<bool> {
    let threading = py.import("threading")?;
    let current = threading.call_method0("current_thread")?;
    Ok(current.is(&threading.call_method0("main_thread")?))
}
