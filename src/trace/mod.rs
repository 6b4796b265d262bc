//! Traces of a run in the Chrome Trace Event Format, for Perfetto (ui.perfetto.dev) and
//! chrome://tracing.

mod chrome;

pub use chrome::{chrome_trace, write_chrome_trace};
