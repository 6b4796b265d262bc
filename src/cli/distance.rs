//! `srcflow distance`: relative distance of two trains by a QR sweep; a stack is first
//! contracted into its exact product, which it announces, shows progress of, and refuses above
//! a size unless asked.

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget};
use srcflow::io::ProblemDir;
use srcflow::ops::{distance_of, exact_product_with, DistanceCost};
use srcflow::{ByteSize, Error, Result, Train};
use std::path::PathBuf;

/// Arguments of `srcflow distance`.
#[derive(Args)]
pub struct DistanceArgs {
    /// First directory (a train, or a stack whose exact product is taken).
    a: PathBuf,
    /// Reference directory: the distance is relative to its norm.
    b: PathBuf,
    /// Contract exact products however large (by default a comparison that needs more than
    /// 500 GFLOP or 2 GiB of products is refused).
    #[arg(long)]
    exact: bool,
}

/// Work above which contracting exact products needs `--exact`.
const MOST_FLOPS: f64 = 5e11;
/// Memory of the products above which contracting them needs `--exact`.
const MOST_BYTES: u64 = 2 << 30;

/// Runs `srcflow distance`: prints ‖A − B‖ / ‖B‖.
pub fn run(args: DistanceArgs) -> Result<()> {
    let dirs = [ProblemDir::open(&args.a)?, ProblemDir::open(&args.b)?];
    let stacks: Vec<&PathBuf> = [&args.a, &args.b]
        .into_iter()
        .zip(&dirs)
        .filter(|(_, dir)| dir.shape().layers.len() > 1)
        .map(|(path, _)| path)
        .collect();
    if !stacks.is_empty() {
        let cost = DistanceCost::of(dirs[0].shape(), dirs[1].shape());
        let named: Vec<String> = stacks.iter().map(|p| p.display().to_string()).collect();
        let what = format!(
            "the exact product of {}; comparing needs bonds up to {}, {} of cores and about {:.0} GFLOP in all",
            named.join(" and of "),
            cost.max_bond,
            ByteSize(cost.bytes),
            cost.flops / 1e9
        );
        if !args.exact && (cost.flops > MOST_FLOPS || cost.bytes > MOST_BYTES) {
            return Err(Error::Invalid(format!(
                "this would contract {what}: pass --exact to go ahead, or compare two runs \
                 instead (srcflow distance RUN REFERENCE_RUN, the reference run at a larger \
                 --chi-out)"
            )));
        }
        super::note(&format!("contracting {what}"));
    }
    let [a, b] = dirs.map(|dir| load(&dir));
    let (a, b) = (a?, b?);
    let distance = distance_of(&a, &b)?;
    if !distance.relative {
        super::note(&format!(
            "{} has norm 0, so this is the absolute distance ‖A − B‖, not a relative one",
            args.b.display()
        ));
    }
    println!("{:e}", distance.value);
    Ok(())
}

/// The train of `dir`: its one layer, or its layers' exact product with a progress bar per
/// site (shown only on a terminal).
fn load(dir: &ProblemDir) -> Result<Train> {
    if dir.shape().layers.len() == 1 {
        return dir.load_train();
    }
    let sites = dir.shape().sites() as u64;
    let bar = ProgressBar::with_draw_target(Some(sites), ProgressDrawTarget::stderr());
    let product = exact_product_with(&dir.load()?, &mut |_| bar.inc(1));
    bar.finish_and_clear();
    product
}
