//! `srcflow gen`: write a built-in problem as a problem directory.

use clap::Args;
use srcflow::gen::{generate, ProblemKind, ProblemSpec};
use srcflow::tensor::DType;
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
    /// Sizes and parameters.
    #[command(flatten)]
    spec: ProblemSpec,
    /// Element type of the written cores (float32, float64, complex64, complex128); a real
    /// type keeps the real parts.
    #[arg(long, default_value_t = DType::Complex128)]
    dtype: DType,
}

/// Runs `srcflow gen`.
pub fn run(a: GenArgs) -> Result<()> {
    let spec = a.spec;
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
