//! `srcflow distance`: relative distance of two trains by a QR sweep.

use clap::Args;
use srcflow::io::ProblemDir;
use srcflow::ops::distance;
use srcflow::Result;
use std::path::PathBuf;

/// Arguments of `srcflow distance`.
#[derive(Args)]
pub struct DistanceArgs {
    /// First directory (a train, or a stack whose exact product is taken).
    a: PathBuf,
    /// Reference directory: the distance is relative to its norm.
    b: PathBuf,
}

/// Runs `srcflow distance`: prints ‖A − B‖ / ‖B‖.
pub fn run(args: DistanceArgs) -> Result<()> {
    let a = ProblemDir::open(&args.a)?.load_train()?;
    let b = ProblemDir::open(&args.b)?.load_train()?;
    println!("{:e}", distance(&a, &b)?);
    Ok(())
}
