//! `srcflow._core`: srcflow's engine for the Python package `srcflow` (`python/srcflow/`), which
//! checks arguments as src-method does and calls [`sweep::run`] and [`sweep::graph`] (and
//! [`cuda_devices`]).

mod arrays;
mod errors;
mod interrupt;
mod python_logging;
mod request;
mod site_source;
mod sweep;

use pyo3::prelude::*;

/// Large buffers come from srcflow's block cache, as in the `srcflow` binary (see
/// `srcflow::alloc`): the system allocator page-faults every fresh buffer in.
#[global_allocator]
static ALLOCATOR: srcflow::alloc::BlockCache = srcflow::alloc::BlockCache;

/// The number of CUDA devices `device="gpu"` can run on here (0 without a driver or without
/// CUDA's libraries).
#[pyfunction]
fn cuda_devices() -> usize {
    srcflow::backend::CudaBackend::device_count()
}

/// The module: the two entry points, the exception classes and the log bridge.
#[pymodule]
fn _core(module: &Bound<'_, PyModule>) -> PyResult<()> {
    python_logging::install();
    errors::register(module)?;
    module.add_function(wrap_pyfunction!(sweep::run, module)?)?;
    module.add_function(wrap_pyfunction!(sweep::graph, module)?)?;
    module.add_function(wrap_pyfunction!(cuda_devices, module)?)?;
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
