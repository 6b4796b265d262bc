//! `srcflow calibrate`: measures a machine model of this machine for `srcflow simulate`, or
//! refines one from the traces of runs.

use super::machine_calibration::{calibrate, calibrate_disk_of};
use super::trace_refinement::refine;
use clap::Args;
use srcflow::sim::MachineModel;
use srcflow::store::{DiskIo, DiskRequests};
use srcflow::{Error, Result};
use srcflow_tensor::files::existing_parent;
use std::path::PathBuf;

/// Arguments of `srcflow calibrate`.
#[derive(Args)]
pub struct CalibrateArgs {
    /// Where to write the model (JSON); its folder must exist.
    #[arg(long, default_value = "machine-model.json")]
    out: PathBuf,
    /// Where the disk probe and the calibration problems go (removed afterwards).
    #[arg(long, value_name = "DIR", default_value_os_t = std::env::temp_dir(), conflicts_with = "from_trace")]
    scratch_dir: PathBuf,
    /// Kernel threads (0: one per core).
    #[arg(long, default_value_t = 0, conflicts_with = "from_trace")]
    threads: usize,
    /// Instead of measuring, refine the compute models of --model with the compute tasks of
    /// these traces of `srcflow run --trace` (repeat the flag for more runs).
    #[arg(long, value_name = "TRACE", requires = "model")]
    from_trace: Vec<PathBuf>,
    /// The model --from-trace refines, or whose disk --disk-only measures anew.
    #[arg(long, value_name = "FILE")]
    model: Option<PathBuf>,
    /// Measure only the disk of --scratch-dir (latency, bandwidth per request, depth where
    /// bandwidth saturates) into --model, keeping the rest of it.
    #[arg(long, requires = "model", conflicts_with = "from_trace")]
    disk_only: bool,
    /// Measure an emulated parallel filesystem instead of the disk itself: LAT,STREAM,TOTAL
    /// as `srcflow run --disk-emulate` takes it.
    #[arg(long, value_name = "LAT,STREAM,TOTAL", conflicts_with = "from_trace")]
    disk_emulate: Option<DiskRequests>,
}

/// Runs `srcflow calibrate`.
pub fn run(args: CalibrateArgs) -> Result<()> {
    existing_parent(&args.out, "model")?;
    let disk_io = DiskIo {
        emulate: args.disk_emulate,
        ..DiskIo::default()
    };
    let model = match &args.model {
        Some(path) if args.disk_only => {
            calibrate_disk_of(MachineModel::read(path)?, &args.scratch_dir, &disk_io)?
        }
        Some(_) if args.from_trace.is_empty() => {
            return Err(Error::Invalid(
                "--model needs --from-trace (traces to refine it with) or --disk-only".into(),
            ))
        }
        Some(path) => refine(MachineModel::read(path)?, &args.from_trace)?,
        None => {
            srcflow::backend::BackendKind::cpu_backends(1, args.threads)?;
            calibrate(&args.scratch_dir, args.threads, &disk_io)?
        }
    };
    // What it measured must read back as a model: nothing is written otherwise.
    model.validate()?;
    model.write(&args.out)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&model).expect("a model serialises")
    );
    let written = std::path::absolute(&args.out).unwrap_or(args.out);
    println!("written to {}", written.display());
    Ok(())
}
