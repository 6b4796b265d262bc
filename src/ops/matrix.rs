//! Row-major matrix helpers on top of faer, for the whole-train operations.

use crate::error::{Error, Result};
use crate::tensor::{Array, Scalar, C64};
use faer::{Mat, MatRef};

/// A faer view of row-major `data` as a `rows × cols` matrix.
pub fn view<T: Scalar>(data: &[T], rows: usize, cols: usize) -> MatRef<'_, T> {
    MatRef::from_row_major_slice(data, rows, cols)
}

/// The elements of `m` in row-major order.
pub fn row_major<T: Scalar>(m: MatRef<'_, T>) -> Vec<T> {
    (0..m.nrows())
        .flat_map(|i| (0..m.ncols()).map(move |j| m[(i, j)]))
        .collect()
}

/// `a · b` in row-major order.
pub fn product<T: Scalar>(a: MatRef<'_, T>, b: MatRef<'_, T>) -> Vec<T> {
    let mut c = Mat::<T>::zeros(a.nrows(), b.ncols());
    faer::linalg::matmul::matmul(
        c.as_mut(),
        faer::Accum::Replace,
        a,
        b,
        T::one(),
        faer::Par::rayon(0),
    );
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
pub fn thin_svd<T: Scalar>(
    data: &[T],
    rows: usize,
    cols: usize,
) -> Result<(Vec<T>, Vec<f64>, Vec<T>, usize)> {
    let svd = view(data, rows, cols)
        .thin_svd()
        .map_err(|e| Error::Numeric(format!("SVD did not converge: {e:?}")))?;
    let k = rows.min(cols);
    let s = (0..k)
        .map(|i| svd.S().column_vector()[i].to_c64().re)
        .collect();
    let vh = Mat::<T>::from_fn(k, cols, |i, j| Scalar::conj(svd.V()[(j, i)]));
    Ok((row_major(svd.U()), s, row_major(vh.as_ref()), k))
}

/// A tensor of `shape` from row-major data.
pub fn tensor<T: Scalar>(shape: Vec<usize>, data: Vec<T>) -> Array<T> {
    Array::new(shape, data).expect("shape and data agree")
}
