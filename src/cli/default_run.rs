//! `srcflow` with no arguments: a built-in problem end to end, with a short report.

use srcflow::gen::{generate, ProblemKind, ProblemSpec};
use srcflow::ops::{distance, exact_product, truncate_svd};
use srcflow::{Engine, Options, Result};

/// The default problem: random MPO (bond 8) · random MPS (bond 32), 24 sites.
fn spec() -> ProblemSpec {
    ProblemSpec {
        sites: 24,
        ..ProblemSpec::default()
    }
}

/// Output bond of the default run.
const CHI_OUT: usize = 32;

/// Runs the default problem and prints sizes, times, rate and accuracy.
pub fn run() -> Result<()> {
    let spec = spec();
    println!(
        "srcflow default problem: random MPO (bond {}) · random MPS (bond {}), {} sites, d = {}, chi_out = {CHI_OUT}",
        spec.mpo_bond, spec.bond, spec.sites, spec.phys
    );
    let stack = generate(ProblemKind::Random, &spec)?;
    let engine = Engine::new(Options::new(CHI_OUT))?;
    let srcflow::engine::Run {
        output: out,
        report,
        ..
    } = engine.run(&stack)?;
    println!("{report}");
    let exact = exact_product(&stack)?;
    let error = distance(&out, &exact)?;
    let optimum = distance(&truncate_svd(&exact, CHI_OUT)?, &exact)?;
    println!("distance to the exact product  {error:.3e}");
    println!(
        "truncated-SVD error (optimum)  {optimum:.3e}   ratio {:.2}",
        error / optimum
    );
    Ok(())
}
