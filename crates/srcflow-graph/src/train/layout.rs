//! The quimb layout of cores (as in files and user arrays) and its conversion.
//!
//! MPS: first `(r, p)`, bulk `(l, r, p)`, last `(l, p)`.
//! MPO: first `(r, u, d)`, bulk `(l, r, u, d)`, last `(l, u, d)`.

use super::{Kind, Train};
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::{AnyTensor, Tensor};

/// Where a site sits in its train, which decides which bonds its core has.
fn position(site: usize, len: usize) -> (bool, bool) {
    (site > 0, site + 1 < len)
}

/// Rank of a core in quimb layout.
pub(crate) fn quimb_rank(kind: Kind, site: usize, len: usize) -> usize {
    let (has_left, has_right) = position(site, len);
    let phys = match kind {
        Kind::Mps => 1,
        Kind::Mpo => 2,
    };
    phys + has_left as usize + has_right as usize
}

/// Names of the axes of a core in quimb layout, for error messages.
pub(crate) fn quimb_axes(kind: Kind, site: usize, len: usize) -> String {
    let (has_left, has_right) = position(site, len);
    let mut axes = Vec::new();
    if has_left {
        axes.push("l");
    }
    if has_right {
        axes.push("r");
    }
    match kind {
        Kind::Mps => axes.push("p"),
        Kind::Mpo => axes.extend(["u", "d"]),
    }
    format!("({})", axes.join(", "))
}

/// The `[l, r, u, d]` shape of a core given in quimb layout, or an error saying what was expected.
pub fn shape_from_quimb(
    kind: Kind,
    site: usize,
    len: usize,
    shape: &[usize],
) -> Result<[usize; 4]> {
    let rank = quimb_rank(kind, site, len);
    if shape.len() != rank {
        return Err(Error::Shape(format!(
            "expected a rank-{rank} {} core {}, found shape {shape:?}",
            kind.name(),
            quimb_axes(kind, site, len)
        )));
    }
    let (has_left, has_right) = position(site, len);
    let mut it = shape.iter().copied();
    let l = if has_left { it.next().unwrap() } else { 1 };
    let r = if has_right { it.next().unwrap() } else { 1 };
    let u = it.next().unwrap();
    let d = it.next().unwrap_or(1);
    Ok([l, r, u, d])
}

/// The quimb-layout shape of a core of `[l, r, u, d]` shape.
pub fn shape_to_quimb(kind: Kind, site: usize, len: usize, lrud: [usize; 4]) -> Vec<usize> {
    let (has_left, has_right) = position(site, len);
    let [l, r, u, d] = lrud;
    let mut shape = Vec::with_capacity(4);
    if has_left {
        shape.push(l);
    }
    if has_right {
        shape.push(r);
    }
    shape.push(u);
    if kind == Kind::Mpo {
        shape.push(d);
    }
    shape
}

impl Train {
    /// Builds a train from cores in quimb layout (the data is reshaped, never permuted).
    pub fn from_quimb(kind: Kind, cores: Vec<Tensor>) -> Result<Train> {
        let len = cores.len();
        if len < 2 {
            return Err(Error::Shape(format!(
                "a train needs at least 2 sites, found {len}"
            )));
        }
        let cores = cores
            .into_iter()
            .enumerate()
            .map(|(site, c)| {
                let shape = shape_from_quimb(kind, site, len, c.shape())
                    .map_err(|e| Error::Shape(format!("site {site}: {e}")))?;
                Ok(c.reshape(shape.to_vec()))
            })
            .collect::<Result<Vec<_>>>()?;
        Train::new(kind, cores)
    }

    /// The cores in quimb layout, in their element type.
    pub fn to_quimb(&self) -> Vec<AnyTensor> {
        let len = self.len();
        self.cores
            .iter()
            .enumerate()
            .map(|(site, c)| {
                let lrud = c.shape().try_into().expect("rank 4");
                c.clone()
                    .reshape(shape_to_quimb(self.kind, site, len, lrud))
            })
            .collect()
    }
}
