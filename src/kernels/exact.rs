//! The exact two-site path: contract both sites and truncate with an SVD.

use super::kept_rank;
use crate::error::{Error, Result};
use crate::tensor::{Array, Scalar};
use faer::{Mat, MatRef};

/// The two output cores (right-canonical, in basis form `[OutLeft, Up, Down, OutRight]`) of a
/// 2-site product.
///
/// `left` and `right` are the site products `[Left.., Right.., Up, Down]` of sites 0 and 1;
/// the bond keeps the `min(chi_out, rows, cols)` largest singular values, none below
/// `cutoff · σ_max` (at least one).
pub fn exact_pair<T: Scalar>(
    left: &Array<T>,
    right: &Array<T>,
    chi_out: usize,
    cutoff: f64,
) -> Result<(Array<T>, Array<T>)> {
    let (lu, ld) = phys(left);
    let (ru, rd) = phys(right);
    let (p0, p1) = (lu * ld, ru * rd);
    let bond = left.len() / p0;
    let a = MatRef::from_row_major_slice(left.data(), bond, p0);
    let b = MatRef::from_row_major_slice(right.data(), bond, p1);
    let mut m = Mat::<T>::zeros(p0, p1);
    faer::linalg::matmul::matmul(
        m.as_mut(),
        faer::Accum::Replace,
        a.transpose(),
        b,
        T::one(),
        faer::Par::rayon(0),
    );
    let svd = m
        .thin_svd()
        .map_err(|e| Error::Numeric(format!("two-site SVD failed: {e:?}")))?;
    let (u, s, v) = (svd.U(), svd.S().column_vector(), svd.V());
    let singular: Vec<f64> = s.iter().map(|x| x.to_c64().re).collect();
    let rank = kept_rank(&singular, chi_out.min(p0).min(p1), cutoff);
    let first = (0..p0)
        .flat_map(|i| (0..rank).map(move |c| u[(i, c)] * s[c]))
        .collect();
    let second = (0..rank)
        .flat_map(|c| (0..p1).map(move |i| Scalar::conj(v[(i, c)])))
        .collect();
    Ok((
        Array::new(vec![1, lu, ld, rank], first)?,
        Array::new(vec![rank, ru, rd, 1], second)?,
    ))
}

/// `(Up, Down)` sizes: the last two axes.
fn phys<T: Scalar>(t: &Array<T>) -> (usize, usize) {
    let s = t.shape();
    (s[s.len() - 2], s[s.len() - 1])
}
