//! `report`: a trace summed per pass and lane, as `srcflow report` prints it.

use crate::errors::to_python;
use pyo3::prelude::*;
use srcflow::trace::{read_trace, TraceSummary};
use srcflow::Error;
use std::path::PathBuf;

/// The summary of the trace at `path` (busy, idle and stalled time per lane, bytes moved,
/// GFLOP/s, overlap): `srcflow report`'s text, or its JSON when `json`.
#[pyfunction]
#[pyo3(signature = (path, json=false))]
pub fn report(path: PathBuf, json: bool) -> PyResult<String> {
    let trace = read_trace(&path).map_err(to_python)?;
    let summary =
        TraceSummary::of(&trace).map_err(|message| to_python(Error::Manifest { path, message }))?;
    Ok(match json {
        true => serde_json::to_string(&summary).expect("a summary serialises"),
        false => summary.to_string(),
    })
}
