//! Matrix helpers on top of faer: row-major views and products, the thin QR and SVD.

use crate::error::{Error, Result};
use crate::tensor::{Array, Scalar};
use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::householder;
use faer::linalg::qr::no_pivoting::factor;
use faer::{Conj, Mat, MatRef, Par};

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

/// Thin QR of row-major `rows × cols`: (Q row-major `rows × k`, R row-major `k × cols`, k).
pub fn thin_qr_row_major<T: Scalar>(
    data: &[T],
    rows: usize,
    cols: usize,
) -> (Vec<T>, Vec<T>, usize) {
    let (q, r) = thin_qr(view(data, rows, cols));
    (row_major(q.as_ref()), row_major(r.as_ref()), q.ncols())
}

/// QRs with fewer than this many `m·n²` multiply-adds run on one thread: splitting them across
/// threads cost more than it saved on the benchmark problems.
const PARALLEL_QR: usize = 1 << 24;

/// The thin Q and R factors of `a` (Householder QR), threaded only when the matrix is large.
pub fn thin_qr<T: Scalar>(a: MatRef<'_, T>) -> (Mat<T>, Mat<T>) {
    let (m, n) = a.shape();
    let size = m.min(n);
    let par = if m * n * n < PARALLEL_QR {
        Par::Seq
    } else {
        Par::rayon(0)
    };
    let block = factor::recommended_block_size::<T>(m, n);
    let mut factors = a.to_owned();
    let mut coeff = Mat::<T>::zeros(block, size);
    let scratch = factor::qr_in_place_scratch::<T>(m, n, block, par, Default::default());
    factor::qr_in_place(
        factors.as_mut(),
        coeff.as_mut(),
        par,
        MemStack::new(&mut MemBuffer::new(scratch)),
        Default::default(),
    );
    let basis = Mat::from_fn(m, size, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Less => T::zero(),
        std::cmp::Ordering::Equal => T::one(),
        std::cmp::Ordering::Greater => factors[(i, j)],
    });
    let q = thin_q(basis.as_ref(), coeff.as_ref(), par);
    let r = Mat::from_fn(
        size,
        n,
        |i, j| {
            if i <= j {
                factors[(i, j)]
            } else {
                T::zero()
            }
        },
    );
    (q, r)
}

/// The thin Q of a Householder QR from its reflectors (`basis`, unit lower trapezoidal) and
/// their block factors (`coeff`, one block of `coeff.nrows()` columns after another), formed as
/// LAPACK's `ungqr` forms it: the blocks applied to the identity last first, each to the
/// columns from its own first on only, as the columns before it are still the identity's,
/// which it leaves as they are (half the work of applying every block to every column).
fn thin_q<T: Scalar>(basis: MatRef<'_, T>, coeff: MatRef<'_, T>, par: Par) -> Mat<T> {
    let (m, size, block) = (basis.nrows(), coeff.ncols(), coeff.nrows());
    let mut q = Mat::<T>::identity(m, size);
    let scratch =
        householder::apply_block_householder_on_the_left_in_place_scratch::<T>(m, block, size);
    let mut buffer = MemBuffer::new(scratch);
    let mut end = size;
    while end > 0 {
        let start = (end - 1) / block * block;
        householder::apply_block_householder_on_the_left_in_place_with_conj(
            basis.get(start.., start..end),
            coeff.get(..end - start, start..end),
            Conj::No,
            q.as_mut().get_mut(start.., start..),
            par,
            MemStack::new(&mut buffer),
        );
        end = start;
    }
    q
}

/// A thin SVD in row-major vectors: U, the singular values, Vᴴ and the rank.
pub type RowMajorSvd<T> = (Vec<T>, Vec<f64>, Vec<T>, usize);

/// Thin SVD of row-major `rows × cols`: (U, singular values, Vᴴ), U and Vᴴ row-major.
pub fn thin_svd<T: Scalar>(data: &[T], rows: usize, cols: usize) -> Result<RowMajorSvd<T>> {
    let (u, s, v) = svd(view(data, rows, cols))?;
    let k = s.len();
    let vh = Mat::<T>::from_fn(k, cols, |i, j| Scalar::conj(v[(j, i)]));
    Ok((row_major(u.as_ref()), s, row_major(vh.as_ref()), k))
}

/// Thin SVD of `a` with the threads of the current rayon pool: `U`, the singular values
/// (largest first) and `V` (not `Vᴴ`).
pub fn svd<T: Scalar>(a: MatRef<'_, T>) -> Result<(Mat<T>, Vec<f64>, Mat<T>)> {
    use faer::linalg::svd::{self, ComputeSvdVectors};
    let (m, n) = a.shape();
    let k = m.min(n);
    let par = Par::rayon(0);
    let (mut u, mut v, mut s) = (Mat::zeros(m, k), Mat::zeros(n, k), Diag::zeros(k));
    let thin = ComputeSvdVectors::Thin;
    let scratch = svd::svd_scratch::<T>(m, n, thin, thin, par, Default::default());
    svd::svd(
        a,
        s.as_mut(),
        Some(u.as_mut()),
        Some(v.as_mut()),
        par,
        MemStack::new(&mut MemBuffer::new(scratch)),
        Default::default(),
    )
    .map_err(|e| Error::Numeric(format!("SVD did not converge: {e:?}")))?;
    let singular = s.column_vector().iter().map(|x| x.to_c64().re).collect();
    Ok((u, singular, v))
}

/// A tensor of `shape` from row-major data.
pub fn tensor<T: Scalar>(shape: Vec<usize>, data: Vec<T>) -> Array<T> {
    Array::new(shape, data).expect("shape and data agree")
}
