//! `srcflow gen`: write a built-in problem as a problem directory.

use clap::Args;
use srcflow::gen::{generate, ProblemKind, ProblemSpec};
use srcflow::Result;
use std::path::PathBuf;

/// Arguments of `srcflow gen`.
#[derive(Args)]
pub struct GenArgs {
    /// Problem family.
    #[arg(value_enum)]
    kind: ProblemKind,
    /// Directory to create (must not exist).
    dir: PathBuf,
    /// Number of sites.
    #[arg(long, default_value_t = 20)]
    sites: usize,
    /// Physical dimension.
    #[arg(long, default_value_t = 2)]
    phys: usize,
    /// Bond of the state (random, ising, heisenberg) or of the second MPO (identity).
    #[arg(long, default_value_t = 32)]
    bond: usize,
    /// Bond of the random MPO(s).
    #[arg(long, default_value_t = 8)]
    mpo_bond: usize,
    /// Number of time-evolution MPO layers (ising, heisenberg).
    #[arg(long, default_value_t = 1)]
    depth: usize,
    /// Trotter time step.
    #[arg(long, default_value_t = 0.1)]
    dt: f64,
    /// Ratio of the smallest to the largest weight in the random bond spectra.
    #[arg(long, default_value_t = 1e-2)]
    decay: f64,
    /// Perturbation size for the identity problem.
    #[arg(long, default_value_t = 0.1)]
    eps: f64,
    /// Seed of the random cores.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// Runs `srcflow gen`.
pub fn run(a: GenArgs) -> Result<()> {
    let spec = ProblemSpec {
        sites: a.sites,
        phys: a.phys,
        bond: a.bond,
        mpo_bond: a.mpo_bond,
        depth: a.depth,
        dt: a.dt,
        decay: a.decay,
        eps: a.eps,
        seed: a.seed,
    };
    let stack = generate(a.kind, &spec)?;
    srcflow::io::write_stack(&a.dir, &stack)?;
    let names: Vec<&str> = stack.layers().iter().map(|l| l.name.as_str()).collect();
    println!(
        "wrote {} ({} sites, layers {})",
        a.dir.display(),
        spec.sites,
        names.join(" · ")
    );
    Ok(())
}
