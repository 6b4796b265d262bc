//! `srcflow gen`: write a built-in problem as a problem directory.

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::Args;
use srcflow::gen::{generate, ProblemKind, ProblemSpec};
use srcflow::tensor::DType;
use srcflow::Result;
use std::path::PathBuf;

/// The defaults of every size and parameter.
fn defaults() -> ProblemSpec {
    ProblemSpec::default()
}

/// Arguments of `srcflow gen`.
#[derive(Args)]
pub struct GenArgs {
    /// Problem family: random (random MPO · random MPS), ising or heisenberg (Trotter MPO to
    /// the power --depth · random MPS), identity ((I + ε·A) · (I + ε·B), an MPO·MPO product).
    #[arg(value_parser = family())]
    kind: ProblemKind,
    /// Directory to create (must not exist).
    dir: PathBuf,
    /// Number of sites.
    #[arg(long, default_value_t = defaults().sites)]
    sites: usize,
    /// Physical dimension (2 for the spin chains).
    #[arg(long, default_value_t = defaults().phys)]
    phys: usize,
    /// Bond of the state (random, ising, heisenberg) or of the second MPO (identity).
    #[arg(long, default_value_t = defaults().bond)]
    bond: usize,
    /// Bond of the random MPO(s).
    #[arg(long, default_value_t = defaults().mpo_bond)]
    mpo_bond: usize,
    /// Number of time-evolution MPO layers (ising, heisenberg).
    #[arg(long, default_value_t = defaults().depth)]
    depth: usize,
    /// Time step of the Trotter MPOs.
    #[arg(long, default_value_t = defaults().dt)]
    dt: f64,
    /// Ratio of the smallest to the largest weight of the random bond spectra.
    #[arg(long, default_value_t = defaults().decay)]
    decay: f64,
    /// Size of the perturbation of the identity problems.
    #[arg(long, default_value_t = defaults().eps)]
    eps: f64,
    /// Seed of the random cores.
    #[arg(long, default_value_t = defaults().seed)]
    seed: u64,
    /// Element type of the written cores (float32, float64, complex64, complex128); a real
    /// type keeps the real parts.
    #[arg(long, default_value_t = DType::Complex128)]
    dtype: DType,
}

/// The parser of a family name.
fn family() -> impl TypedValueParser<Value = ProblemKind> {
    PossibleValuesParser::new(ProblemKind::ALL.map(|(name, _)| name)).map(|name| {
        ProblemKind::ALL
            .into_iter()
            .find(|&(known, _)| known == name)
            .map(|(_, kind)| kind)
            .expect("a possible value")
    })
}

impl GenArgs {
    /// The sizes and parameters given.
    fn spec(&self) -> ProblemSpec {
        ProblemSpec {
            sites: self.sites,
            phys: self.phys,
            bond: self.bond,
            mpo_bond: self.mpo_bond,
            depth: self.depth,
            dt: self.dt,
            decay: self.decay,
            eps: self.eps,
            seed: self.seed,
        }
    }
}

/// Runs `srcflow gen`.
pub fn run(a: GenArgs) -> Result<()> {
    let spec = a.spec();
    srcflow_tensor::files::fresh_path(&a.dir, "problem")?;
    let stack = generate(a.kind, &spec)?;
    srcflow::io::write_stack_as(&a.dir, &stack, a.dtype)?;
    let names: Vec<&str> = stack.layers().iter().map(|l| l.name.as_str()).collect();
    println!(
        "wrote {} ({} sites, layers {})",
        a.dir.display(),
        spec.sites,
        names.join(" · ")
    );
    Ok(())
}
