//! The arguments `run`, `plan` and `graph` share: the problem, χ̄, the batch and the tiering.

use super::tiering::TieringArgs;
use clap::Args;
use srcflow::io::ProblemDir;
use srcflow::{Engine, Options, Result};
use std::path::PathBuf;

/// A problem directory and the choices that shape its graph and plan.
#[derive(Args)]
pub struct ProblemArgs {
    /// Problem directory (manifest.json + <layer>/<site:05>.npy).
    dir: PathBuf,
    /// Output bond cap χ̄ (also the sketch size).
    #[arg(long)]
    chi_out: usize,
    /// Sketch columns per env/sketch task (default: the planner's choice).
    #[arg(long)]
    batch_cols: Option<usize>,
    #[command(flatten)]
    tiering: TieringArgs,
}

impl ProblemArgs {
    /// Opens the problem (headers only) and an engine for it, with `seed` and `threads`.
    pub fn open(self, seed: u64, threads: usize) -> Result<(ProblemDir, Engine)> {
        let problem = ProblemDir::open(&self.dir)?;
        let options = Options {
            chi_out: self.chi_out,
            seed,
            threads,
            batch_cols: self.batch_cols,
        };
        let engine = Engine::new(options)?.with_tiering(self.tiering.resolve()?);
        Ok((problem, engine))
    }
}
