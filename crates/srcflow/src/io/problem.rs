//! `ProblemDir`: a problem directory, opened by its headers and read one core at a time.

use super::{npy, Manifest};
use crate::engine::CoreSource;
use srcflow_graph::ops::exact_product;
use srcflow_graph::train::layout::shape_from_quimb;
use srcflow_graph::train::{
    core_path, site_counts_differ, site_name, too_few_sites, Kind, Layer, LayerShape, Orientation,
    Stack, StackShape, Train,
};
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::{AnyTensor, DType};
use std::path::{Path, PathBuf};

/// A problem directory whose shapes are known (from `.npy` headers) and whose data is read lazily.
///
/// A bra stack is served in its ket form (see [`Orientation`]): its layers reversed, each MPO
/// transposed as it is read.
pub struct ProblemDir {
    dir: PathBuf,
    /// The stack in its ket form.
    shape: StackShape,
    orientation: Orientation,
    /// Conjugate the MPS of a bra stack as it is read.
    conj_bra: bool,
}

impl ProblemDir {
    /// Opens `dir`: reads the manifest and every header, and checks that the layers fit.
    pub fn open(dir: &Path) -> Result<ProblemDir> {
        let manifest = Manifest::read(dir)?;
        let counts = site_counts(dir, &manifest)?;
        let mut layers = Vec::with_capacity(manifest.layers.len());
        for (entry, &sites) in manifest.layers.iter().zip(&counts) {
            let mut dtype = None;
            let cores = (0..sites)
                .map(|site| {
                    let path = core_path(dir, &entry.name, site);
                    let bad = |message| Error::bad_core(&entry.name, site, &path, message);
                    let header = npy::read_header(&path).map_err(bad)?;
                    let found = DType::from_descr(&header.dtype).expect("a checked type string");
                    dtype = Some(dtype.map_or(found, |d: DType| d.promote(found)));
                    shape_from_quimb(entry.kind, site, sites, &header.shape)
                        .map_err(|e| bad(e.to_string()))
                })
                .collect::<Result<_>>()?;
            layers.push(LayerShape {
                name: entry.name.clone(),
                kind: entry.kind,
                cores,
                dtype: dtype.unwrap_or_default(),
            });
        }
        let given = StackShape { layers };
        given.check(Some(dir))?;
        Ok(ProblemDir {
            dir: dir.to_path_buf(),
            orientation: given.orientation(),
            shape: given.into_ket_form(),
            conj_bra: false,
        })
    }

    /// The same problem with the MPS of its bra stack conjugated (⟨φ| rather than φ as a row
    /// vector); fails for a stack that is not a bra stack.
    pub fn conjugating_bra(mut self) -> Result<Self> {
        if self.orientation != Orientation::Bra {
            let kinds: Vec<&str> = self.shape.layers.iter().map(|l| l.kind.name()).collect();
            return Err(Error::Invalid(format!(
                "`ProblemDir::conjugating_bra` conjugates the MPS of a bra stack (an MPS first, then MPOs), but {} lists [{}]",
                self.dir.join("manifest.json").display(),
                kinds.join(", ")
            )));
        }
        self.conj_bra = true;
        Ok(self)
    }

    /// The shapes of the stack, in ket form.
    pub fn shape(&self) -> &StackShape {
        &self.shape
    }

    /// Whether the stack was given as a bra stack or a ket (or operator) stack.
    pub fn orientation(&self) -> Orientation {
        self.orientation
    }

    /// Reads every core into memory, in its file's element type.
    pub fn load(&self) -> Result<Stack> {
        let layers = self
            .shape
            .layers
            .iter()
            .enumerate()
            .map(|(i, layer)| {
                let cores = (0..layer.cores.len())
                    .map(|site| self.read(i, site))
                    .collect::<Result<Vec<_>>>()?;
                Ok(Layer {
                    name: layer.name.clone(),
                    train: Train::of_any(layer.kind, cores)?,
                })
            })
            .collect::<Result<_>>()?;
        Stack::new(layers)
    }

    /// The directory's one train, or the exact product of its layers.
    pub fn load_train(&self) -> Result<Train> {
        let stack = self.load()?;
        match stack.layers() {
            [only] => Ok(only.train.clone()),
            _ => exact_product(&stack),
        }
    }
}

impl CoreSource for ProblemDir {
    fn read(&self, layer: usize, site: usize) -> Result<AnyTensor> {
        let entry = &self.shape.layers[layer];
        let path = core_path(&self.dir, &entry.name, site);
        let bad = |message| Error::bad_core(&entry.name, site, &path, message);
        let core = npy::read(&path).map_err(bad)?;
        let conj = self.conj_bra && entry.kind == Kind::Mps;
        self.orientation
            .ket_core(entry, site, core, conj)
            .map_err(bad)
    }

    fn conjugates_bra(&self) -> bool {
        self.conj_bra
    }
}

/// The number of sites of every layer, each at least 2 and all equal: counted before any file
/// is read, so a layer with a site too many or too few is named rather than a file of it.
fn site_counts(dir: &Path, manifest: &Manifest) -> Result<Vec<usize>> {
    let counts = manifest
        .layers
        .iter()
        .map(|entry| count_sites(dir, &entry.name))
        .collect::<Result<Vec<_>>>()?;
    let names = manifest.layers.iter().map(|entry| entry.name.as_str());
    let layers: Vec<(&str, usize)> = names.zip(counts.iter().copied()).collect();
    for &(name, sites) in &layers {
        if sites < 2 {
            return Err(too_few_sites(name, sites));
        }
        if sites != layers[0].1 {
            return Err(site_counts_differ((name, sites), layers[0]));
        }
    }
    Ok(counts)
}

/// Number of sites of a layer folder: files `00000.npy …` with no gap and nothing else.
fn count_sites(dir: &Path, layer: &str) -> Result<usize> {
    let folder = dir.join(layer);
    let meta = folder
        .symlink_metadata()
        .map_err(|e| Error::io(&folder, e))?;
    if !meta.is_dir() {
        return Err(Error::Manifest {
            path: folder.clone(),
            message: format!(
                "layer '{layer}' must be a real directory (not a file or a symbolic link)"
            ),
        });
    }
    let mut sites = Vec::new();
    for entry in std::fs::read_dir(&folder).map_err(|e| Error::io(&folder, e))? {
        let entry = entry.map_err(|e| Error::io(&folder, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let index = name
            .strip_suffix(".npy")
            .filter(|s| s.len() == 5)
            .and_then(|s| s.parse::<usize>().ok());
        match index {
            Some(i) => sites.push(i),
            None if name.starts_with(srcflow_sched::store::RUN_SCRATCH) => {
                return Err(Error::Manifest {
                    path: entry.path(),
                    message: format!(
                        "a scratch folder that a killed srcflow run left in layer '{layer}' (a \
                         scratch folder inside a layer folder is refused now): remove it"
                    ),
                })
            }
            None => {
                return Err(Error::Manifest {
                    path: entry.path(),
                    message: format!(
                        "unexpected file in layer '{layer}'; expected only <site:05>.npy files"
                    ),
                })
            }
        }
    }
    sites.sort_unstable();
    if let Some(missing) = (0..sites.len()).find(|&i| sites[i] != i) {
        return Err(Error::Manifest {
            path: core_path(dir, layer, missing),
            message: format!(
                "{} is missing (found sites up to {})",
                site_name(None, layer, missing),
                sites.last().unwrap()
            ),
        });
    }
    Ok(sites.len())
}
