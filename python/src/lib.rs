//! `srcflow._core`: srcflow's engine for the Python package `srcflow` (`python/srcflow/`), which
//! checks arguments as src-method does and calls [`sweep::run`] and [`sweep::graph`] (and
//! [`check_cuda`] and [`trace_report::report`]).

mod arrays;
mod errors;
mod interrupt;
mod progress_line;
mod python_logging;
mod request;
mod session;
mod site_source;
mod sweep;
mod trace_report;

use pyo3::prelude::*;

/// Large buffers come from srcflow's block cache, as in the `srcflow` binary (see
/// `srcflow::alloc`): the system allocator page-faults every fresh buffer in.
#[global_allocator]
static ALLOCATOR: srcflow::alloc::BlockCache = srcflow::alloc::BlockCache;

/// Raises `srcflow.BackendUnavailableError` naming what is missing unless `device="gpu"` can
/// run here (a CUDA driver, CUDA's libraries and a device).
#[pyfunction]
fn check_cuda() -> PyResult<()> {
    if srcflow::backend::CudaBackend::device_count() > 0 {
        return Ok(());
    }
    match srcflow::backend::CudaBackend::new(0) {
        Ok(_) => Ok(()),
        Err(e) => Err(errors::to_python(e)),
    }
}

/// The module: the entry points, the exception classes and the log bridge.
#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    python_logging::install();
    errors::register(module)?;
    module.add_class::<session::Session>()?;
    module.add_function(wrap_pyfunction!(sweep::run, module)?)?;
    module.add_function(wrap_pyfunction!(sweep::graph, module)?)?;
    module.add_function(wrap_pyfunction!(check_cuda, module)?)?;
    module.add_function(wrap_pyfunction!(trace_report::report, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add("MOST_DEVICES", srcflow::graph::MOST_DEVICES)?;
    module.add("MOST_IO_DEPTH", srcflow::store::MOST_IO_DEPTH)?;
    Ok(())
}
