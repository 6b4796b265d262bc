//! Matrix helpers on top of faer: row-major views and products, the thin QR and SVD.

use crate::error::{Error, Result};
use crate::tensor::{Array, Scalar};
use faer::diag::Diag;
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::householder;
use faer::linalg::qr::no_pivoting::factor;
use faer::traits::math_utils::{from_f64, mul_real};
use faer::{unzip, zip, Conj, Mat, MatMut, MatRef, Par};

/// A faer view of row-major `data` as a `rows × cols` matrix.
pub fn view<T: Scalar>(data: &[T], rows: usize, cols: usize) -> MatRef<'_, T> {
    MatRef::from_row_major_slice(data, rows, cols)
}

/// The elements of `m` in row-major order.
pub(crate) fn row_major<T: Scalar>(m: MatRef<'_, T>) -> Vec<T> {
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
        crate::pool::faer_par(),
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
/// The matrix is copied once, scaled by a power of two (see `scaled_copy`'s note: a QR of a
/// sketch ran 1.35 times faster), and factored in place; Q is formed from the reflectors where the
/// factorization left them (below the diagonal, which is all that applying them reads), straight
/// into its own buffer, and R is read from above the diagonal.
pub fn thin_qr<T: Scalar>(a: MatRef<'_, T>) -> ThinQr<T> {
    let (m, n) = a.shape();
    let rank = m.min(n);
    let par = if m * n * n < PARALLEL_QR {
        Par::Seq
    } else {
        crate::pool::faer_par()
    };
    let block = factor::recommended_block_size::<T>(m, n);
    let (mut factors, exponent) = scaled_copy(a);
    let down = power_of_two::<T>(-exponent);
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
        .map(|(i, j)| {
            if i <= j {
                mul_real(&factors[(i, j)], &down)
            } else {
                T::zero()
            }
        })
        .collect();
    ThinQr {
        rows: m,
        cols: n,
        rank,
        q: thin_q(reflectors, coeff.as_ref(), par),
        r,
    }
}

/// A copy of `a` scaled by a power of two, and its exponent: one that lifts the largest part
/// (real or imaginary) of an element to about `2^(e/4)`, `e` the type's largest exponent
/// (`2^256` in double precision); it never scales down.
///
/// faer's column norm, which every Householder reflector takes, keeps three running sums of
/// squares, one scaled by `√(least normal)` against overflow. While a column's sum of squares
/// is below 1 that scaled sum is subnormal, and on x86 every addition to it takes a microcode
/// assist (about 35 times slower per element). A sketch's trailing columns, made small by the
/// reflectors before them, are such columns: the QR of a 1024 × 256 sketch of the MPO·MPO
/// primitive ran at 48 GFLOP/s, against 65 scaled. Scaling by a power of two is exact, and
/// the scaled matrix is the same whatever power of two `a` was scaled by before: its `Q` does
/// not depend on `a`'s scale and its `R`, scaled back, is exact.
fn scaled_copy<T: Scalar>(a: MatRef<'_, T>) -> (Mat<T>, i32) {
    let largest = T::from_real_impl(&a.norm_max()).to_c64().re;
    let (target, most) = if T::DTYPE.is_double() {
        (f64::MAX_EXP / 4, f64::MAX_EXP - 2)
    } else {
        (f32::MAX_EXP / 4, f32::MAX_EXP - 2)
    };
    let mut copy = a.to_owned();
    if largest == 0.0 || !largest.is_finite() {
        return (copy, 0);
    }
    let exponent = (target - binary_exponent(largest)).clamp(0, most);
    if exponent > 0 {
        let factor = power_of_two::<T>(exponent);
        zip!(copy.as_mut()).for_each(|unzip!(x)| *x = mul_real(x, &factor));
    }
    (copy, exponent)
}

/// `2^exponent` in `T`'s real type (exact for `|exponent|` within its normal range).
fn power_of_two<T: Scalar>(exponent: i32) -> T::Real {
    from_f64::<T::Real>(2.0_f64.powi(exponent))
}

/// `⌊log₂ x⌋` of a positive normal `x`, read from its bits (exact, unlike `log2`); a
/// subnormal counts as the least normal exponent.
fn binary_exponent(x: f64) -> i32 {
    ((x.to_bits() >> 52) & 0x7ff).max(1) as i32 - 1023
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
pub(crate) type RowMajorSvd<T> = (Vec<T>, Vec<f64>, Vec<T>, usize);

/// Thin SVD of row-major `rows × cols`: (U, singular values, Vᴴ), U and Vᴴ row-major.
pub fn thin_svd<T: Scalar>(data: &[T], rows: usize, cols: usize) -> Result<RowMajorSvd<T>> {
    let (u, s, v) = svd(view(data, rows, cols))?;
    let k = s.len();
    let vh = Mat::<T>::from_fn(k, cols, |i, j| Scalar::conj(v[(j, i)]));
    Ok((row_major(u.as_ref()), s, row_major(vh.as_ref()), k))
}

/// Thin SVD of `a` with the threads of the calling thread's rayon pool (none outside one): `U`, the singular values
/// (largest first) and `V` (not `Vᴴ`).
pub fn svd<T: Scalar>(a: MatRef<'_, T>) -> Result<(Mat<T>, Vec<f64>, Mat<T>)> {
    use faer::linalg::svd::{self, ComputeSvdVectors};
    let (m, n) = a.shape();
    let k = m.min(n);
    let par = crate::pool::faer_par();
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
    .map_err(|e| not_converged(a, e))?;
    let singular = s.column_vector().iter().map(|x| x.to_c64().re).collect();
    Ok((u, singular, v))
}

/// The error of an SVD of `a` that did not converge (faer said `said`): that the values
/// overflowed, when `a` holds infinities or NaNs (products of inputs too large for the
/// element type), else that it did not converge.
fn not_converged<T: Scalar>(a: MatRef<'_, T>, said: impl std::fmt::Debug) -> Error {
    let (m, n) = a.shape();
    let finite = |x: &T| {
        let z = x.to_c64();
        z.re.is_finite() && z.im.is_finite()
    };
    let bad = (0..n)
        .map(|j| (0..m).filter(|&i| !finite(&a[(i, j)])).count())
        .sum::<usize>();
    if bad == 0 {
        return Error::Numeric(format!("SVD did not converge: {said:?}"));
    }
    Error::Numeric(format!(
        "the values overflowed: {bad} of the {} entries of a {m}×{n} matrix the SVD was given \
         are infinite or NaN, products of the inputs beyond the largest number of their \
         element type; scale the input cores down (their norms near 1), and the output back \
         up by the same factor",
        m * n
    ))
}

/// A tensor of `shape` from row-major data.
pub fn tensor<T: Scalar>(shape: Vec<usize>, data: Vec<T>) -> Array<T> {
    Array::new(shape, data).expect("shape and data agree")
}

#[cfg(test)]
mod tests {
    use super::{scaled_copy, svd, thin_qr, ThinQr};
    use crate::tensor::C64;
    use faer::{Mat, MatRef};
    use rand::{Rng, SeedableRng};
    use rand_distr::StandardNormal;

    /// A `rows × cols` matrix whose singular values fall geometrically from `top` to
    /// `top / condition`, as a sketch's do.
    fn graded(rows: usize, cols: usize, top: f64, condition: f64) -> Mat<C64> {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut normal = |r, c| {
            Mat::<C64>::from_fn(r, c, |_, _| {
                C64::new(rng.sample(StandardNormal), rng.sample(StandardNormal))
            })
        };
        let (u, v) = (normal(rows, cols), normal(cols, cols));
        let decay = condition.powf(-1.0 / (cols - 1) as f64);
        let scaled = Mat::from_fn(cols, cols, |i, j| v[(i, j)] * top * decay.powi(i as i32));
        &u * &scaled
    }

    /// `‖A − QR‖ / ‖A‖` and `‖QᴴQ − I‖`.
    fn errors(a: MatRef<'_, C64>, qr: &ThinQr<C64>) -> (f64, f64) {
        let residual = (a - qr.q() * qr.r()).norm_l2() / a.norm_l2();
        let gram = qr.q().adjoint() * qr.q() - Mat::<C64>::identity(qr.rank, qr.rank);
        (residual, gram.norm_l2())
    }

    #[test]
    fn a_qr_does_not_depend_on_the_power_of_two_its_matrix_is_scaled_by() {
        // faer's QR of this matrix gives a Q that differs in its last bits from the Q of the
        // same matrix times 2^40 or 2^-40; scaled to one size first, all three are the same.
        let a = graded(200, 96, 1.0, 1e8);
        let qr = thin_qr(a.as_ref());
        for shift in [-40, 40] {
            let factor = 2.0_f64.powi(shift);
            let scaled = thin_qr(Mat::from_fn(200, 96, |i, j| a[(i, j)] * factor).as_ref());
            assert!(qr.q == scaled.q, "Q at 2^{shift}");
            let r: Vec<C64> = qr.r.iter().map(|x| x * factor).collect();
            assert!(r == scaled.r, "R at 2^{shift}");
        }
    }

    #[test]
    fn a_qr_factors_matrices_of_tiny_and_huge_elements() {
        for top in [1e-250, 1e-3, 1.0, 1e250] {
            let a = graded(80, 24, top, 1e10);
            let qr = thin_qr(a.as_ref());
            let (residual, orthogonality) = errors(a.as_ref(), &qr);
            assert!(residual < 1e-14, "top {top:e}: ‖A − QR‖/‖A‖ = {residual:e}");
            assert!(
                orthogonality < 1e-13,
                "top {top:e}: ‖QᴴQ − I‖ = {orthogonality:e}"
            );
        }
    }

    #[test]
    fn the_scale_lifts_the_largest_part_to_two_to_the_256_and_never_lowers_it() {
        let exponent_of = |top: f64| {
            scaled_copy(
                Mat::<C64>::from_fn(3, 2, |i, j| {
                    C64::new(if (i, j) == (1, 1) { -top } else { 0.0 }, 0.0)
                })
                .as_ref(),
            )
            .1
        };
        assert_eq!(exponent_of(1.0), 256);
        assert_eq!(exponent_of(0.75), 257);
        assert_eq!(exponent_of(2.0_f64.powi(300)), 0);
        assert_eq!(exponent_of(0.0), 0);
        assert_eq!(exponent_of(f64::INFINITY), 0);
        assert_eq!(exponent_of(1e-320), 1022);
    }

    #[test]
    fn an_svd_of_overflowed_values_says_they_overflowed() {
        let a = Mat::<f64>::from_fn(6, 4, |i, j| {
            if (i, j) == (2, 1) {
                f64::INFINITY
            } else {
                (i + j) as f64
            }
        });
        let said = svd(a.as_ref())
            .expect_err("no SVD of infinities")
            .to_string();
        assert!(
            said.contains("overflowed") && said.contains("1 of the 24 entries"),
            "{said}"
        );
    }
}
