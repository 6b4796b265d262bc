//! `Stack`: trains multiplied together, and its data-free twin `StackShape`.

use super::{Kind, Orientation, Train};
use serde::{Deserialize, Serialize};
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::DType;
use std::path::{Path, PathBuf};

/// One named train of a stack.
#[derive(Clone, Debug)]
pub struct Layer {
    /// Name of the layer (a folder name in a problem directory).
    pub name: String,
    /// The train.
    pub train: Train,
}

/// Trains in mathematical order: the product `layers[0] · layers[1] · … · layers[k-1]`.
///
/// All layers but the last are MPOs; the last is an MPS (a ket stack, whose product is an MPS)
/// or an MPO (an operator stack, whose product is an MPO).
#[derive(Clone, Debug)]
pub struct Stack {
    layers: Vec<Layer>,
}

/// The shape of one layer: its kind and the `[l, r, u, d]` shape of each core.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerShape {
    /// Name of the layer.
    pub name: String,
    /// MPS or MPO.
    pub kind: Kind,
    /// `[left, right, up, down]` of every core.
    pub cores: Vec<[usize; 4]>,
    /// The element type of its cores.
    #[serde(default)]
    pub dtype: DType,
}

/// The shapes of a stack, enough to build and plan the sweep graph without reading data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StackShape {
    /// Layers in mathematical order.
    pub layers: Vec<LayerShape>,
}

/// Names a site for an error message: layer, site and, when known, its file.
pub fn site_name(origin: Option<&Path>, layer: &str, site: usize) -> String {
    match origin {
        Some(dir) => format!(
            "layer '{layer}', site {site} ({})",
            core_path(dir, layer, site).display()
        ),
        None => format!("layer '{layer}', site {site}"),
    }
}

/// The file holding one core in a problem directory: `<dir>/<layer>/<site:05>.npy`.
pub fn core_path(dir: &Path, layer: &str, site: usize) -> PathBuf {
    dir.join(layer).join(format!("{site:05}.npy"))
}

/// The error for a layer with fewer than the two sites SRC needs.
pub fn too_few_sites(layer: &str, sites: usize) -> Error {
    Error::Shape(format!("layer '{layer}' has {sites} site(s); srcflow needs at least 2 (a single site has nothing to compress)"))
}

/// The error for two layers, each given as its name and its number of sites, whose numbers of
/// sites differ.
pub fn site_counts_differ(layer: (&str, usize), other: (&str, usize)) -> Error {
    Error::Shape(format!(
        "layer '{}' has {} sites but layer '{}' has {}",
        layer.0, layer.1, other.0, other.1
    ))
}

impl LayerShape {
    /// Checks boundary bonds and that neighbouring cores share their bond.
    pub fn check(&self, origin: Option<&Path>) -> Result<()> {
        let n = self.cores.len();
        if n < 2 {
            return Err(too_few_sites(&self.name, n));
        }
        let at = |site| site_name(origin, &self.name, site);
        for (site, &[l, r, u, d]) in self.cores.iter().enumerate() {
            if site == 0 && l != 1 || site == n - 1 && r != 1 {
                return Err(Error::Shape(format!(
                    "{}: open boundary needs an outer bond of 1",
                    at(site)
                )));
            }
            if self.kind == Kind::Mps && d != 1 {
                return Err(Error::Shape(format!(
                    "{}: an MPS core has no down leg",
                    at(site)
                )));
            }
            if [l, r, u, d].contains(&0) {
                return Err(Error::Shape(format!(
                    "{}: core has a zero-sized axis {:?}",
                    at(site),
                    [l, r, u, d]
                )));
            }
        }
        for site in 1..n {
            let (left, right) = (self.cores[site - 1][1], self.cores[site][0]);
            if left != right {
                return Err(Error::Shape(format!(
                    "{}: left bond {right} does not match the right bond {left} of site {}",
                    at(site),
                    site - 1
                )));
            }
        }
        Ok(())
    }
}

impl StackShape {
    /// Checks every layer, the site counts, the layer kinds and the physical joins.
    pub fn check(&self, origin: Option<&Path>) -> Result<()> {
        let Some(first) = self.layers.first() else {
            return Err(Error::Shape("a stack needs at least one layer".into()));
        };
        for layer in &self.layers {
            layer.check(origin)?;
            if layer.cores.len() != first.cores.len() {
                return Err(site_counts_differ(
                    (&layer.name, layer.cores.len()),
                    (&first.name, first.cores.len()),
                ));
            }
        }
        self.check_kinds()?;
        let bra = self.orientation() == Orientation::Bra;
        for (i, pair) in self.layers.windows(2).enumerate() {
            let (upper, lower) = (&pair[0], &pair[1]);
            // A bra's MPS meets the next layer with its physical leg, stored as its up leg.
            let (leg, name) = if bra && i == 0 {
                (2, "physical")
            } else {
                (3, "down")
            };
            for (site, (a, b)) in upper.cores.iter().zip(&lower.cores).enumerate() {
                if a[leg] != b[2] {
                    return Err(Error::Shape(format!(
                        "{}: {name} leg {} does not match the up leg {} of {}",
                        site_name(origin, &upper.name, site),
                        a[leg],
                        b[2],
                        site_name(origin, &lower.name, site)
                    )));
                }
            }
        }
        Ok(())
    }

