//! One step of the SVD rounding sweep that follows an oversampled sketch.

use super::kept_rank;
use crate::backend::{Backend, DeviceTensor, Gemm};
use crate::error::{Error, Result};

/// Rounds `draft` (basis form `[L, Up, Down, R]`, right-orthonormal beyond it) after absorbing
/// `carry` (`[k, L]`, `None` at the first site): the bond on its right keeps at most `cap`
/// singular values, none below `cutoff · σ_max`. Returns the rounded core in basis form, then
/// Σ·Vᴴ `[kept, R]` to carry to the next site; the last site (`R = 1`) only absorbs and
/// carries nothing.
pub fn round(
    backend: &dyn Backend,
    carry: Option<&DeviceTensor>,
    draft: &DeviceTensor,
    cap: usize,
    cutoff: f64,
) -> Result<Vec<DeviceTensor>> {
    let [left, up, down, right] = draft.dims()[..] else {
        return Err(Error::Invalid(format!(
            "a draft core has four axes, found {:?}",
            draft.dims()
        )));
    };
    let (kept_left, merged) = match carry {
        Some(c) => {
            let k = c.dims()[0];
            let gemm = Gemm::new(1, k, up * down * right, left);
            let flat = draft.clone().reshaped(vec![left, up * down * right]);
            (
                k,
                backend.batched_gemm(c, &flat, gemm, vec![k, up * down * right])?,
            )
        }
        None => (left, draft.clone()),
    };
    if right == 1 {
        return Ok(vec![merged.reshaped(vec![kept_left, up, down, 1])]);
    }
    let rows = kept_left * up * down;
    // The column-major rows × R matrix is the merged core transposed.
    let merged = backend.permute(&merged.reshaped(vec![rows, right]), &[1, 0])?;
    let (u, singular, vh) = backend.thin_svd(&merged)?;
    let kept = kept_rank(&singular, cap, cutoff);
    let core = backend.permute(&backend.slice(&u, 0, 0..kept)?, &[1, 0])?;
    let carry = backend.permute(&backend.slice(&vh, 1, 0..kept)?, &[1, 0])?;
    let carry = backend.scale(&carry, 0, &singular[..kept])?;
    Ok(vec![core.reshaped(vec![kept_left, up, down, kept]), carry])
}
