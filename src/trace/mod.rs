//! Traces of a run in the Chrome Trace Event Format, for Perfetto (ui.perfetto.dev) and
//! chrome://tracing.

mod chrome;
mod summary;

pub use chrome::{chrome_trace, pass_name, write_chrome_trace};
pub use summary::{LaneSummary, TraceSummary};
