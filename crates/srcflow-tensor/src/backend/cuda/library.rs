//! `CudaScalar`: the cuBLAS and cuSOLVER routines of each element type, behind one interface.

use crate::tensor::Typed;
use cudarc::cublas::sys as blas;
use cudarc::cusolver::sys as solver;

/// A device address, as the library routines take it.
pub(crate) type Address = u64;

/// An element type with its cuBLAS GEMM and cuSOLVER QR and SVD routines (device addresses of
/// matrices in column-major order, as the libraries take them).
///
/// # Safety
/// Every address must point to device memory of the context bound to the calling thread, large
/// enough for the sizes given.
pub(crate) trait CudaScalar: Typed {
    /// The real type of its singular values.
    type SingularValue: Typed;

    /// `cublas?gemmStridedBatched_64`, with α = 1 and β = 0.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm_strided_batched(
        handle: blas::cublasHandle_t,
        ops: (blas::cublasOperation_t, blas::cublasOperation_t),
        mnk: (i64, i64, i64),
        a: (Address, i64, i64),
        b: (Address, i64, i64),
        c: (Address, i64, i64),
        batch: i64,
    ) -> blas::cublasStatus_t;
    /// `cusolverDn?geqrf_bufferSize`.
    unsafe fn geqrf_work(
        h: solver::cusolverDnHandle_t,
        m: i32,
        n: i32,
        a: Address,
        work: &mut i32,
    ) -> solver::cusolverStatus_t;
    /// `cusolverDn?geqrf`: Householder QR in place; `tau` of `min(m, n)`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn geqrf(
        h: solver::cusolverDnHandle_t,
        m: i32,
        n: i32,
        a: Address,
        tau: Address,
        work: Address,
        lwork: i32,
        info: Address,
    ) -> solver::cusolverStatus_t;
    /// `cusolverDn?orgqr_bufferSize` (`?ungqr` for complex types).
    #[allow(clippy::too_many_arguments)]
    unsafe fn orgqr_work(
        h: solver::cusolverDnHandle_t,
        m: i32,
        n: i32,
        k: i32,
        a: Address,
        tau: Address,
        work: &mut i32,
    ) -> solver::cusolverStatus_t;
    /// `cusolverDn?orgqr` (`?ungqr`): the first `n` columns of Q in place of the reflectors.
    #[allow(clippy::too_many_arguments)]
    unsafe fn orgqr(
        h: solver::cusolverDnHandle_t,
        m: i32,
        n: i32,
        k: i32,
        a: Address,
        tau: Address,
        work: Address,
        lwork: i32,
        info: Address,
    ) -> solver::cusolverStatus_t;
    /// `cusolverDn?gesvd_bufferSize`.
    unsafe fn gesvd_work(
        h: solver::cusolverDnHandle_t,
        m: i32,
        n: i32,
        work: &mut i32,
    ) -> solver::cusolverStatus_t;
    /// `cusolverDn?gesvd` with thin U and Vᴴ (`jobu = jobvt = 'S'`), for `m ≥ n`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn gesvd(
        h: solver::cusolverDnHandle_t,
        m: i32,
        n: i32,
        a: Address,
        s: Address,
        u: Address,
        vt: Address,
        work: Address,
        lwork: i32,
        rwork: Address,
        info: Address,
    ) -> solver::cusolverStatus_t;
}

