//! Traces of a run in the Chrome Trace Event Format, for Perfetto (ui.perfetto.dev) and
//! chrome://tracing.

mod chrome;
mod kernel_summary;
mod lane_waits;
mod rank_traces;
mod scope;
mod shape_summary;
mod slices;
mod summary;
mod timeline;

pub use chrome::{chrome_trace, rank_trace, write_chrome_trace};
pub use kernel_summary::KernelSummary;
pub use rank_traces::join_rank_traces;
pub use shape_summary::ShapeSummary;
pub use summary::{LaneSummary, TraceSummary};
pub use timeline::timeline_svg;

use srcflow_tensor::error::{Error, Result};
use std::path::Path;

/// Reads a trace file as JSON, naming the file in any error.
pub fn read_trace(path: &Path) -> Result<serde_json::Value> {
    let text =
        srcflow_tensor::files::read_regular_to_string(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::Manifest {
        path: path.to_path_buf(),
        message: format!("not a JSON trace: {e}"),
    })
}
