//! Norms and distances of trains by a QR sweep (resolves relative distances near 1e-15).

use super::difference::difference;
use crate::train::Train;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::matrix::{product, thin_qr_row_major, view};
use srcflow_tensor::tensor::{Tensor, C64};

/// The 2-norm of a train, from a left-to-right QR sweep.
pub fn norm(train: &Train) -> f64 {
    sweep_norm(&train.cores_c64())
}

/// `‖a − b‖ / ‖b‖`, the relative distance of `a` from the reference `b`: exactly 0 when their
/// cores are equal, and the absolute distance `‖a − b‖` when `‖b‖ = 0` ([`distance_of`] says
/// which).
pub fn distance(a: &Train, b: &Train) -> Result<f64> {
    distance_of(a, b).map(|d| d.value)
}

/// How far `a` is from the reference `b`, and whether relative to `‖b‖`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Distance {
    /// `‖a − b‖ / ‖b‖`, or `‖a − b‖` when `‖b‖ = 0`.
    pub value: f64,
    /// False when `‖b‖ = 0` and `value` is the absolute distance.
    pub relative: bool,
}

/// [`distance`], saying whether it is relative.
pub fn distance_of(a: &Train, b: &Train) -> Result<Distance> {
    if a.kind() != b.kind() || a.len() != b.len() {
        return Err(Error::Shape(format!(
            "cannot compare a {}-site {} with a {}-site {}",
            a.len(),
            a.kind().name(),
            b.len(),
            b.kind().name()
        )));
    }
    for site in 0..a.len() {
        let (pa, pb) = (&a.core(site).shape()[2..], &b.core(site).shape()[2..]);
        if pa != pb {
            return Err(Error::Shape(format!(
                "site {site}: physical legs {pa:?} and {pb:?} differ"
            )));
        }
    }
    let reference = norm(b);
    let relative = reference > 0.0;
    if (0..a.len()).all(|site| a.core(site) == b.core(site)) {
        return Ok(Distance {
            value: 0.0,
            relative,
        });
    }
    let diff = sweep_norm(&difference(&a.cores_c64(), &b.cores_c64()));
    let value = if relative { diff / reference } else { diff };
    Ok(Distance { value, relative })
}

/// Norm of a train given by its `[l, r, u, d]` cores.
fn sweep_norm(cores: &[Tensor]) -> f64 {
    let mut carry = vec![C64::new(1.0, 0.0)];
    let mut carry_rows = 1;
    for (site, core) in cores.iter().enumerate() {
        let [l, r, u, d] = <[usize; 4]>::try_from(core.shape()).expect("rank 4");
        let moved = core.permute(&[0, 2, 3, 1]);
        let merged = product(
            view(&carry, carry_rows, l),
            view(moved.data(), l, u * d * r),
        );
        if site + 1 == cores.len() {
            return merged.iter().map(|z| z.norm_sqr()).sum::<f64>().sqrt();
        }
        let (_, rf, k) = thin_qr_row_major(&merged, carry_rows * u * d, r);
        carry = rf;
        carry_rows = k;
    }
    0.0
}
