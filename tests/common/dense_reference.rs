//! A dense reference written from the definitions alone: every train becomes its full operator
//! matrix (or state vector), contracted index by index from its cores, and a stack is the matrix
//! product of its layers. It shares no code with srcflow's `kernels/`, `ops/` or `train/layout`
//! (only the `.npy` reader and the core type come from srcflow), so a leg-order bug there cannot
//! hide in both sides. Sizes stay small: up to ~10 sites of physical dimension 2.
//!
//! Layouts, as documented: quimb's MPS cores `(r, p)`, `(l, r, p)`, `(l, p)` and MPO cores
//! `(r, u, d)`, `(l, r, u, d)`, `(l, u, d)` in files; srcflow's trains hold `[l, r, u, d]`.

use srcflow::io::npy;
use srcflow::tensor::{Tensor, C64};
use std::path::Path;

/// A dense operator: rows over the up legs `(u_0 … u_{n-1})`, columns over the down legs, site 0
/// slowest, row-major. A state is a column (`downs` all 1).
#[derive(Clone, Debug)]
pub struct DenseOperator {
    pub ups: Vec<usize>,
    pub downs: Vec<usize>,
    pub data: Vec<C64>,
}

/// One site's core as a function of `(l, r, u, d)`, with its four dimensions.
struct SiteCore<'a> {
    dims: [usize; 4],
    entry: Box<dyn Fn(usize, usize, usize, usize) -> C64 + 'a>,
}

impl DenseOperator {
    /// The operator of a train whose cores are in srcflow's `[l, r, u, d]` layout.
    pub fn from_lrud(cores: &[Tensor]) -> DenseOperator {
        let sites = cores
            .iter()
            .map(|c| {
                let [l, r, u, d] = <[usize; 4]>::try_from(c.shape()).expect("a rank-4 core");
                let data = c.data();
                SiteCore {
                    dims: [l, r, u, d],
                    entry: Box::new(move |a, b, i, j| data[((a * r + b) * u + i) * d + j]),
                }
            })
            .collect::<Vec<_>>();
        contract(&sites)
    }

    /// The operator of a train read from `.npy` cores in quimb layout; a `bra` MPS is a row
    /// (its physical leg is a down leg), any other MPS a column.
    pub fn from_quimb(mps: bool, cores: &[Tensor], bra: bool) -> DenseOperator {
        let n = cores.len();
        let sites = cores
            .iter()
            .enumerate()
            .map(|(site, c)| quimb_site(c, site > 0, site + 1 < n, mps, bra))
            .collect::<Vec<_>>();
        contract(&sites)
    }

    /// `self · other`, the down legs of `self` summed against the up legs of `other`.
    pub fn times(&self, other: &DenseOperator) -> DenseOperator {
        assert_eq!(self.downs, other.ups, "legs that meet must agree");
        let (rows, inner, cols) = (self.rows(), other.rows(), other.cols());
        let mut data = vec![C64::new(0.0, 0.0); rows * cols];
        for i in 0..rows {
            for k in 0..inner {
                let a = self.data[i * inner + k];
                for j in 0..cols {
                    data[i * cols + j] += a * other.data[k * cols + j];
                }
            }
        }
        DenseOperator {
            ups: self.ups.clone(),
            downs: other.downs.clone(),
            data,
        }
    }

    /// A row vector turned into the column it is the transpose of (a bra's output state).
    pub fn row_as_state(self) -> DenseOperator {
        assert_eq!(self.rows(), 1, "only a row becomes a state");
        DenseOperator {
            ups: self.downs.clone(),
            downs: vec![1; self.downs.len()],
            data: self.data,
        }
    }

    /// The entries in the order `(u_0, d_0, u_1, d_1, …)`, site 0 slowest (as the fixtures' `dense.npy`).
    pub fn interleaved(&self) -> Vec<C64> {
        let n = self.ups.len();
        let mut out = Vec::with_capacity(self.data.len());
        let (legs, mut digits) = (self.legs_interleaved(), vec![0usize; 2 * n]);
        for _ in 0..self.data.len() {
            let (mut row, mut col) = (0, 0);
            for site in 0..n {
                row = row * self.ups[site] + digits[2 * site];
                col = col * self.downs[site] + digits[2 * site + 1];
            }
            out.push(self.data[row * self.cols() + col]);
            increment(&mut digits, &legs);
        }
        out
    }

    /// The dimensions `(u_0, d_0, u_1, d_1, …)`.
    pub fn legs_interleaved(&self) -> Vec<usize> {
        self.ups
            .iter()
            .zip(&self.downs)
            .flat_map(|(&u, &d)| [u, d])
            .collect()
    }

    fn rows(&self) -> usize {
        self.ups.iter().product()
    }

    fn cols(&self) -> usize {
        self.downs.iter().product()
    }
}

/// Advances a mixed-radix counter, last digit fastest.
fn increment(digits: &mut [usize], radix: &[usize]) {
    for (digit, &base) in digits.iter_mut().zip(radix).rev() {
        *digit += 1;
        if *digit < base {
            return;
        }
        *digit = 0;
    }
}

