//! `srcflow calibrate`: measures a machine model of this machine for `srcflow simulate`.

use super::machine_calibration::calibrate;
use clap::Args;
use srcflow::io::existing_parent;
use srcflow::Result;
use std::path::PathBuf;

/// Arguments of `srcflow calibrate`.
#[derive(Args)]
pub struct CalibrateArgs {
    /// Where to write the model (JSON); its folder must exist.
    #[arg(long, default_value = "machine-model.json")]
    out: PathBuf,
    /// Where the disk probe and the calibration problem go (removed afterwards).
    #[arg(long, value_name = "DIR", default_value_os_t = std::env::temp_dir())]
    scratch_dir: PathBuf,
    /// Kernel threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    threads: usize,
}

/// Runs `srcflow calibrate`.
pub fn run(args: CalibrateArgs) -> Result<()> {
    existing_parent(&args.out, "model")?;
    srcflow::backend::BackendKind::cpu_backends(1, args.threads)?;
    let model = calibrate(&args.scratch_dir, args.threads)?;
    model.write(&args.out)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&model).expect("a model serialises")
    );
    let written = std::path::absolute(&args.out).unwrap_or(args.out);
    println!("written to {}", written.display());
    Ok(())
}
