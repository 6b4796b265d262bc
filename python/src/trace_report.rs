//! `report`: a trace summed per pass and lane, as `srcflow report` prints it.

use crate::errors::to_python;
use pyo3::prelude::*;
use srcflow::trace::{read_trace, TraceSummary};
use srcflow::Error;
use std::path::PathBuf;

/// The summary of the trace at `path` (busy, idle and stalled time per lane, bytes moved,
/// GFLOP/s, overlap), as `srcflow report` prints it.
#[pyfunction]
pub fn report(path: PathBuf) -> PyResult<String> {
    let trace = read_trace(&path).map_err(to_python)?;
    let summary =
        TraceSummary::of(&trace).map_err(|message| to_python(Error::Manifest { path, message }))?;
    Ok(summary.to_string())
}
