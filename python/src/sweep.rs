//! The two entry points: `run` (the compressed product, its report and trace) and `graph`
//! (the sweep graph a run would execute, without running it).

use crate::arrays::to_numpy;
use crate::errors::to_python;
use crate::interrupt::run_interruptibly;
use crate::progress_line::ProgressLine;
use crate::python_logging::set_level_from_python;
use crate::request::Request;
use crate::session::Session;
use crate::site_source::SiteSource;
use pyo3::prelude::*;
use serde_json::json;
use srcflow::engine::MemorySink;
use srcflow::trace::write_chrome_trace;
use srcflow::train::layout::shape_to_quimb;
use srcflow::{CancelToken, SweepGraph};
use srcflow_sched::store::clean_stale;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Runs the request on `session`: the output cores in quimb layout and the run's report as
/// JSON. Writes the Perfetto trace to `trace` when given; draws a progress line on a terminal
/// when `progress`.
#[pyfunction]
#[pyo3(signature = (request, session, trace=None, progress=false))]
pub fn run(
    py: Python<'_>,
    request: Request,
    session: &Session,
    trace: Option<PathBuf>,
    progress: bool,
) -> PyResult<(Vec<Py<PyAny>>, String)> {
    set_level_from_python(py)?;
    let given = request.stack_shape().map_err(to_python)?;
    let source = SiteSource::new(&request, &given).map_err(to_python)?;
    let cancel = CancelToken::new();
    let mut builder = request
        .engine()
        .map_err(to_python)?
        .session(session.engine_session()?)
        .cancel(cancel.clone())
        .trace(trace.is_some());
    let line = progress.then(|| Arc::new(ProgressLine::new()));
    if let Some(line) = &line {
        builder = builder.progress(line.clone());
    }
    let engine = builder.build().map_err(to_python)?;
    // A detected host budget is within the machine; only a given one is checked (this reads
    // /proc/meminfo, which a loop of small calls should not pay for).
    if let (Some(budgets), Some(_)) = (&engine.tiering().budgets, request.host_memory) {
        budgets.within_machine().map_err(to_python)?;
    }
    if let Some(budgets) = &engine.tiering().budgets {
        clean_stale_once(&budgets.scratch_dir);
    }
    let sink = MemorySink::new(source.shape().output_kind(), source.shape().sites());
    let ran = run_interruptibly(py, &cancel, |watch| {
        let prepared = engine.prepared(source.shape())?;
        let ran = engine.run_graph_watched(&prepared.graph, &source, &sink, watch);
        ran.map(|(report, log)| (report, log, prepared.graph))
    });
    if let Some(line) = &line {
        line.finish();
    }
    let (report, log, graph) = ran?.map_err(|e| raised_by_site(py, &source, e))?;
    if let Some(path) = &trace {
        write_chrome_trace(path, &graph, &log).map_err(to_python)?;
    }
    let cores = sink.into_cores().map_err(to_python)?;
    let arrays = quimb_arrays(py, &graph, cores)?;
    engine.remove_checkpoint().map_err(to_python)?;
    let report = serde_json::to_string(&report).expect("a report serialises");
    Ok((arrays, report))
}

/// Removes the scratch folders that dead runs left under `scratch` (a call killed by a time
/// limit or `kill -9`), the first time a call of this process uses that folder: as `srcflow
/// run` does at every start, without a loop of small calls paying for a listing each.
fn clean_stale_once(scratch: &Path) {
    static CLEANED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    let mut cleaned = CLEANED.lock().unwrap_or_else(|e| e.into_inner());
    if cleaned.iter().any(|done| done == scratch) {
        return;
    }
    cleaned.push(scratch.to_path_buf());
    let removed = clean_stale(scratch);
    if removed > 0 {
        tracing::warn!(
            "removed {removed} scratch folder(s) left by dead runs under {}",
            scratch.display()
        );
    }
}

/// The exception for the run's `error`: the one a site raised when read, with the engine's
/// message (naming the train and site) added as a note, or else the engine's.
fn raised_by_site(py: Python<'_>, source: &SiteSource, error: srcflow::Error) -> PyErr {
    let Some(raised) = source.take_failure() else {
        return to_python(error);
    };
    let value = raised.value(py);
    if value.hasattr("add_note").unwrap_or(false) {
        let _ = value.call_method1("add_note", (format!("srcflow: {error}"),));
    }
    raised
}

/// The output cores (`[l, r, u, d]`) as NumPy arrays in quimb layout.
fn quimb_arrays(
    py: Python<'_>,
    graph: &SweepGraph,
    cores: Vec<srcflow::tensor::AnyTensor>,
) -> PyResult<Vec<Py<PyAny>>> {
    let (kind, sites) = (graph.output_kind(), cores.len());
    cores
        .into_iter()
        .enumerate()
        .map(|(site, core)| {
            let shape = core.shape();
            let lrud = [shape[0], shape[1], shape[2], shape[3]];
            let quimb = shape_to_quimb(kind, site, sites, lrud);
            Ok(to_numpy(py, core, quimb)?.unbind())
        })
        .collect()
}

/// The sweep graph the request would run, planned for its budgets: its tasks as JSON (op,
/// site, columns, flops, bytes, lane, device, step) and as Graphviz DOT.
#[pyfunction]
pub fn graph(py: Python<'_>, request: Request, session: &Session) -> PyResult<(String, String)> {
    set_level_from_python(py)?;
    let given = request.stack_shape().map_err(to_python)?;
    let engine = request
        .engine()
        .map_err(to_python)?
        .session(session.engine_session()?)
        .build()
        .map_err(to_python)?;
    let prepared = engine.prepared(&given.into_ket_form()).map_err(to_python)?;
    let (graph, plan) = (&*prepared.graph, &prepared.plan);
    let tasks: Vec<_> = graph
        .tasks()
        .map(|task| {
            json!({
                "op": task.op.name(),
                "site": task.site,
                "columns": task.cols.map(|c| [c.start, c.end]),
                "flops": task.flops,
                "peak_bytes": task.peak_bytes,
                "moved_bytes": task.moved_bytes,
                "lane": task.lane,
                "device": task.device,
                "step": task.step,
            })
        })
        .collect();
    let summary = json!({
        "tasks": tasks,
        "batch_cols": plan.as_ref().map(|p| p.batch_cols),
        "tiers": plan.as_ref().map(|p| &p.tiers),
    });
    Ok((summary.to_string(), graph.to_dot()))
}