/// Implements [`CudaScalar`] for `$t` with the routines named.
macro_rules! cuda_scalar {
    ($t:ty, $real:ty, $blas_t:ty, $solver_t:ty, $gemm:ident, $geqrf_work:ident, $geqrf:ident,
     $orgqr_work:ident, $orgqr:ident, $gesvd_work:ident, $gesvd:ident) => {
        impl CudaScalar for $t {
            type SingularValue = $real;

            unsafe fn gemm_strided_batched(
                handle: blas::cublasHandle_t,
                ops: (blas::cublasOperation_t, blas::cublasOperation_t),
                mnk: (i64, i64, i64),
                a: (Address, i64, i64),
                b: (Address, i64, i64),
                c: (Address, i64, i64),
                batch: i64,
            ) -> blas::cublasStatus_t {
                let one = <$t as crate::tensor::Scalar>::one();
                let zero = <$t as crate::tensor::Scalar>::zero();
                let alpha = &one as *const $t as *const $blas_t;
                let beta = &zero as *const $t as *const $blas_t;
                blas::$gemm(
                    handle,
                    ops.0,
                    ops.1,
                    mnk.0,
                    mnk.1,
                    mnk.2,
                    alpha,
                    a.0 as *const $blas_t,
                    a.1,
                    a.2,
                    b.0 as *const $blas_t,
                    b.1,
                    b.2,
                    beta,
                    c.0 as *mut $blas_t,
                    c.1,
                    c.2,
                    batch,
                )
            }

            unsafe fn geqrf_work(
                h: solver::cusolverDnHandle_t,
                m: i32,
                n: i32,
                a: Address,
                work: &mut i32,
            ) -> solver::cusolverStatus_t {
                solver::$geqrf_work(h, m, n, a as *mut $solver_t, m, work)
            }

            unsafe fn geqrf(
                h: solver::cusolverDnHandle_t,
                m: i32,
                n: i32,
                a: Address,
                tau: Address,
                work: Address,
                lwork: i32,
                info: Address,
            ) -> solver::cusolverStatus_t {
                solver::$geqrf(
                    h,
                    m,
                    n,
                    a as *mut $solver_t,
                    m,
                    tau as *mut $solver_t,
                    work as *mut $solver_t,
                    lwork,
                    info as *mut i32,
                )
            }

            unsafe fn orgqr_work(
                h: solver::cusolverDnHandle_t,
                m: i32,
                n: i32,
                k: i32,
                a: Address,
                tau: Address,
                work: &mut i32,
            ) -> solver::cusolverStatus_t {
                solver::$orgqr_work(
                    h,
                    m,
                    n,
                    k,
                    a as *const $solver_t,
                    m,
                    tau as *const $solver_t,
                    work,
                )
            }

            unsafe fn orgqr(
                h: solver::cusolverDnHandle_t,
                m: i32,
                n: i32,
                k: i32,
                a: Address,
                tau: Address,
                work: Address,
                lwork: i32,
                info: Address,
            ) -> solver::cusolverStatus_t {
                solver::$orgqr(
                    h,
                    m,
                    n,
                    k,
                    a as *mut $solver_t,
                    m,
                    tau as *const $solver_t,
                    work as *mut $solver_t,
                    lwork,
                    info as *mut i32,
                )
            }

            unsafe fn gesvd_work(
                h: solver::cusolverDnHandle_t,
                m: i32,
                n: i32,
                work: &mut i32,
            ) -> solver::cusolverStatus_t {
                solver::$gesvd_work(h, m, n, work)
            }

            unsafe fn gesvd(
                h: solver::cusolverDnHandle_t,
                m: i32,
                n: i32,
                a: Address,
                s: Address,
                u: Address,
                vt: Address,
                work: Address,
                lwork: i32,
                rwork: Address,
                info: Address,
            ) -> solver::cusolverStatus_t {
                let thin = b'S' as core::ffi::c_schar;
                let k = m.min(n);
                solver::$gesvd(
                    h,
                    thin,
                    thin,
                    m,
                    n,
                    a as *mut $solver_t,
                    m,
                    s as *mut $real,
                    u as *mut $solver_t,
                    m,
                    vt as *mut $solver_t,
                    k,
                    work as *mut $solver_t,
                    lwork,
                    rwork as *mut $real,
                    info as *mut i32,
                )
            }
        }
    };
}

cuda_scalar!(
    f32,
    f32,
    f32,
    f32,
    cublasSgemmStridedBatched_64,
    cusolverDnSgeqrf_bufferSize,
    cusolverDnSgeqrf,
    cusolverDnSorgqr_bufferSize,
    cusolverDnSorgqr,
    cusolverDnSgesvd_bufferSize,
    cusolverDnSgesvd
);
cuda_scalar!(
    f64,
    f64,
    f64,
    f64,
    cublasDgemmStridedBatched_64,
    cusolverDnDgeqrf_bufferSize,
    cusolverDnDgeqrf,
    cusolverDnDorgqr_bufferSize,
    cusolverDnDorgqr,
    cusolverDnDgesvd_bufferSize,
    cusolverDnDgesvd
);
cuda_scalar!(
    num_complex::Complex32,
    f32,
    blas::cuComplex,
    solver::cuComplex,
    cublasCgemmStridedBatched_64,
    cusolverDnCgeqrf_bufferSize,
    cusolverDnCgeqrf,
    cusolverDnCungqr_bufferSize,
    cusolverDnCungqr,
    cusolverDnCgesvd_bufferSize,
    cusolverDnCgesvd
);
cuda_scalar!(
    num_complex::Complex64,
    f64,
    blas::cuDoubleComplex,
    solver::cuDoubleComplex,
    cublasZgemmStridedBatched_64,
    cusolverDnZgeqrf_bufferSize,
    cusolverDnZgeqrf,
    cusolverDnZungqr_bufferSize,
    cusolverDnZungqr,
    cusolverDnZgesvd_bufferSize,
    cusolverDnZgesvd
);
