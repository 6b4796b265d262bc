//! `srcflow graph`: print the sweep graph of a problem without running it.

use clap::{Args, ValueEnum};
use srcflow::graph::GraphOptions;
use srcflow::io::ProblemDir;
use srcflow::{Result, SweepGraph};
use std::path::PathBuf;

/// Output formats of the graph.
#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// Graphviz DOT.
    Dot,
    /// JSON that `SweepGraph::from_json` loads back.
    Json,
}

/// Arguments of `srcflow graph`.
#[derive(Args)]
pub struct GraphArgs {
    /// Problem directory (only headers are read).
    dir: PathBuf,
    /// Output bond cap χ̄.
    #[arg(long)]
    chi_out: usize,
    /// Sketch columns per env/sketch task.
    #[arg(long)]
    batch_cols: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value = "dot")]
    format: Format,
}

/// Runs `srcflow graph`.
pub fn run(args: GraphArgs) -> Result<()> {
    let problem = ProblemDir::open(&args.dir)?;
    let graph = SweepGraph::build(
        problem.shape(),
        &GraphOptions {
            chi_out: args.chi_out,
            batch_cols: args.batch_cols,
        },
    )?;
    match args.format {
        Format::Dot => print!("{}", graph.to_dot()),
        Format::Json => println!("{}", graph.to_json()),
    }
    Ok(())
}
