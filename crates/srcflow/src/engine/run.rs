//! `Run`: what [`super::Engine::run`] returns — the output, the report and the log.

use super::Report;
use crate::trace::write_chrome_trace;
use srcflow_graph::graph::SweepGraph;
use srcflow_graph::train::Train;
use srcflow_sched::sched::RunLog;
use srcflow_tensor::error::{Error, Result};
use std::path::Path;
use std::sync::Arc;

/// One finished SRC run.
#[derive(Debug)]
pub struct Run {
    /// The compressed product.
    pub output: Train,
    /// Times, rates, bytes moved and memory of the run.
    pub report: Report,
    /// Every task's lane, times and memory, when the engine keeps logs
    /// ([`super::EngineBuilder::trace`]).
    pub log: Option<RunLog>,
    /// The graph the run was planned as (the log holds it as the run rewrote it).
    pub graph: Arc<SweepGraph>,
}

impl Run {
    /// Writes the run as a Chrome trace to `path` (open it in ui.perfetto.dev); an error when
    /// the engine kept no log. A rank of several writes its own part this way;
    /// [`super::Engine::whole_trace`] joins every rank's.
    pub fn write_trace(&self, path: &Path) -> Result<()> {
        let log = self.log.as_ref().ok_or_else(|| {
            Error::Invalid(format!(
                "cannot write the trace {}: the engine kept no log (EngineBuilder::trace(true))",
                path.display()
            ))
        })?;
        write_chrome_trace(path, &self.graph, log)
    }
}
