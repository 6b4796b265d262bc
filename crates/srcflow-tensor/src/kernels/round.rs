//! One step of the SVD rounding sweep that follows the sketch under `--oversample` or `--cutoff`.

use super::kept_rank;
use crate::backend::{Backend, DeviceTensor, Gemm};
use crate::error::{Error, Result};

/// What one rounding step keeps: at most `cap` singular values on the bond to its right, none
/// below `cutoff · σ_max`; the `last` site has no such bond and only absorbs the carry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundStep {
    /// The most singular values kept (χ̄).
    pub cap: usize,
    /// Relative cutoff (0: none).
    pub cutoff: f64,
    /// True at the last site.
    pub last: bool,
}

/// Rounds `draft` (basis form `[L, Up, Down, R]`, right-orthonormal beyond it) after absorbing
/// `carry` (`[k, L]`, `None` at the first site), as `step` says. Returns the rounded core in
/// basis form, then Σ·Vᴴ `[kept, R]` to carry to the next site; the last site only absorbs and
/// carries nothing. (A bond of 1 before the last site still carries: χ̄ = 1 or a rank-1 cut.)
pub fn round(
    backend: &dyn Backend,
    carry: Option<&DeviceTensor>,
    draft: &DeviceTensor,
    step: RoundStep,
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
    if step.last {
        return Ok(vec![merged.reshaped(vec![kept_left, up, down, right])]);
    }
    let rows = kept_left * up * down;
    // The column-major rows × R matrix is the merged core transposed.
    let merged = backend.permute(&merged.reshaped(vec![rows, right]), &[1, 0])?;
    let (u, singular, vh) = backend.thin_svd(&merged)?;
    let kept = kept_rank(&singular, step.cap, step.cutoff);
    let core = backend.permute(&backend.slice(&u, 0, 0..kept)?, &[1, 0])?;
    let carry = backend.permute(&backend.slice(&vh, 1, 0..kept)?, &[1, 0])?;
    let carry = backend.scale(&carry, 0, &singular[..kept])?;
    Ok(vec![core.reshaped(vec![kept_left, up, down, kept]), carry])
}