/// A quimb-layout core seen as `(l, r, u, d)`: absent bonds have size 1, an MPS's missing leg too.
fn quimb_site(
    core: &Tensor,
    has_left: bool,
    has_right: bool,
    mps: bool,
    bra: bool,
) -> SiteCore<'_> {
    let shape = core.shape();
    let bonds = has_left as usize + has_right as usize;
    assert_eq!(shape.len(), bonds + if mps { 1 } else { 2 }, "quimb rank");
    let l = if has_left { shape[0] } else { 1 };
    let r = if has_right {
        shape[has_left as usize]
    } else {
        1
    };
    let (u, d) = match (mps, bra) {
        (false, _) => (shape[bonds], shape[bonds + 1]),
        (true, false) => (shape[bonds], 1),
        (true, true) => (1, shape[bonds]),
    };
    let data = core.data();
    // Row-major over the quimb axes that exist, in their order: [l], [r], then p or (u, d).
    let entry = move |a: usize, b: usize, i: usize, j: usize| {
        let mut index = 0;
        if has_left {
            index = a;
        }
        if has_right {
            index = index * r + b;
        }
        index = match (mps, bra) {
            (false, _) => (index * u + i) * d + j,
            (true, false) => index * u + i,
            (true, true) => index * d + j,
        };
        data[index]
    };
    SiteCore {
        dims: [l, r, u, d],
        entry: Box::new(entry),
    }
}

/// Contracts a chain of cores index by index into its dense operator.
fn contract(sites: &[SiteCore<'_>]) -> DenseOperator {
    // acc[(row, col, bond)]: rows and cols over the sites so far, bond to the next site.
    let (mut rows, mut cols, mut bond) = (1usize, 1usize, 1usize);
    let mut acc = vec![C64::new(1.0, 0.0)];
    for site in sites {
        let [l, r, u, d] = site.dims;
        assert_eq!(l, bond, "bonds that meet must agree");
        let (new_rows, new_cols) = (rows * u, cols * d);
        let mut next = vec![C64::new(0.0, 0.0); new_rows * new_cols * r];
        for row in 0..rows {
            for col in 0..cols {
                for a in 0..l {
                    let x = acc[(row * cols + col) * l + a];
                    for i in 0..u {
                        for j in 0..d {
                            for b in 0..r {
                                let at = ((row * u + i) * new_cols + col * d + j) * r + b;
                                next[at] += x * (site.entry)(a, b, i, j);
                            }
                        }
                    }
                }
            }
        }
        (rows, cols, bond, acc) = (new_rows, new_cols, r, next);
    }
    assert_eq!(bond, 1, "the last site has no right bond");
    DenseOperator {
        ups: sites.iter().map(|s| s.dims[2]).collect(),
        downs: sites.iter().map(|s| s.dims[3]).collect(),
        data: acc,
    }
}

/// The layers of a problem directory (its manifest's names and kinds, in order).
pub fn manifest_layers(dir: &Path) -> Vec<(String, bool)> {
    let text = std::fs::read_to_string(dir.join("manifest.json")).expect("a manifest");
    let json: serde_json::Value = serde_json::from_str(&text).expect("manifest JSON");
    json["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .map(|layer| {
            let name = layer["name"].as_str().expect("a name").to_string();
            (name, layer["kind"].as_str() == Some("mps"))
        })
        .collect()
}

/// The cores of a layer directory, site by site, as complex128.
pub fn layer_cores(dir: &Path) -> Vec<Tensor> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("a layer directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "npy"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| npy::read(p).expect("an .npy core").to_c64())
        .collect()
}

/// The dense product of a problem directory (or the operator of a one-layer output directory):
/// a ket stack's layers multiplied top to bottom, a bra stack's row vector turned into a state.
pub fn dense_problem(dir: &Path) -> DenseOperator {
    let layers = manifest_layers(dir);
    let bra = layers.len() > 1 && layers[0].1;
    let mut product: Option<DenseOperator> = None;
    for (index, (name, mps)) in layers.iter().enumerate() {
        let op = DenseOperator::from_quimb(*mps, &layer_cores(&dir.join(name)), bra && index == 0);
        product = Some(match product {
            None => op,
            Some(p) => p.times(&op),
        });
    }
    let product = product.expect("at least one layer");
    if bra {
        product.row_as_state()
    } else {
        product
    }
}

/// `‖a − b‖ / ‖b‖`.
pub fn relative_distance(a: &[C64], b: &[C64]) -> f64 {
    assert_eq!(a.len(), b.len(), "sizes must agree");
    let diff: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    (diff / norm_sqr(b)).sqrt()
}

/// `‖a‖²`.
pub fn norm_sqr(a: &[C64]) -> f64 {
    a.iter().map(|x| x.norm_sqr()).sum()
}

/// The singular values at every cut (between sites c and c+1) of entries in interleaved order
/// with these legs, by faer's SVD of each reshape.
pub fn spectra(interleaved: &[C64], legs: &[usize]) -> Vec<Vec<f64>> {
    let sites = legs.len() / 2;
    (0..sites - 1)
        .map(|cut| {
            let rows: usize = legs[..2 * (cut + 1)].iter().product();
            let cols = interleaved.len() / rows;
            let m = faer::Mat::<C64>::from_fn(rows, cols, |i, j| interleaved[i * cols + j]);
            m.singular_values().expect("SVD converges")
        })
        .collect()
}
