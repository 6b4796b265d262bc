//! `srcflow graph`: print the sweep graph of a problem, placed as a run with the same budgets
//! would place it, without running it.

use super::tiering::TieringArgs;
use clap::{Args, ValueEnum};
use srcflow::io::ProblemDir;
use srcflow::{Engine, Options, Result};
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
    #[command(flatten)]
    tiering: TieringArgs,
}

/// Runs `srcflow graph`.
pub fn run(args: GraphArgs) -> Result<()> {
    let problem = ProblemDir::open(&args.dir)?;
    let options = Options {
        batch_cols: args.batch_cols,
        ..Options::new(args.chi_out)
    };
    let engine = Engine::new(options)?.with_tiering(args.tiering.resolve()?);
    let (graph, _) = engine.prepare(problem.shape())?;
    match args.format {
        Format::Dot => print!("{}", graph.to_dot()),
        Format::Json => println!("{}", graph.to_json()),
    }
    Ok(())
}
