//! `srcflow graph`: print the sweep graph of a problem, placed as a run with the same budgets
//! would place it, without running it.

use super::problem_args::ProblemArgs;
use clap::{Args, ValueEnum};
use srcflow::Result;

/// Output formats of the graph.
#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// Graphviz DOT.
    Dot,
    /// JSON that `SweepGraph::from_json` loads back.
    Json,
}

/// Arguments of `srcflow graph` (only headers of the problem are read).
#[derive(Args)]
pub struct GraphArgs {
    #[command(flatten)]
    problem: ProblemArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "dot")]
    format: Format,
}

/// Runs `srcflow graph`.
pub fn run(args: GraphArgs) -> Result<()> {
    let (problem, engine) = args.problem.open(0, 0)?;
    let engine = engine.build()?;
    let (graph, _) = engine.prepare(problem.shape())?;
    match args.format {
        Format::Dot => print!("{}", graph.to_dot()),
        Format::Json => println!("{}", graph.to_json()),
    }
    Ok(())
}
