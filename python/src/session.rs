//! `Session`: the Python handle of an engine session (`srcflow.Session` wraps it, with the
//! lock that makes its calls take turns).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::Mutex;

/// An engine session: the devices' backends and the plans made so far, shared by the calls
/// made with it, until `close`.
#[pyclass(module = "srcflow._core", name = "Session")]
pub struct Session {
    inner: Mutex<Option<srcflow::engine::Session>>,
}

impl Session {
    /// The engine session, or `ValueError` once closed.
    pub fn engine_session(&self) -> PyResult<srcflow::engine::Session> {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
            .ok_or_else(|| PyValueError::new_err("this srcflow.Session is closed"))
    }
}

#[pymethods]
impl Session {
    /// An empty session: backends and plans are made by the first call that needs them.
    #[new]
    fn new() -> Self {
        Session {
            inner: Mutex::new(Some(srcflow::engine::Session::new())),
        }
    }

    /// Forgets the plans kept and gives back cached memory; the backends stay.
    fn trim(&self) -> PyResult<()> {
        self.engine_session()?.trim();
        Ok(())
    }

    /// Drops the backends (their threads) and the plans; later calls raise `ValueError`.
    fn close(&self) {
        if let Some(session) = self.inner.lock().unwrap_or_else(|e| e.into_inner()).take() {
            session.close();
        }
    }

    /// True once closed.
    #[getter]
    fn closed(&self) -> bool {
        self.inner
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
    }

    /// What the session holds (backends, plans, and how often a plan was reused), then the
    /// bytes of large buffers in use and cached by srcflow's block cache in this process.
    fn stats(&self) -> PyResult<(usize, usize, u64, u64, usize, usize)> {
        let stats = self.engine_session()?.stats();
        let blocks = srcflow::alloc::stats();
        Ok((
            stats.backends,
            stats.plans,
            stats.plan_hits,
            stats.plan_misses,
            blocks.live_bytes,
            blocks.cached_bytes,
        ))
    }
}
