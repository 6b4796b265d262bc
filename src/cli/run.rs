//! `srcflow run`: the compressed product of a problem directory, written to a new directory.

use super::tiering::TieringArgs;
use clap::Args;
use srcflow::io::{OutputDir, ProblemDir};
use srcflow::sched::install_ctrlc_handler;
use srcflow::store::clean_stale;
use srcflow::{Engine, Options, Result};
use std::path::PathBuf;

/// Arguments of `srcflow run`.
#[derive(Args)]
pub struct RunArgs {
    /// Problem directory (manifest.json + <layer>/<site:05>.npy).
    dir: PathBuf,
    /// Output bond cap χ̄ (also the sketch size).
    #[arg(long)]
    chi_out: usize,
    /// Output directory; must not exist. Written to a temporary name and renamed at the end.
    #[arg(long)]
    out: PathBuf,
    /// Seed of the random sketches.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Kernel threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Sketch columns per env/sketch task (default: the planner's choice).
    #[arg(long)]
    batch_cols: Option<usize>,
    #[command(flatten)]
    tiering: TieringArgs,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `srcflow run`.
pub fn run(args: RunArgs) -> Result<()> {
    install_ctrlc_handler()?;
    let options = Options {
        chi_out: args.chi_out,
        seed: args.seed,
        threads: args.threads,
        batch_cols: args.batch_cols,
    };
    let problem = ProblemDir::open(&args.dir)?;
    let tiering = args.tiering.resolve()?;
    if let Some(budgets) = &tiering.budgets {
        let removed = clean_stale(&budgets.scratch_dir)?;
        if removed > 0 {
            eprintln!(
                "srcflow: removed {removed} scratch director{} left by dead runs under {}",
                if removed == 1 { "y" } else { "ies" },
                budgets.scratch_dir.display()
            );
        }
    }
    let engine = Engine::new(options)?.with_tiering(tiering);
    let (graph, _) = engine.prepare(problem.shape())?;
    let output = OutputDir::create(&args.out, graph.output_kind(), graph.sites())?;
    let report = engine.run_graph(&graph, &problem, &output)?;
    output.commit()?;
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("report serialises")
        );
    } else {
        println!("{report}");
        println!("output         {}", args.out.display());
    }
    Ok(())
}
