//! Truncated-SVD compression of a train (the near-optimal reference SRC is measured against).

use crate::train::Train;
use srcflow_tensor::error::Result;
use srcflow_tensor::tensor::matrix::{product, tensor, thin_qr_row_major, thin_svd, view};
use srcflow_tensor::tensor::{Tensor, C64};

/// `train` left-canonicalised by QR, then truncated right to left by SVD to bonds ≤ `chi`.
pub fn truncate_svd(train: &Train, chi: usize) -> Result<Train> {
    Ok(svd_sweep(train, chi)?.0)
}

/// The singular values (Schmidt coefficients, largest first) at every cut of `train`, cut 0
/// first: the spectra a truncation at each bond chooses from.
pub fn bond_spectra(train: &Train) -> Result<Vec<Vec<f64>>> {
    let mut spectra = svd_sweep(train, usize::MAX)?.1;
    spectra.reverse();
    Ok(spectra)
}

/// Left-canonicalises `train` by QR, then sweeps right to left truncating every bond to
/// `chi` by SVD; returns the train and the full spectrum met at each cut, last cut first.
fn svd_sweep(train: &Train, chi: usize) -> Result<(Train, Vec<Vec<f64>>)> {
    let mut spectra = Vec::new();
    let mut cores: Vec<Tensor> = train.cores_c64();
    let n = cores.len();
    for site in 0..n - 1 {
        let [l, r, u, d] = dims(&cores[site]);
        let (q, rf, k) = thin_qr_row_major(cores[site].permute(&[0, 2, 3, 1]).data(), l * u * d, r);
        cores[site] = tensor(vec![l, u, d, k], q).permute(&[0, 3, 1, 2]);
        let [_, r2, u2, d2] = dims(&cores[site + 1]);
        cores[site + 1] = tensor(
            vec![k, r2, u2, d2],
            product(
                view(&rf, k, r),
                view(cores[site + 1].data(), r, r2 * u2 * d2),
            ),
        );
    }
    for site in (1..n).rev() {
        let [l, r, u, d] = dims(&cores[site]);
        let (uf, s, vh, k) = thin_svd(cores[site].data(), l, r * u * d)?;
        let keep = chi.min(k);
        spectra.push(s.clone());
        cores[site] = tensor(vec![keep, r, u, d], vh[..keep * r * u * d].to_vec());
        let us: Vec<C64> = (0..l)
            .flat_map(|i| (0..keep).map(move |c| (i, c)))
            .map(|(i, c)| uf[i * k + c] * s[c])
            .collect();
        let [pl, _, pu, pd] = dims(&cores[site - 1]);
        let moved = cores[site - 1].permute(&[0, 2, 3, 1]);
        let merged = product(view(moved.data(), pl * pu * pd, l), view(&us, l, keep));
        cores[site - 1] = tensor(vec![pl, pu, pd, keep], merged).permute(&[0, 3, 1, 2]);
    }
    Ok((Train::new(train.kind(), cores)?, spectra))
}

/// True when every core but the first has orthonormal rows (as `l × (r·u·d)`) to `tol`.
pub fn is_right_canonical(train: &Train, tol: f64) -> bool {
    train.cores_c64()[1..].iter().all(|core| {
        let [l, r, u, d] = dims(core);
        let m = view(core.data(), l, r * u * d);
        let gram = product(m, m.adjoint().to_owned().as_ref());
        (0..l).all(|i| {
            (0..l).all(|j| {
                let expected = if i == j { 1.0 } else { 0.0 };
                (gram[i * l + j] - C64::new(expected, 0.0)).norm() <= tol
            })
        })
    })
}

/// `[l, r, u, d]` of a core.
fn dims(core: &Tensor) -> [usize; 4] {
    core.shape().try_into().expect("rank 4")
}
