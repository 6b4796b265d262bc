//! `srcflow run`: the compressed product of a problem directory, written to a new directory.

use super::mpi_launch::run_ranked;
use super::problem_args::ProblemArgs;
use super::progress_bar::SweepProgressBar;
use super::run_paths::RunPaths;
use super::signals;
use super::{note, print_report, ReportStyle};
use clap::Args;
use srcflow::checkpoint::CheckpointEvery;
use srcflow::engine::MemorySink;
use srcflow::io::OutputDir;
use srcflow::ranks::Transport;
use srcflow::sched::RunLog;
use srcflow::Result;
use srcflow::{Engine, EngineBuilder, SweepGraph};
use srcflow_sched::store::clean_stale;
use srcflow_tensor::files::durable::write_whole;
use srcflow_tensor::files::{fresh_path, output_file};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Arguments of `srcflow run`.
#[derive(Args)]
pub struct RunArgs {
    #[command(flatten)]
    problem: ProblemArgs,
    /// Output directory; must not exist (srcflow never replaces results). Written to a
    /// temporary name and renamed at the end.
    #[arg(long)]
    out: PathBuf,
    /// Seed of the random sketches.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Kernel threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Write a Chrome trace of the run (open it in ui.perfetto.dev or chrome://tracing),
    /// replacing a file there; a folder, or a missing folder above it, is refused before the
    /// run starts.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Write the sweep graph as the run left it, with any half-batch rewrites of the memory
    /// governor (under mpirun, rank 0's part): DOT when FILE ends in .dot, else JSON. Replaces
    /// a file there, as --trace does.
    #[arg(long, value_name = "FILE")]
    graph_out: Option<PathBuf>,
    /// Keep what the run needs to go on after a kill in DIR (made if missing; its parent must
    /// exist), and resume from it: the same command run again after a kill, a time limit or a
    /// requeue finishes the run from where it was, with the same output, bit for bit. A
    /// checkpoint of another problem, other options or another srcflow is refused, naming what
    /// differs. Removed once the output is written. Under mpirun, every rank keeps its part
    /// in DIR/rank-R (DIR on a file system every rank sees), and all resume together.
    #[arg(long, value_name = "DIR")]
    checkpoint: Option<PathBuf>,
    /// With --checkpoint: keep the environments and S of every N-th site only, or, given a
    /// time (30s, 10m, 1.5h), of the first site a pass reaches once that long has passed since
    /// it last kept one (a kill then loses about that much of the pass under way; under
    /// mpirun, sites only). Output cores, and environments spilled to disk, are kept at every
    /// site. A run in memory writes its environments only for the checkpoint; fewer cost less,
    /// and a resumed run makes those between again.
    #[arg(
        long,
        value_name = "N|TIME",
        default_value = "1",
        requires = "checkpoint"
    )]
    checkpoint_every: CheckpointEvery,
    #[command(flatten)]
    report: ReportStyle,
}

/// Runs `srcflow run`, as one rank of several when `mpirun` started it.
pub fn run(args: RunArgs) -> Result<()> {
    run_ranked(|ranks| match ranks {
        Some(ranks) if ranks.rank() > 0 => run_helping(args, ranks),
        ranks => run_writing(args, ranks),
    })
}

/// Runs the problem alone, or as rank 0 of `ranks`: writes the output, trace and graph and
/// prints the report.
fn run_writing(args: RunArgs, ranks: Option<Arc<dyn Transport>>) -> Result<()> {
    fresh_path(&args.out, "output (--out)")?;
    let files = [
        (&args.trace, "trace (--trace)"),
        (&args.graph_out, "graph (--graph-out)"),
    ];
    for (path, role) in files {
        if let Some(path) = path {
            output_file(path, role)?;
        }
    }
    paths_of(&args).check()?;
    let cancel = signals::cancel_on_signals()?;
    let (problem, engine) = args.problem.open(args.seed, args.threads)?;
    let mut engine = with_checkpoint(engine, &args.checkpoint, args.checkpoint_every);
    if let Some(ranks) = &ranks {
        engine = engine.ranks(Arc::clone(ranks));
    }
    let bar = Arc::new(SweepProgressBar::new());
    let engine = engine
        .progress(bar.clone())
        .cancel(cancel)
        .trace(args.trace.is_some())
        .build()?;
    host_budget_within_machine(&engine)?;
    if let Some(budgets) = &engine.tiering().budgets {
        let removed = clean_stale(&budgets.scratch_dir);
        if removed > 0 {
            note(&format!(
                "removed {removed} scratch director{} left by dead runs under {}",
                if removed == 1 { "y" } else { "ies" },
                budgets.scratch_dir.display()
            ));
        }
    }
    let graph = engine.prepared(problem.shape())?.graph;
    let output = OutputDir::create(&args.out, graph.output_kind(), graph.sites())?;
    let ran = engine.run_graph_logged(&graph, &problem, &output);
    bar.finish();
    let (report, log) = ran?;
    let written = whole_trace(&engine, &args.trace, &graph, &log)
        .and_then(|trace| write_extras(trace, &args.graph_out, &graph, &log))
        .and_then(|()| output.commit());
    let written = match &ranks {
        Some(ranks) => tell_other_ranks(&**ranks, written),
        None => written,
    };
    if let Err(e) = written {
        for path in [&args.trace, &args.graph_out].into_iter().flatten() {
            let _ = std::fs::remove_file(path);
        }
        return Err(e);
    }
    if let Err(e) = engine.remove_checkpoint() {
        note(&format!(
            "the output is written, but its checkpoint was not removed: {e}"
        ));
    }
    signals::closed_pipe_ends_quietly();
    print_report(&report, args.report);
    if !args.report.json {
        println!("output         {}", args.out.display());
    }
    Ok(())
}

