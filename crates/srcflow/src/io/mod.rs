//! Files: `.npy` cores, `manifest.json`, problem directories in and out.

mod manifest;
pub mod npy;
mod output;
mod problem;
mod staging;

pub use manifest::{LayerEntry, Manifest, FORMAT};
pub use output::OutputDir;
pub use problem::ProblemDir;
pub(crate) use staging::StagingDir;

use srcflow_graph::train::{core_path, Stack};
use srcflow_tensor::error::Result;
use srcflow_tensor::tensor::DType;
use std::path::Path;

/// Writes `stack` as a problem directory of complex128 cores at `dir` (which must not exist),
/// atomically.
pub fn write_stack(dir: &Path, stack: &Stack) -> Result<()> {
    write_stack_as(dir, stack, DType::Complex128)
}

/// Writes `stack` as a problem directory at `dir` (which must not exist), atomically, its cores
/// cast to `dtype`.
pub fn write_stack_as(dir: &Path, stack: &Stack, dtype: DType) -> Result<()> {
    let staging = StagingDir::create(dir)?;
    let layers = stack
        .layers()
        .iter()
        .map(|l| LayerEntry {
            name: l.name.clone(),
            kind: l.train.kind(),
        })
        .collect();
    Manifest {
        format: FORMAT.into(),
        layers,
    }
    .write(staging.path())?;
    for layer in stack.layers() {
        let folder = staging.path().join(&layer.name);
        std::fs::create_dir(&folder).map_err(|e| srcflow_tensor::Error::io(&folder, e))?;
        for (site, core) in layer.train.to_quimb().into_iter().enumerate() {
            let core = core.cast(dtype);
            npy::write_any(&core_path(staging.path(), &layer.name, site), &core)?;
        }
    }
    staging.commit()
}
