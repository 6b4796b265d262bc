//! Matrix helpers on top of faer: row-major views and products, the thin QR and SVD.

use crate::error::{Error, Result};
use crate::tensor::{Array, Scalar};
use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::householder;
use faer::linalg::qr::no_pivoting::factor;
use faer::{Conj, Mat, MatMut, MatRef, Par};

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
    let qr = thin_qr(view(data, rows, cols));
    (row_major(qr.q()), row_major(qr.r()), qr.rank)
}

/// QRs with fewer than this many `m·n²` multiply-adds run on one thread: splitting them across
/// threads cost more than it saved on the benchmark problems.
const PARALLEL_QR: usize = 1 << 24;

/// The thin factors of an `m × n` matrix, each in a column-major buffer of its own with no
/// padding, as a backend hands them on: `Q` (`m × rank`) and `R` (`rank × n`, upper
/// triangular), `rank = min(m, n)`.
pub struct ThinQr<T> {
    /// Rows of the factored matrix.
    pub rows: usize,
    /// Columns of the factored matrix.
    pub cols: usize,
    /// Columns of `Q`, rows of `R`.
    pub rank: usize,
    /// `Q`, column by column.
    pub q: Vec<T>,
    /// `R`, column by column.
    pub r: Vec<T>,
}

impl<T: Scalar> ThinQr<T> {
    /// `Q` as a matrix.
    pub fn q(&self) -> MatRef<'_, T> {
        MatRef::from_column_major_slice(&self.q, self.rows, self.rank)
    }

    /// `R` as a matrix.
    pub fn r(&self) -> MatRef<'_, T> {
        MatRef::from_column_major_slice(&self.r, self.rank, self.cols)
    }
}

/// The thin Q and R factors of `a` (Householder QR), threaded only when the matrix is large.
///
/// The matrix is copied once and factored in place; Q is formed from the reflectors where the
/// factorization left them (below the diagonal, which is all that applying them reads), straight
/// into its own buffer, and R is read from above the diagonal.
pub fn thin_qr<T: Scalar>(a: MatRef<'_, T>) -> ThinQr<T> {
    let (m, n) = a.shape();
    let rank = m.min(n);
    let par = if m * n * n < PARALLEL_QR {
        Par::Seq
    } else {
        Par::rayon(0)
    };
    let block = factor::recommended_block_size::<T>(m, n);
    let mut factors = a.to_owned();
    let mut coeff = Mat::<T>::zeros(block, rank);
    let scratch = factor::qr_in_place_scratch::<T>(m, n, block, par, Default::default());
    factor::qr_in_place(
        factors.as_mut(),
        coeff.as_mut(),
        par,
        MemStack::new(&mut MemBuffer::new(scratch)),
        Default::default(),
    );
    let reflectors = factors.as_ref().get(.., ..rank);
    let r = (0..n)
        .flat_map(|j| (0..rank).map(move |i| (i, j)))
        .map(|(i, j)| if i <= j { factors[(i, j)] } else { T::zero() })
        .collect();
    ThinQr {
        rows: m,
        cols: n,
        rank,
        q: thin_q(reflectors, coeff.as_ref(), par),
        r,
    }
}

/// The thin Q of a Householder QR, column-major, from its reflectors (`basis`: unit lower
/// trapezoidal, of which only the part below the diagonal is read) and their block factors
/// (`coeff`, one block of `coeff.nrows()` columns after another), formed as LAPACK's `ungqr`
/// forms it: the blocks applied to the identity last first, each to the columns from its own
/// first on only, as the columns before it are still the identity's, which it leaves as they
/// are (half the work of applying every block to every column).
fn thin_q<T: Scalar>(basis: MatRef<'_, T>, coeff: MatRef<'_, T>, par: Par) -> Vec<T> {
    let (m, size, block) = (basis.nrows(), coeff.ncols(), coeff.nrows());
    let mut elements = vec![T::zero(); m * size];
    let mut q = MatMut::from_column_major_slice_mut(&mut elements, m, size);
    for i in 0..size {
        q[(i, i)] = T::one();
    }
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
    elements
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
