//! `OutputDir`: the output train written site by site into a staging directory.

use super::{npy, LayerEntry, Manifest, StagingDir, FORMAT};
use crate::engine::CoreSink;
use srcflow_graph::train::layout::{shape_from_quimb, shape_to_quimb};
use srcflow_graph::train::{core_path, Kind};
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::AnyTensor;
use std::path::Path;

/// The name of the one layer of an output directory.
pub(crate) const OUTPUT_LAYER: &str = "out";

/// An output problem directory with one layer `out`; appears at its path only when committed.
pub struct OutputDir {
    staging: StagingDir,
    kind: Kind,
    sites: usize,
}

impl OutputDir {
    /// Prepares `path` (which must not exist) for a `sites`-site train of `kind`.
    pub fn create(path: &Path, kind: Kind, sites: usize) -> Result<Self> {
        let staging = StagingDir::create(path)?;
        Manifest {
            format: FORMAT.into(),
            layers: vec![LayerEntry {
                name: OUTPUT_LAYER.into(),
                kind,
            }],
        }
        .write(staging.path())?;
        let folder = staging.path().join(OUTPUT_LAYER);
        std::fs::create_dir(&folder).map_err(|e| Error::io(&folder, e))?;
        Ok(OutputDir {
            staging,
            kind,
            sites,
        })
    }

    /// Moves the complete output into place.
    pub fn commit(self) -> Result<()> {
        self.staging.commit()
    }
}

impl CoreSink for OutputDir {
    fn write(&self, site: usize, core: AnyTensor) -> Result<()> {
        let lrud: [usize; 4] = core.shape().try_into().expect("rank 4");
        let quimb = core.reshape(shape_to_quimb(self.kind, site, self.sites, lrud));
        npy::write_any(&self.path(site), &quimb)
    }

    /// A draft is written where its final core will go, and overwritten by it.
    fn keep_draft(&self, site: usize, core: AnyTensor) -> Result<()> {
        self.write(site, core)
    }

    fn take_draft(&self, site: usize) -> Result<AnyTensor> {
        let path = self.path(site);
        let core = npy::read(&path)
            .map_err(|message| Error::bad_core(OUTPUT_LAYER, site, &path, message))?;
        let lrud = shape_from_quimb(self.kind, site, self.sites, core.shape())?;
        Ok(core.reshape(lrud.to_vec()))
    }
}

impl OutputDir {
    /// The staged file of the core of `site`.
    fn path(&self, site: usize) -> std::path::PathBuf {
        core_path(self.staging.path(), OUTPUT_LAYER, site)
    }
}
