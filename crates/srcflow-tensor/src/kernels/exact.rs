//! The exact two-site path: contract both sites and truncate with an SVD.

use super::kept_rank;
use crate::backend::{Backend, DeviceTensor, Gemm};
use crate::error::Result;

/// The two output cores (right-canonical, in basis form `[OutLeft, Up, Down, OutRight]`) of a
/// 2-site product.
///
/// `left` and `right` are the site products `[Left.., Right.., Up, Down]` of sites 0 and 1;
/// the bond keeps the `min(chi_out, rows, cols)` largest singular values, none below
/// `cutoff · σ_max` (at least one).
pub fn exact_pair(
    backend: &dyn Backend,
    left: &DeviceTensor,
    right: &DeviceTensor,
    chi_out: usize,
    cutoff: f64,
) -> Result<Vec<DeviceTensor>> {
    let (lu, ld) = phys(left);
    let (ru, rd) = phys(right);
    let (p0, p1) = (lu * ld, ru * rd);
    let bond = left.len() / p0;
    let a = backend.permute(&left.clone().reshaped(vec![bond, p0]), &[1, 0])?;
    let gemm = Gemm::new(1, p0, p1, bond);
    let b = right.clone().reshaped(vec![bond, p1]);
    let m = backend.batched_gemm(&a, &b, gemm, vec![p0, p1])?;
    // The column-major p0 × p1 matrix is the product transposed.
    let (u, singular, vh) = backend.thin_svd(&backend.permute(&m, &[1, 0])?)?;
    let rank = kept_rank(&singular, chi_out.min(p0).min(p1), cutoff);
    let first = backend.scale(&backend.slice(&u, 0, 0..rank)?, 0, &singular[..rank])?;
    let first = backend.permute(&first, &[1, 0])?;
    let second = backend.permute(&backend.slice(&vh, 1, 0..rank)?, &[1, 0])?;
    Ok(vec![
        first.reshaped(vec![1, lu, ld, rank]),
        second.reshaped(vec![rank, ru, rd, 1]),
    ])
}

/// `(Up, Down)` sizes: the last two axes.
fn phys(t: &DeviceTensor) -> (usize, usize) {
    let s = t.dims();
    (s[s.len() - 2], s[s.len() - 1])
}
