//! `Request`: one call of the Python API as the package hands it over (a dict of checked
//! arguments), and the stack shape and engine it asks for.

use pyo3::prelude::*;
use srcflow::backend::BackendKind;
use srcflow::checkpoint::CheckpointEvery;
use srcflow::engine::Tiering;
use srcflow::graph::GraphOptions;
use srcflow::plan::Budgets;
use srcflow::sched::Prefetch;
use srcflow::store::{DirectIo, DiskIo, DEFAULT_IO_DEPTH};
use srcflow::tensor::DType;
use srcflow::train::layout::shape_from_quimb;
use srcflow::train::{Kind, LayerShape, StackShape};
use srcflow::{EngineBuilder, Error, Options, Result};
use std::path::PathBuf;
use std::sync::Arc;

/// The arguments of one call, already checked by the Python side (`srcflow/_api.py`).
pub struct Request {
    /// The site objects of each train, in the order given (array-likes, read lazily).
    pub trains: Vec<Vec<Py<PyAny>>>,
    /// "mps" or "mpo" for each train.
    pub kinds: Vec<String>,
    /// The quimb-layout shape of every site.
    pub shapes: Vec<Vec<Vec<usize>>>,
    /// The element type every site is read as ("float32", …, "complex128").
    pub dtypes: Vec<Vec<String>>,
    /// The type the run computes in and returns.
    pub dtype: String,
    /// Output bond cap χ̄.
    pub chi_out: usize,
    /// Relative singular-value cutoff.
    pub cutoff: f64,
    /// Sketch-size factor.
    pub oversample: f64,
    /// Seed of the sketches.
    pub seed: u64,
    /// Whether the caller chose the seed (else it was drawn at random, and a checkpoint's own
    /// seed takes its place so that the call resumes).
    pub seed_given: bool,
    /// "cpu", "cuda" or "auto".
    pub backend: String,
    /// Device ids (a count `n` is `0..n`).
    pub devices: Vec<usize>,
    /// Device memory per device, in bytes (`None`: detected).
    pub device_memory: Option<u64>,
    /// Host memory, in bytes (`None`: detected).
    pub host_memory: Option<u64>,
    /// Where spilled environments go (`None`: the temporary directory).
    pub scratch_dir: Option<PathBuf>,
    /// The prefetch policy: "none", "lookahead:K" or "bandwidth[:WINDOW]".
    pub prefetch: Option<String>,
    /// Sketch columns per env and sketch task (`None`: the planner's choice).
    pub batch_cols: Option<usize>,
    /// Worker threads (`None`: every core).
    pub threads: Option<usize>,
    /// Where the call keeps its checkpoint and resumes from it (`None`: nothing is kept).
    pub checkpoint: Option<PathBuf>,
    /// How often the checkpoint keeps a site: N sites or a time ("10m"; `None`: every site).
    pub checkpoint_every: Option<String>,
    /// Requests in flight per disk transfer (`None`: the default).
    pub io_depth: Option<usize>,
    /// Direct I/O always (true), never (false), or where the filesystem takes it (`None`).
    pub direct_io: Option<bool>,
}

impl<'a, 'py> FromPyObject<'a, 'py> for Request {
    type Error = PyErr;

    /// The request from the dict the package hands over, its keys looked up by name. (Not
    /// pyo3's derive, which interns each key behind a once-cell on first use: a process forked
    /// while a run's thread fills one would find it locked forever in the child.)
    fn extract(dict: Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        Ok(Request {
            trains: item(&dict, "trains")?,
            kinds: item(&dict, "kinds")?,
            shapes: item(&dict, "shapes")?,
            dtypes: item(&dict, "dtypes")?,
            dtype: item(&dict, "dtype")?,
            chi_out: item(&dict, "chi_out")?,
            cutoff: item(&dict, "cutoff")?,
            oversample: item(&dict, "oversample")?,
            seed: item(&dict, "seed")?,
            seed_given: item(&dict, "seed_given")?,
            backend: item(&dict, "backend")?,
            devices: item(&dict, "devices")?,
            device_memory: item(&dict, "device_memory")?,
            host_memory: item(&dict, "host_memory")?,
            scratch_dir: item(&dict, "scratch_dir")?,
            prefetch: item(&dict, "prefetch")?,
            batch_cols: item(&dict, "batch_cols")?,
            threads: item(&dict, "threads")?,
            checkpoint: item(&dict, "checkpoint")?,
            checkpoint_every: item(&dict, "checkpoint_every")?,
            io_depth: item(&dict, "io_depth")?,
            direct_io: item(&dict, "direct_io")?,
        })
    }
}

/// The value under `key` in the request dict `dict`, as a `T`.
fn item<T>(dict: &Borrowed<'_, '_, PyAny>, key: &str) -> PyResult<T>
where
    T: for<'a, 'py> FromPyObject<'a, 'py, Error = PyErr>,
{
    dict.get_item(key)?.extract()
}

