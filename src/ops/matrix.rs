//! Row-major matrix helpers on top of faer, for the whole-train operations.

use crate::error::{Error, Result};
use crate::tensor::{Tensor, C64};
use faer::{Mat, MatRef};

/// A faer view of row-major `data` as a `rows × cols` matrix.
pub fn view(data: &[C64], rows: usize, cols: usize) -> MatRef<'_, C64> {
    MatRef::from_row_major_slice(data, rows, cols)
}

/// The elements of `m` in row-major order.
pub fn row_major(m: MatRef<'_, C64>) -> Vec<C64> {
    (0..m.nrows())
        .flat_map(|i| (0..m.ncols()).map(move |j| m[(i, j)]))
        .collect()
}

/// `a · b` in row-major order.
pub fn product(a: MatRef<'_, C64>, b: MatRef<'_, C64>) -> Vec<C64> {
    let c: Mat<C64> = a * b;
    row_major(c.as_ref())
}

/// Thin QR of row-major `rows × cols`: (Q row-major `rows × k`, R row-major `k × cols`).
pub fn thin_qr(data: &[C64], rows: usize, cols: usize) -> (Vec<C64>, Vec<C64>, usize) {
    let qr = view(data, rows, cols).qr();
    let q = qr.compute_thin_Q();
    let r = qr.thin_R();
    (row_major(q.as_ref()), row_major(r), q.ncols())
}

/// Thin SVD of row-major `rows × cols`: (U, singular values, Vᴴ), U and Vᴴ row-major.
pub fn thin_svd(
    data: &[C64],
    rows: usize,
    cols: usize,
) -> Result<(Vec<C64>, Vec<f64>, Vec<C64>, usize)> {
    let svd = view(data, rows, cols)
        .thin_svd()
        .map_err(|e| Error::Numeric(format!("SVD did not converge: {e:?}")))?;
    let k = rows.min(cols);
    let s = (0..k).map(|i| svd.S().column_vector()[i].re).collect();
    Ok((
        row_major(svd.U()),
        s,
        row_major(svd.V().adjoint().to_owned().as_ref()),
        k,
    ))
}

/// A tensor of `shape` from row-major data.
pub fn tensor(shape: Vec<usize>, data: Vec<C64>) -> Tensor {
    Tensor::new(shape, data).expect("shape and data agree")
}
