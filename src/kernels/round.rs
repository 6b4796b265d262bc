//! One step of the SVD rounding sweep that follows an oversampled sketch.

use super::kept_rank;
use crate::error::Result;
use crate::tensor::matrix::{product, tensor, thin_svd, view};
use crate::tensor::{Array, Scalar};

/// A rounded output core and what it carries to the next site.
pub struct Rounded<T> {
    /// The output core in basis form `[OutLeft, Up, Down, OutRight]`.
    pub core: Array<T>,
    /// Σ·Vᴴ `[kept, OutRight]` for the next site; `None` at the last site.
    pub carry: Option<Array<T>>,
}

/// Rounds `draft` (basis form `[L, Up, Down, R]`, right-orthonormal beyond it) after absorbing
/// `carry` (`[k, L]`, `None` at the first site): the bond on its right keeps at most `cap`
/// singular values, none below `cutoff · σ_max`. The last site (`R = 1`) only absorbs.
pub fn round<T: Scalar>(
    carry: Option<&Array<T>>,
    draft: &Array<T>,
    cap: usize,
    cutoff: f64,
) -> Result<Rounded<T>> {
    let [left, up, down, right] = draft.shape().try_into().expect("a basis has four legs");
    let (kept_left, merged) = match carry {
        Some(c) => {
            let k = c.shape()[0];
            let m = product(
                view(c.data(), k, left),
                view(draft.data(), left, up * down * right),
            );
            (k, m)
        }
        None => (left, draft.data().to_vec()),
    };
    if right == 1 {
        let core = tensor(vec![kept_left, up, down, 1], merged);
        return Ok(Rounded { core, carry: None });
    }
    let rows = kept_left * up * down;
    let (u, s, vh, rank) = thin_svd(&merged, rows, right)?;
    let kept = kept_rank(&s, cap, cutoff);
    let core = (0..rows)
        .flat_map(|i| u[i * rank..i * rank + kept].iter().copied())
        .collect();
    let carry = (0..kept)
        .flat_map(|c| {
            let weight = T::from_c64(s[c].into());
            vh[c * right..(c + 1) * right]
                .iter()
                .map(move |&v| v * weight)
        })
        .collect::<Vec<T>>();
    Ok(Rounded {
        core: tensor(vec![kept_left, up, down, kept], core),
        carry: Some(tensor(vec![kept, right], carry)),
    })
}