/// An error naming the argument `name` that `value` could not be read from.
fn bad_argument(name: &str, why: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("`{name}`: {why}"))
}

impl Request {
    /// The name of train `index` in messages.
    pub fn train_name(index: usize) -> String {
        format!("train {index}")
    }

    /// The kind of train `index`.
    fn kind(&self, index: usize) -> Result<Kind> {
        match self.kinds[index].as_str() {
            "mps" => Ok(Kind::Mps),
            "mpo" => Ok(Kind::Mpo),
            other => Err(bad_argument("kinds", format!("unknown kind {other:?}"))),
        }
    }

    /// The element type every site of train `index` is read as.
    pub fn site_dtypes(&self, index: usize) -> Result<Vec<DType>> {
        self.dtypes[index]
            .iter()
            .map(|name| name.parse().map_err(|e| bad_argument("dtypes", e)))
            .collect()
    }

    /// The shapes of the stack as given (not yet in ket form), checked as the engine checks a
    /// problem directory.
    pub fn stack_shape(&self) -> Result<StackShape> {
        let layers = (0..self.trains.len())
            .map(|index| self.layer_shape(index))
            .collect::<Result<_>>()?;
        let given = StackShape { layers };
        given.check(None)?;
        Ok(given)
    }

    /// The shape of train `index`.
    fn layer_shape(&self, index: usize) -> Result<LayerShape> {
        let name = Self::train_name(index);
        let kind = self.kind(index)?;
        let shapes = &self.shapes[index];
        let cores = shapes
            .iter()
            .enumerate()
            .map(|(site, shape)| {
                shape_from_quimb(kind, site, shapes.len(), shape)
                    .map_err(|e| Error::Shape(format!("{name}, site {site}: {e}")))
            })
            .collect::<Result<_>>()?;
        let dtype = self
            .site_dtypes(index)?
            .into_iter()
            .reduce(DType::promote)
            .unwrap_or_default();
        Ok(LayerShape {
            name,
            kind,
            cores,
            dtype,
        })
    }

    /// The engine this call asks for, before its progress and cancellation are set.
    pub fn engine(&self) -> Result<EngineBuilder> {
        let dtype: DType = self.dtype.parse().map_err(|e| bad_argument("dtype", e))?;
        let graph = GraphOptions::new(self.chi_out)
            .with_cutoff(self.cutoff)
            .with_oversample(self.oversample)
            .with_dtype(dtype)
            .with_devices(self.devices.len())
            .with_batch_cols(self.batch_cols);
        let options = Options::new(self.chi_out)
            .with_graph(graph)
            .with_seed(self.run_seed())
            .with_threads(self.threads.unwrap_or(0));
        let backend: BackendKind = self.backend.parse()?;
        let builder = EngineBuilder::new(options)
            .backend(backend)
            .device_ids(self.devices.clone())
            .tiering(self.tiering()?);
        Ok(match &self.checkpoint {
            Some(dir) => builder
                .checkpoint(dir)
                .checkpoint_paced(self.checkpoint_pace()?),
            None => builder,
        })
    }

    /// How often the checkpoint keeps a site, as `Resources.checkpoint_every` says.
    fn checkpoint_pace(&self) -> Result<CheckpointEvery> {
        match &self.checkpoint_every {
            Some(every) => every
                .parse()
                .map_err(|e| bad_argument("Resources.checkpoint_every", e)),
            None => Ok(CheckpointEvery::default()),
        }
    }

    /// The seed to run with: the one given or drawn, or a checkpoint's when the caller left it
    /// to chance and there is a checkpoint to resume.
    fn run_seed(&self) -> u64 {
        let kept = self.checkpoint.as_deref().filter(|_| !self.seed_given);
        kept.and_then(srcflow::checkpoint::seed_of)
            .unwrap_or(self.seed)
    }

    /// The budgets (each left out detected), the prefetch policy and the disk's choices.
    fn tiering(&self) -> Result<Tiering> {
        let budgets = Budgets::detect(
            self.device_memory,
            self.host_memory,
            None,
            self.scratch_dir.clone(),
        )?;
        let prefetch = match &self.prefetch {
            Some(text) => text.parse::<Prefetch>()?,
            None => Prefetch::default(),
        };
        let direct = match self.direct_io {
            None => DirectIo::Auto,
            Some(true) => DirectIo::Always,
            Some(false) => DirectIo::Never,
        };
        let disk = DiskIo {
            depth: self.io_depth.unwrap_or(DEFAULT_IO_DEPTH),
            direct,
            ..DiskIo::default()
        };
        Ok(Tiering::default()
            .with_budgets(budgets)
            .with_prefetch(Arc::new(prefetch))
            .with_disk_io(disk))
    }
}
