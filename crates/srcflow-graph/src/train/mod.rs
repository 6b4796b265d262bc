//! Tensor trains (MPS and MPO) and stacks of them.

mod kind;
pub mod layout;
mod orientation;
mod stack;

pub use kind::Kind;
pub use orientation::Orientation;
pub use stack::{core_path, site_counts_differ, site_name, too_few_sites};
pub use stack::{Layer, LayerShape, Stack, StackShape};

use crate::error::{Error, Result};
use crate::tensor::{DType, Tensor};

/// A tensor train whose cores are held as `[left, right, up, down]` arrays.
///
/// An MPS has `down = 1`; the first core has `left = 1`, the last `right = 1`. Convert from
/// and to the quimb layout of files and user arrays with [`Train::from_quimb`] and
/// [`Train::to_quimb`].
#[derive(Clone, Debug, PartialEq)]
pub struct Train {
    kind: Kind,
    cores: Vec<Tensor>,
}

impl Train {
    /// Builds a train from cores already in `[left, right, up, down]` form, checking the bonds.
    pub fn new(kind: Kind, cores: Vec<Tensor>) -> Result<Self> {
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
            dtype: DType::Complex128,
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

    /// The cores in `[left, right, up, down]` form.
    pub fn cores(&self) -> &[Tensor] {
        &self.cores
    }

    /// The core of one site in `[left, right, up, down]` form.
    pub fn core(&self, site: usize) -> &Tensor {
        &self.cores[site]
    }

    /// Gives up the cores.
    pub fn into_cores(self) -> Vec<Tensor> {
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
            dtype: DType::Complex128,
        }
    }
}
