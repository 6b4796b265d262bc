//! `GraphOptions`: the choices that shape a sweep graph (bond cap, batches, cutoff,
//! oversampling, element type, devices, folding), checked before anything is built.

use crate::train::StackShape;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::DType;

/// The most devices one run may share its sweep between (a node has a handful of GPUs; the
/// CPU backend allows a few worker groups per core).
pub const MOST_DEVICES: usize = 1024;

/// Choices that shape the graph.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct GraphOptions {
    /// Output bond cap χ̄.
    pub chi_out: usize,
    /// Sketch columns per env/sketch task; `None` puts all columns in one task.
    pub batch_cols: Option<usize>,
    /// Relative singular-value cutoff in `[0, 1)`: bonds drop singular values below
    /// `cutoff · σ_max` (0: keep χ̄).
    pub cutoff: f64,
    /// Sketch `⌈oversample · χ̄⌉` columns (at least 1); above χ̄, an SVD rounding sweep brings
    /// the bonds back to χ̄.
    pub oversample: f64,
    /// The element type to compute in; `None`: the layers' types promoted as NumPy would.
    pub dtype: Option<DType>,
    /// Devices to share the sweep between (at least 1).
    pub devices: usize,
    /// Fold each site's cores into S once for its sketch and projection where that saves flops
    /// (one device only); costs a value `phys` times the size of S per site.
    pub fold: bool,
}

impl GraphOptions {
    /// Options for output bond `chi_out`, everything else at its default.
    pub fn new(chi_out: usize) -> Self {
        GraphOptions {
            chi_out,
            batch_cols: None,
            cutoff: 0.0,
            oversample: 1.0,
            dtype: None,
            devices: 1,
            fold: true,
        }
    }

    /// These options with `cols` sketch columns per env/sketch task (`None`: all in one).
    pub fn with_batch_cols(self, cols: impl Into<Option<usize>>) -> Self {
        GraphOptions {
            batch_cols: cols.into(),
            ..self
        }
    }

    /// These options with relative singular-value cutoff `cutoff`.
    pub fn with_cutoff(self, cutoff: f64) -> Self {
        GraphOptions { cutoff, ..self }
    }

    /// These options sketching `⌈oversample · χ̄⌉` columns.
    pub fn with_oversample(self, oversample: f64) -> Self {
        GraphOptions { oversample, ..self }
    }

    /// These options computing in `dtype` whatever the layers' types (`None`: the layers'
    /// types promoted).
    pub fn with_dtype(self, dtype: impl Into<Option<DType>>) -> Self {
        GraphOptions {
            dtype: dtype.into(),
            ..self
        }
    }

    /// These options sharing the sweep between `devices` devices.
    pub fn with_devices(self, devices: usize) -> Self {
        GraphOptions { devices, ..self }
    }

    /// These options folding each site's cores where that saves flops (`true`) or never.
    pub fn with_fold(self, fold: bool) -> Self {
        GraphOptions { fold, ..self }
    }

    /// Checks every choice; the error names the option and the value found.
    pub fn check(&self) -> Result<()> {
        if self.chi_out == 0 {
            return Err(Error::Invalid(
                "`GraphOptions::chi_out` must be at least 1, found 0".into(),
            ));
        }
        if self.batch_cols == Some(0) {
            return Err(Error::Invalid(
                "`GraphOptions::batch_cols` must be at least 1, found 0".into(),
            ));
        }
        if !(0.0..1.0).contains(&self.cutoff) {
            return Err(Error::Invalid(format!(
                "`GraphOptions::cutoff` must be in [0, 1), found {}",
                self.cutoff
            )));
        }
        if self.devices == 0 || self.devices > MOST_DEVICES {
            return Err(Error::Invalid(format!(
                "`GraphOptions::devices` must be 1 to {MOST_DEVICES}, found {}",
                self.devices
            )));
        }
        if !(self.oversample.is_finite() && self.oversample >= 1.0) {
            return Err(Error::Invalid(format!(
                "`GraphOptions::oversample` must be a finite factor of at least 1, found {}",
                self.oversample
            )));
        }
        Ok(())
    }

    /// The element type a run of `stack` computes in, or an error when a forced real type
    /// would drop the imaginary parts of a complex layer.
    pub fn dtype_for(&self, stack: &StackShape) -> Result<DType> {
        let Some(forced) = self.dtype else {
            return Ok(stack.dtype());
        };
        let complex = stack.layers.iter().find(|l| l.dtype.is_complex());
        match complex {
            Some(layer) if !forced.is_complex() => Err(Error::Invalid(format!(
                "`GraphOptions::dtype` {forced} would drop the imaginary parts of layer '{}' ({}); use {}",
                layer.name,
                layer.dtype,
                if forced.is_double() {
                    "complex128"
                } else {
                    "complex64"
                }
            ))),
            _ => Ok(forced),
        }
    }

    /// Number of sketch columns for `stack`: [`Self::sketch`], at most the largest rank the
    /// product can have at any cut (wider sketches find nothing more).
    pub fn sketch_for(&self, stack: &StackShape) -> usize {
        self.sketch().min(stack.max_rank())
    }

    /// Number of sketch columns asked for: `⌈oversample · χ̄⌉`.
    pub fn sketch(&self) -> usize {
        let columns = (self.oversample * self.chi_out as f64).ceil();
        (columns as usize).max(self.chi_out)
    }
}
