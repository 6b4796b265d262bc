//! `srcflow simulate`: the run of a problem replayed on a machine model, with the same plan,
//! scheduler, prefetch policy and memory governor as a real run; prints the same report and
//! writes the same trace.

use super::problem_args::ProblemArgs;
use super::{print_report, ReportStyle};
use clap::Args;
use srcflow::checkpoint::CheckpointEvery;
use srcflow::ranks::{across_nodes, ExchangeUse};
use srcflow::sim::MachineModel;
use srcflow::trace::write_chrome_trace;
use srcflow::{Error, Result};
use std::path::PathBuf;

/// Arguments of `srcflow simulate` (only headers of the problem are read).
#[derive(Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    problem: ProblemArgs,
    /// The machine model (JSON; `srcflow calibrate` writes one of this machine).
    #[arg(long, value_name = "FILE")]
    model: PathBuf,
    /// Kernel threads of the simulated run, shared between its devices as `run` shares them
    /// (0: this machine's cores); each device is timed by the model's fit for its share.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Ranks (one per node) the devices are shared among, as under `mpirun -np R srcflow run`:
    /// each rank has io, disk and network lanes of its own, and each value that crosses ranks
    /// is a message at the model's `bytes_per_s.network` after `network_latency_s`, packed
    /// when sent and decoded when received at its `bytes_per_s.host-copy` (free without it;
    /// on a model without device memory of its own, an S that every rank reading it receives
    /// whole arrives in place, with no decode and no all-gather on the devices).
    #[arg(long, default_value_t = 1, value_name = "R")]
    ranks: usize,
    /// Model a run with `run --checkpoint --checkpoint-every N`: its checkpoint writes (every
    /// output core, the environments and projections of every N-th site) on the disk-write
    /// lane at the model's disk rate, as the run schedules them (each on its own rank's lane).
    #[arg(long, value_name = "N")]
    checkpoint_every: Option<CheckpointEvery>,
    /// Write a Chrome trace of the simulated run, replacing a file there (checked before the
    /// simulation, as `run --trace`).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    #[command(flatten)]
    report: ReportStyle,
}

/// Runs `srcflow simulate`.
pub fn run(args: SimulateArgs) -> Result<()> {
    if let Some(path) = &args.trace {
        srcflow_tensor::files::output_file(path, "trace (--trace)")?;
    }
    let machine = MachineModel::read(&args.model)?;
    let (problem, engine) = args.problem.open(0, args.threads)?;
    let engine = engine.build()?;
    let (graph, _) = engine.prepare_on(problem.shape(), &machine)?;
    let graph = match args.checkpoint_every {
        Some(CheckpointEvery::Interval(_)) => {
            return Err(Error::Invalid(
                "--checkpoint-every takes a number of sites here: a checkpoint kept by time \
                 keeps the sites a run's own pace gives, which the model does not follow"
                    .into(),
            ))
        }
        Some(every) => graph.with_checkpoint_writes(every.sites()),
        None => graph,
    };
    let ranked = across_nodes(&graph, args.ranks)?;
    if args.ranks > 1 {
        machine.check_network().map_err(|e| Error::Manifest {
            path: args.model.clone(),
            message: e.to_string(),
        })?;
    }
    let (mut report, log) = engine.simulate_across_nodes(&ranked, &machine)?;
    report.network = ExchangeUse::simulated(&ranked.exchanges, &ranked.graph, &log);
    if let Some(path) = &args.trace {
        write_chrome_trace(path, &ranked.graph, &log)?;
    }
    print_report(&report, args.report);
    if !args.report.json {
        println!(
            "(simulated: peak memory is the data the modelled sweep holds on each tier; a real \
             run's process adds the program and its kernels' workspaces)"
        );
    }
    Ok(())
}
