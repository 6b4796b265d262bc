//! Tensor trains (MPS and MPO) and stacks of them.

mod kind;
pub mod layout;
mod orientation;
mod stack;

pub use kind::Kind;
pub use orientation::Orientation;
pub use stack::{core_path, site_counts_differ, site_name, too_few_sites};
pub use stack::{Layer, LayerShape, Stack, StackShape};

use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::{AnyTensor, DType, Tensor};

/// A tensor train whose cores are held as `[left, right, up, down]` arrays of one element
/// type: float32, float64, complex64 or complex128.
///
/// An MPS has `down = 1`; the first core has `left = 1`, the last `right = 1`. Convert from
/// and to the quimb layout of files and user arrays with [`Train::from_quimb`] and
/// [`Train::to_quimb`]. A core is an [`AnyTensor`], whose array is shared, not copied: cloning
/// a train, stacking it ([`Stack::of_trains`]) and reading its cores for a run copy no data.
#[derive(Clone, Debug, PartialEq)]
pub struct Train {
    kind: Kind,
    cores: Vec<AnyTensor>,
}

/// The element type of a train of `cores`: the first core's, complex128 when there is none.
fn first_dtype(cores: &[AnyTensor]) -> DType {
    cores.first().map_or(DType::Complex128, AnyTensor::dtype)
}

impl Train {
    /// Builds a train of complex128 cores already in `[left, right, up, down]` form, checking
    /// the bonds.
    pub fn new(kind: Kind, cores: Vec<Tensor>) -> Result<Self> {
        Self::of_any(kind, cores.into_iter().map(AnyTensor::from).collect())
    }

    /// Builds a train of cores already in `[left, right, up, down]` form, all of one element
    /// type (any of the four), checking the bonds; the arrays are taken as they are, without a
    /// copy.
    pub fn of_any(kind: Kind, cores: Vec<AnyTensor>) -> Result<Self> {
        let dtype = first_dtype(&cores);
        if let Some((site, other)) = cores.iter().enumerate().find(|(_, c)| c.dtype() != dtype) {
            return Err(Error::Invalid(format!(
                "site {site}: core of {} in a train of {} (site 0's): give every core one type",
                other.dtype(),
                dtype
            )));
        }
        let shapes: Vec<[usize; 4]> = cores
            .iter()
            .enumerate()
            .map(|(site, c)| {
                <[usize; 4]>::try_from(c.shape()).map_err(|_| {
                    Error::Shape(format!(
                        "site {site}: core of rank {} is not [l, r, u, d]",
                        c.shape().len()
                    ))
                })
            })
            .collect::<Result<_>>()?;
        LayerShape {
            name: "train".into(),
            kind,
            cores: shapes,
            dtype,
        }
        .check(None)?;
        Ok(Train { kind, cores })
    }

    /// MPS or MPO.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Number of sites.
    pub fn len(&self) -> usize {
        self.cores.len()
    }

    /// True for a train without sites.
    pub fn is_empty(&self) -> bool {
        self.cores.is_empty()
    }

    /// The element type of the cores.
    pub fn dtype(&self) -> DType {
        first_dtype(&self.cores)
    }

    /// The cores in `[left, right, up, down]` form.
    pub fn cores(&self) -> &[AnyTensor] {
        &self.cores
    }

    /// The core of one site in `[left, right, up, down]` form.
    pub fn core(&self, site: usize) -> &AnyTensor {
        &self.cores[site]
    }

    /// The core of one site in `[left, right, up, down]` form as complex128 (a copy).
    pub fn core_c64(&self, site: usize) -> Tensor {
        self.cores[site].to_c64()
    }

    /// Every core in `[left, right, up, down]` form as complex128 (a copy).
    pub fn cores_c64(&self) -> Vec<Tensor> {
        self.cores.iter().map(AnyTensor::to_c64).collect()
    }

    /// Gives up the cores.
    pub fn into_cores(self) -> Vec<AnyTensor> {
        self.cores
    }

    /// The bond to the right of each site but the last.
    pub fn bonds(&self) -> Vec<usize> {
        self.cores[..self.len() - 1]
            .iter()
            .map(|c| c.shape()[1])
            .collect()
    }

    /// The transpose of an MPO (up and down swapped at every site); an MPS is returned as is.
    pub fn transposed(self) -> Train {
        let cores = match self.kind {
            Kind::Mps => self.cores,
            Kind::Mpo => self
                .cores
                .iter()
                .map(|c| c.permute(&[0, 1, 3, 2]))
                .collect(),
        };
        Train { cores, ..self }
    }

    /// The shape of every core, for planning without data.
    pub fn shape(&self, name: &str) -> LayerShape {
        LayerShape {
            name: name.to_string(),
            kind: self.kind,
            cores: self
                .cores
                .iter()
                .map(|c| c.shape().try_into().expect("rank 4"))
                .collect(),
            dtype: self.dtype(),
        }
    }
}
