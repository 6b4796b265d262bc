//! `srcflow svd`: the exact product truncated by SVD — the near-optimal reference SRC is
//! measured against (contract, then compress; small problems only).

use clap::Args;
use srcflow::io::{OutputDir, ProblemDir};
use srcflow::ops::truncate_svd;
use srcflow::{engine::CoreSink, Result};
use srcflow_tensor::files::fresh_path;
use std::path::PathBuf;

/// Arguments of `srcflow svd`.
#[derive(Args)]
pub struct SvdArgs {
    /// Problem directory.
    dir: PathBuf,
    /// Output bond cap.
    #[arg(long)]
    chi_out: usize,
    /// Output directory; must not exist.
    #[arg(long)]
    out: PathBuf,
}

/// Runs `srcflow svd`: contracts the stack exactly, truncates it and writes it (complex128).
pub fn run(args: SvdArgs) -> Result<()> {
    if args.chi_out == 0 {
        return Err(srcflow::Error::Invalid(
            "--chi-out must be at least 1, found 0".into(),
        ));
    }
    fresh_path(&args.out, "output")?;
    let exact = ProblemDir::open(&args.dir)?.load_train()?;
    let truncated = truncate_svd(&exact, args.chi_out)?;
    let output = OutputDir::create(&args.out, truncated.kind(), truncated.len())?;
    for (site, core) in truncated.into_cores().into_iter().enumerate() {
        output.write(site, core)?;
    }
    output.commit()?;
    println!("wrote {}", args.out.display());
    Ok(())
}