    /// MPOs, with at most one MPS: last (a ket stack) or first (a bra stack), not both.
    fn check_kinds(&self) -> Result<()> {
        let k = self.layers.len();
        let is_mps: Vec<bool> = self.layers.iter().map(|l| l.kind == Kind::Mps).collect();
        if k > 1 && is_mps[0] && is_mps[k - 1] {
            return Err(Error::Shape(format!(
                "layers '{}' and '{}' are both MPS: their product is a number, not a train",
                self.layers[0].name,
                self.layers[k - 1].name
            )));
        }
        let inner = self.layers.iter().take(k.saturating_sub(1)).skip(1);
        if let Some(mps) = inner.into_iter().find(|l| l.kind == Kind::Mps) {
            return Err(Error::Shape(format!(
                "layer '{}' is an MPS in the middle of the stack; an MPS may only be the last layer (a ket, acting first) or the first (a bra)",
                mps.name
            )));
        }
        Ok(())
    }

    /// The element type of the product: the layers' types promoted as NumPy would.
    pub fn dtype(&self) -> DType {
        let mut types = self.layers.iter().map(|l| l.dtype);
        let first = types.next().unwrap_or_default();
        types.fold(first, DType::promote)
    }

    /// Number of sites.
    pub fn sites(&self) -> usize {
        self.layers[0].cores.len()
    }

    /// The kind of the product: an MPS for a ket stack, an MPO otherwise.
    pub fn output_kind(&self) -> Kind {
        self.layers.last().expect("non-empty").kind
    }

    /// `(up, down)` physical sizes of the product at `site`.
    pub fn output_phys(&self, site: usize) -> (usize, usize) {
        let up = self.layers[0].cores[site][2];
        let down = self.layers.last().expect("non-empty").cores[site][3];
        (up, down)
    }

    /// The `[l, r, u, d]` shapes of every layer at `site`, top layer first.
    pub fn site(&self, site: usize) -> Vec<[usize; 4]> {
        self.layers.iter().map(|l| l.cores[site]).collect()
    }

    /// The product's physical dimension at `site` (`up · down`).
    pub fn phys(&self, site: usize) -> usize {
        let (up, down) = self.output_phys(site);
        up.saturating_mul(down)
    }

    /// The bonds an SRC sweep `width` columns wide gives the output, one per cut, right to
    /// left: the bond left of site j is min(width, phys_j · the bond right of j, the product
    /// of the layers' bonds there).
    pub fn sweep_bonds(&self, width: usize) -> Vec<usize> {
        let n = self.sites();
        let mut bonds = vec![0; n - 1];
        let mut right = 1usize;
        for site in (1..n).rev() {
            let inputs = self.layers.iter().map(|l| l.cores[site - 1][1]);
            let input_bonds = inputs.fold(1, usize::saturating_mul);
            right = width
                .min(self.phys(site).saturating_mul(right))
                .min(input_bonds);
            bonds[site - 1] = right;
        }
        bonds
    }

    /// The output's bonds once its left edge is trimmed (or rounded): [`Self::sweep_bonds`],
    /// each at most the bond to its left times the physical dimension between them. With
    /// `width` unbounded, the largest rank the product can have at each cut.
    pub fn trimmed_bonds(&self, width: usize) -> Vec<usize> {
        let mut bonds = self.sweep_bonds(width);
        let mut left = 1usize;
        for (cut, bond) in bonds.iter_mut().enumerate() {
            left = left.saturating_mul(self.phys(cut)).min(*bond);
            *bond = left;
        }
        bonds
    }

    /// The largest rank the product can have at any cut (1 for a single site).
    pub fn max_rank(&self) -> usize {
        self.trimmed_bonds(usize::MAX)
            .into_iter()
            .max()
            .unwrap_or(1)
    }
}

impl Stack {
    /// Builds a stack, checking that the layers fit together and hold only finite numbers. A bra
    /// stack (an MPS first, used without conjugation) is kept in its ket form: reversed, with
    /// every MPO transposed.
    pub fn new(layers: Vec<Layer>) -> Result<Self> {
        let given = Stack { layers };
        let shape = given.shape();
        shape.check(None)?;
        given.check_finite()?;
        let layers = shape.orientation().ket_form(given.layers, |layer| Layer {
            name: layer.name,
            train: layer.train.transposed(),
        });
        Ok(Stack { layers })
    }

    /// The stack `trains[0] · trains[1] · …`, its layers named `layer0`, `layer1`, ….
    pub fn of_trains(trains: &[&Train]) -> Result<Self> {
        let layers = trains
            .iter()
            .enumerate()
            .map(|(i, train)| Layer {
                name: format!("layer{i}"),
                train: (*train).clone(),
            })
            .collect();
        Stack::new(layers)
    }

    /// An error naming the first layer, site and element that is NaN or infinite, if any.
    fn check_finite(&self) -> Result<()> {
        for layer in &self.layers {
            for (site, core) in layer.train.cores().iter().enumerate() {
                if let Some(index) = core.first_non_finite() {
                    return Err(Error::Invalid(format!(
                        "layer '{}', site {site}: element {index} (flat, in [l, r, u, d] order) is NaN or infinite",
                        layer.name
                    )));
                }
            }
        }
        Ok(())
    }

    /// The layers in mathematical order.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Shapes only, for building and planning the graph.
    pub fn shape(&self) -> StackShape {
        StackShape {
            layers: self.layers.iter().map(|l| l.train.shape(&l.name)).collect(),
        }
    }
}
