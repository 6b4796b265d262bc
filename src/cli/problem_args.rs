//! The arguments `run`, `plan` and `graph` share: the problem, χ̄, the batch and the tiering.

use super::device_list::DeviceList;
use super::tiering::TieringArgs;
use clap::Args;
use srcflow::backend::BackendKind;
use srcflow::graph::GraphOptions;
use srcflow::io::ProblemDir;
use srcflow::tensor::DType;
use srcflow::{EngineBuilder, Options, Result};
use std::path::PathBuf;

/// A problem directory and the choices that shape its graph and plan.
#[derive(Args)]
pub struct ProblemArgs {
    /// Problem directory (manifest.json + <layer>/<site:05>.npy).
    dir: PathBuf,
    /// Output bond cap χ̄.
    #[arg(long)]
    chi_out: usize,
    /// Drop the product's singular values below CUTOFF·σ_max at every bond (χ̄ stays the cap;
    /// at least one is kept), in an SVD rounding sweep after the sketch (as --oversample's).
    #[arg(long, default_value_t = 0.0)]
    cutoff: f64,
    /// Sketch ⌈F·χ̄⌉ columns, then round the bonds back to χ̄ with one SVD sweep: an error
    /// close to the truncated SVD's, for F ≈ 1.5, at about F² the cost.
    #[arg(long, value_name = "F", default_value_t = 1.0)]
    oversample: f64,
    /// Conjugate the MPS of a bra stack (an MPS first, then MPOs): ⟨φ|·A rather than the row
    /// vector φ·A.
    #[arg(long)]
    conj: bool,
    /// Compute (and write the output) in this type: float32, float64, complex64 or complex128.
    /// Default: the input layers' types promoted as NumPy would. complex64 halves memory,
    /// spill and I/O against complex128.
    #[arg(long)]
    dtype: Option<DType>,
    /// Devices to share the sweep between, a count (2) or a list of ids (0,2): each owns a
    /// block of the sketch columns and of the basis rows, with its own memory cap and lanes.
    /// On the CPU each is a worker group with its share of --threads, and a list only gives
    /// the count.
    #[arg(long, default_value = "1", value_name = "N|IDS")]
    devices: DeviceList,
    /// Sketch columns per env/sketch task (default: the planner's choice).
    #[arg(long)]
    batch_cols: Option<usize>,
    /// Contract each site's cores in both its sketch and its projection, instead of once into
    /// S for both (folding saves flops but holds a value phys times the size of S per site;
    /// the planner drops it by itself when it does not fit).
    #[arg(long)]
    no_fold: bool,
    /// What the devices compute on: cpu, cuda (the GPUs named by --devices) or auto (cuda
    /// when this machine has those GPUs, else cpu). The report names the one used; the plan
    /// counts device memory apart from host memory on a GPU.
    #[arg(long, default_value = "cpu", value_name = "cpu|cuda|auto")]
    backend: BackendKind,
    #[command(flatten)]
    tiering: TieringArgs,
}

impl ProblemArgs {
    /// The problem folder.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// The scratch folder given (`--scratch-dir`), if any.
    pub fn scratch_dir(&self) -> Option<&std::path::Path> {
        self.tiering.scratch_dir()
    }

    /// Opens the problem (headers only) and the builder of an engine for it, with `seed` and
    /// `threads`.
    pub fn open(self, seed: u64, threads: usize) -> Result<(ProblemDir, EngineBuilder)> {
        let mut problem = ProblemDir::open(&self.dir)?;
        if self.conj {
            problem = problem.conjugating_bra()?;
        }
        let graph = GraphOptions::new(self.chi_out)
            .with_cutoff(self.cutoff)
            .with_oversample(self.oversample)
            .with_devices(self.devices.count())
            .with_fold(!self.no_fold)
            .with_batch_cols(self.batch_cols)
            .with_dtype(self.dtype);
        let options = Options::new(self.chi_out)
            .with_graph(graph)
            .with_seed(seed)
            .with_threads(threads);
        let engine = EngineBuilder::new(options)
            .session(super::process_session::session())
            .backend(self.backend)
            .device_ids(self.devices.ids())
            .tiering(self.tiering.resolve()?);
        Ok((problem, engine))
    }
}