/// The paths the run `args` reads and writes.
fn paths_of(args: &RunArgs) -> RunPaths<'_> {
    RunPaths {
        problem: args.problem.dir(),
        out: &args.out,
        trace: args.trace.as_deref(),
        graph_out: args.graph_out.as_deref(),
        checkpoint: args.checkpoint.as_deref(),
        scratch: args.problem.scratch_dir(),
    }
}

/// `engine`, keeping its checkpoint in `dir` (when given) as often as `every` says.
fn with_checkpoint(
    engine: EngineBuilder,
    dir: &Option<PathBuf>,
    every: CheckpointEvery,
) -> EngineBuilder {
    match dir {
        Some(dir) => engine.checkpoint(dir).checkpoint_paced(every),
        None => engine,
    }
}

/// Refuses a host budget given above this machine's memory, before any work.
fn host_budget_within_machine(engine: &Engine) -> Result<()> {
    match &engine.tiering().budgets {
        Some(budgets) => budgets.within_machine(),
        None => Ok(()),
    }
}

/// Runs a rank after the first: its share of the devices, with no output of its own; then
/// waits for rank 0 to say whether it wrote the output, and removes its part of the
/// checkpoint once it has.
fn run_helping(args: RunArgs, ranks: Arc<dyn Transport>) -> Result<()> {
    let cancel = signals::cancel_on_signals()?;
    let (problem, engine) = args.problem.open(args.seed, args.threads)?;
    let engine = with_checkpoint(engine, &args.checkpoint, args.checkpoint_every)
        .ranks(Arc::clone(&ranks))
        .cancel(cancel)
        .trace(args.trace.is_some())
        .build()?;
    host_budget_within_machine(&engine)?;
    let graph = engine.prepared(problem.shape())?.graph;
    let nothing = MemorySink::new(graph.output_kind(), graph.sites());
    let (_, log) = engine.run_graph_logged(&graph, &problem, &nothing)?;
    whole_trace(&engine, &args.trace, &graph, &log)?;
    let said = ranks.broadcast_bytes(0, &[])?;
    if !said.is_empty() {
        return Err(srcflow::Error::Invalid(format!(
            "rank 0 failed: {}",
            String::from_utf8_lossy(&said)
        )));
    }
    if let Err(e) = engine.remove_checkpoint() {
        note(&format!(
            "the output is written, but this rank's checkpoint was not removed: {e}"
        ));
    }
    Ok(())
}

/// `written` (rank 0's output, trace and graph), once the other ranks know whether it was
/// written: they wait for it, so that no rank exits 0 when the output is missing.
fn tell_other_ranks(ranks: &dyn Transport, written: Result<()>) -> Result<()> {
    let said = written
        .as_ref()
        .err()
        .map_or_else(Vec::new, |e| e.to_string().into_bytes());
    let told = ranks.broadcast_bytes(0, &said);
    written.and(told.map(|_| ()))
}

/// The trace of the whole run and where to write it, when the user asked for one (on rank 0
/// of several, which gathers the other ranks' traces; `None` on the others).
fn whole_trace<'a>(
    engine: &Engine,
    path: &'a Option<PathBuf>,
    graph: &SweepGraph,
    log: &RunLog,
) -> Result<Option<(&'a Path, serde_json::Value)>> {
    let Some(path) = path else {
        return Ok(None);
    };
    Ok(engine
        .whole_trace(graph, log)?
        .map(|trace| (path.as_path(), trace)))
}

/// Writes the trace and the graph dump the user asked for.
fn write_extras(
    trace: Option<(&Path, serde_json::Value)>,
    graph_out: &Option<PathBuf>,
    graph: &SweepGraph,
    log: &RunLog,
) -> Result<()> {
    if let Some((path, trace)) = trace {
        write_whole(path, trace.to_string().as_bytes())?;
    }
    if let Some(path) = graph_out {
        let after = log.graph_after.as_ref().unwrap_or(graph);
        let text = match path.extension().and_then(|e| e.to_str()) {
            Some("dot") => after.to_dot(),
            _ => after.to_json(),
        };
        write_whole(path, text.as_bytes())?;
    }
    Ok(())
}
