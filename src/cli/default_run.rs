//! `srcflow` with no arguments: a built-in problem end to end, with a short report in the
//! user's terms (the product's norm, the error against the optimum) and, when the error is far
//! from the optimum, what `--oversample` does about it, measured on the same problem.

use srcflow::gen::{generate, ProblemKind, ProblemSpec};
use srcflow::graph::GraphOptions;
use srcflow::ops::{distance, exact_product, norm, truncate_svd};
use srcflow::{Engine, EngineBuilder, Options, Result, Stack, Train};

/// The default problem: random MPO (bond 8) · random MPS (bond 32), 24 sites.
fn spec() -> ProblemSpec {
    ProblemSpec {
        sites: 24,
        ..ProblemSpec::default()
    }
}

/// Output bond of the default run.
const CHI_OUT: usize = 32;
/// The error ratio to the optimum above which the run suggests oversampling.
const HINT_ABOVE: f64 = 2.0;
/// The oversampling the hint tries.
const OVERSAMPLE: f64 = 1.5;

/// Runs the default problem and prints the report (with the engine's internals when
/// `verbose`), the product's norm and the error against the truncated SVD's.
pub fn run(verbose: bool) -> Result<()> {
    let spec = spec();
    println!(
        "srcflow default problem: random MPO (bond {}) · random MPS (bond {}), {} sites, d = {}, chi_out = {CHI_OUT}",
        spec.mpo_bond, spec.bond, spec.sites, spec.phys
    );
    let stack = generate(ProblemKind::Random, &spec)?;
    let srcflow::engine::Run { output, report, .. } = engine(Options::new(CHI_OUT))?.run(&stack)?;
    println!("{report}");
    if verbose {
        println!("\nengine internals\n{}", report.internals());
    }
    let exact = exact_product(&stack)?;
    // Both distances are relative to the exact product's norm already (ops::distance).
    let error = distance(&output, &exact)?;
    let optimum = distance(&truncate_svd(&exact, CHI_OUT)?, &exact)?;
    println!();
    println!(
        "norm of the product            {:.6e}   (random cores of {} sites multiply to a \
         small norm: the errors below are relative to it)",
        norm(&exact),
        spec.sites
    );
    println!("relative distance to the exact product  {error:.3e}");
    println!(
        "truncated-SVD relative error (optimum)  {optimum:.3e}   ratio {:.2}",
        error / optimum
    );
    if error / optimum > HINT_ABOVE {
        let wider = distance(&oversampled(&stack)?, &exact)?;
        println!(
            "hint: the error is {:.1}× the optimum; --oversample {OVERSAMPLE} sketches {} columns and rounds back to {CHI_OUT}: here its ratio is {:.2}",
            error / optimum,
            (OVERSAMPLE * CHI_OUT as f64).ceil(),
            wider / optimum
        );
    }
    Ok(())
}

/// The default problem's output with `--oversample` [`OVERSAMPLE`].
fn oversampled(stack: &Stack) -> Result<Train> {
    let options =
        Options::new(CHI_OUT).with_graph(GraphOptions::new(CHI_OUT).with_oversample(OVERSAMPLE));
    Ok(engine(options)?.run(stack)?.output)
}

/// An engine with `options` on the process's session.
fn engine(options: Options) -> Result<Engine> {
    EngineBuilder::new(options)
        .session(super::process_session::session())
        .build()
}
