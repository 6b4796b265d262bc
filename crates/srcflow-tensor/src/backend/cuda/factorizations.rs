//! The CUDA backend's factorizations: thin QR by cuSOLVER's `geqrf` and `orgqr`/`ungqr`, thin
//! SVD by `gesvd` (on the adjoint of a wide matrix, which `gesvd` does not take).

use super::library::{Address, CudaScalar};
use super::loaded_kernels::covering;
use super::memory::{buffer_mut, download, synchronize, tensor_over, DeviceBuffer};
use super::{cuda_error, kernels, CudaBackend};
use crate::backend::{Backend, DeviceTensor};
use crate::error::{Error, Result};
use crate::tensor::{Scalar, Typed};
use cudarc::cusolver::sys::cusolverStatus_t;
use cudarc::driver::PushKernelArg;

/// Rows and columns of `tensor` as a column-major matrix ([`crate::backend::matrix_dims`]),
/// each within the 32-bit sizes cuSOLVER takes.
fn matrix_dims(tensor: &DeviceTensor) -> Result<(usize, usize)> {
    let (rows, cols) = crate::backend::matrix_dims(tensor)?;
    if rows.max(cols) > i32::MAX as usize {
        return Err(Error::Invalid(format!(
            "cuSOLVER factors matrices of at most 2³¹ rows and columns, found {rows} × {cols}"
        )));
    }
    Ok((rows, cols))
}

/// An error unless cuSOLVER's routine `call` returned success.
fn succeeded(call: &str, status: cusolverStatus_t) -> Result<()> {
    if status == cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(cuda_error(call, status))
    }
}

impl CudaBackend {
    /// [`Backend::thin_qr`](crate::backend::Backend::thin_qr).
    pub(super) fn qr(&self, a: &DeviceTensor) -> Result<(DeviceTensor, DeviceTensor)> {
        let (rows, cols) = matrix_dims(a)?;
        for_dtype!(a.dtype(), T => self.householder_qr::<T>(a, rows, cols))
    }

    /// [`Backend::thin_svd`](crate::backend::Backend::thin_svd).
    pub(super) fn svd(&self, a: &DeviceTensor) -> Result<(DeviceTensor, Vec<f64>, DeviceTensor)> {
        let (rows, cols) = matrix_dims(a)?;
        if rows >= cols {
            return for_dtype!(a.dtype(), T => self.tall_svd::<T>(a, rows, cols));
        }
        // A = (Aᴴ)ᴴ = (U′ S V′ᴴ)ᴴ = V′ S U′ᴴ.
        let adjoint = self.adjoint(a)?;
        let (u, singular, vh) =
            for_dtype!(a.dtype(), T => self.tall_svd::<T>(&adjoint, cols, rows))?;
        let u_of_a = self.adjoint(&vh)?;
        let vh_of_a = self.adjoint(&u)?;
        Ok((u_of_a, singular, vh_of_a))
    }

    /// The conjugate transpose of the column-major matrix `a` (the transpose alone for a real
    /// type).
    fn adjoint(&self, a: &DeviceTensor) -> Result<DeviceTensor> {
        let transposed = self.permuted(a, &[1, 0])?;
        if a.dtype().is_complex() {
            self.conjugated(&transposed)
        } else {
            Ok(transposed)
        }
    }

    /// Room for `len` elements of `T` on the calling thread's stream.
    fn room<T: Typed>(&self, len: usize) -> Result<DeviceBuffer> {
        DeviceBuffer::uninit(self.stream(), len, T::DTYPE)
    }

    /// A copy of `a` to factor in place, and its device address.
    fn workspace(&self, a: &DeviceTensor) -> Result<(DeviceTensor, Address)> {
        let mut copy = self.permuted(a, &[0, 1])?;
        let address = buffer_mut(&mut copy, self.stream())?.address_mut(self.stream());
        Ok((copy, address))
    }

    /// An error unless the `info` a cuSOLVER routine wrote is 0.
    fn info_is_zero(&self, call: &str, info: &DeviceBuffer) -> Result<()> {
        match info.read_i32(self.stream())? {
            0 => Ok(()),
            i if i > 0 => Err(Error::Numeric(format!(
                "{call} did not converge (info {i})"
            ))),
            i => Err(cuda_error(call, format!("argument {} is invalid", -i))),
        }
    }

    /// Q `[r, m]` and R `[n, r]` of the column-major `m × n` matrix `a`, `r = min(m, n)`.
    fn householder_qr<T: CudaScalar>(
        &self,
        a: &DeviceTensor,
        m: usize,
        n: usize,
    ) -> Result<(DeviceTensor, DeviceTensor)> {
        let r = m.min(n);
        if r == 0 {
            return Ok((
                self.zeros(vec![0, m], T::DTYPE)?,
                self.zeros(vec![n, 0], T::DTYPE)?,
            ));
        }
        let stream = self.stream();
        let (factors, at) = self.workspace(a)?;
        let mut tau = self.room::<T>(r.max(1))?;
        let mut info = DeviceBuffer::raw(stream, 4)?;
        let (tau_at, info_at) = (tau.address_mut(stream), info.address_mut(stream));
        let (mi, ni, ri) = (m as i32, n as i32, r as i32);
        let solver = self.solver()?;
        let handle = solver.cu();
        let mut lwork = 0;
        // SAFETY: `factors` holds the m × n matrix, `tau` r entries, `info` one i32.
        unsafe {
            succeeded(
                "geqrf_bufferSize",
                T::geqrf_work(handle, mi, ni, at, &mut lwork),
            )?;
            let mut work = self.room::<T>(lwork.max(1) as usize)?;
            let work_at = work.address_mut(stream);
            succeeded(
                "geqrf",
                T::geqrf(handle, mi, ni, at, tau_at, work_at, lwork, info_at),
            )?;
        }
        drop(solver);
        self.info_is_zero("geqrf", &info)?;
        let r_factor = self.upper_triangle::<T>(&factors, r, n, m)?;
        let solver = self.solver()?;
        let handle = solver.cu();
        // SAFETY: as above; orgqr overwrites the first r columns with Q.
        unsafe {
            succeeded(
                "orgqr_bufferSize",
                T::orgqr_work(handle, mi, ri, ri, at, tau_at, &mut lwork),
            )?;
            let mut work = self.room::<T>(lwork.max(1) as usize)?;
            let work_at = work.address_mut(stream);
            succeeded(
                "orgqr",
                T::orgqr(handle, mi, ri, ri, at, tau_at, work_at, lwork, info_at),
            )?;
        }
        drop(solver);
        self.info_is_zero("orgqr", &info)?;
        let q = if r == n {
            factors
        } else {
            self.sliced(&factors, 0, 0..r)?
        };
        Ok((q, r_factor))
    }

    /// The upper triangle of the top `rows` rows of `factors` (`cols` columns, leading
    /// dimension `lead`), as a column-major tensor `[cols, rows]`.
    fn upper_triangle<T: CudaScalar>(
        &self,
        factors: &DeviceTensor,
        rows: usize,
        cols: usize,
        lead: usize,
    ) -> Result<DeviceTensor> {
        let stream = self.stream();
        let mut out = self.room::<T>(rows * cols)?;
        if rows * cols > 0 {
            let input = super::memory::buffer(factors, stream)?.address(stream);
            let output = out.address_mut(stream);
            let (rows_i, cols_i, lead_i) = (rows as i64, cols as i64, lead as i64);
            let function = self.kernels.get(&kernels::upper(T::DTYPE))?;
            let mut launch = stream.launch_builder(function);
            launch
                .arg(&input)
                .arg(&output)
                .arg(&rows_i)
                .arg(&cols_i)
                .arg(&lead_i);
            // SAFETY: reads rows × cols entries within `factors`, writes as many of `out`.
            unsafe { launch.launch(covering(rows * cols)) }.map_err(|e| cuda_error("upper", e))?;
        }
        synchronize(stream)?;
        Ok(tensor_over(vec![cols, rows], T::DTYPE, out))
    }

    /// U `[n, m]`, the singular values and Vᴴ `[n, n]` of the column-major `m × n` matrix `a`,
    /// `m ≥ n`.
    fn tall_svd<T: CudaScalar>(
        &self,
        a: &DeviceTensor,
        m: usize,
        n: usize,
    ) -> Result<(DeviceTensor, Vec<f64>, DeviceTensor)> {
        if n == 0 {
            let none = self.zeros(vec![0, m], T::DTYPE)?;
            return Ok((none, Vec::new(), self.zeros(vec![0, 0], T::DTYPE)?));
        }
        let stream = self.stream();
        let (_factors, at) = self.workspace(a)?;
        let mut singular = self.room::<T::SingularValue>(n.max(1))?;
        let mut rwork = self.room::<T::SingularValue>(n.max(1))?;
        let (mut u, mut vt) = (self.room::<T>(m * n)?, self.room::<T>(n * n)?);
        let mut info = DeviceBuffer::raw(stream, 4)?;
        let addresses = (
            singular.address_mut(stream),
            u.address_mut(stream),
            vt.address_mut(stream),
            rwork.address_mut(stream),
            info.address_mut(stream),
        );
        let (s_at, u_at, vt_at, rwork_at, info_at) = addresses;
        let (mi, ni) = (m as i32, n as i32);
        let solver = self.solver()?;
        let handle = solver.cu();
        let mut lwork = 0;
        // SAFETY: every buffer holds what gesvd writes for an m × n matrix, m ≥ n.
        unsafe {
            succeeded(
                "gesvd_bufferSize",
                T::gesvd_work(handle, mi, ni, &mut lwork),
            )?;
            let mut work = self.room::<T>(lwork.max(1) as usize)?;
            let work_at = work.address_mut(stream);
            let status = T::gesvd(
                handle, mi, ni, at, s_at, u_at, vt_at, work_at, lwork, rwork_at, info_at,
            );
            succeeded("gesvd", status)?;
        }
        drop(solver);
        self.info_is_zero("gesvd", &info)?;
        let singular = tensor_over(vec![n], <T::SingularValue as Scalar>::DTYPE, singular);
        let values = download(stream, &singular)?;
        let values = for_dtype!(values.dtype(), R => R::unwrap(&values)
            .expect("the dtype matched")
            .data()
            .iter()
            .map(|x| x.to_c64().re)
            .collect());
        Ok((
            tensor_over(vec![n, m], T::DTYPE, u),
            values,
            tensor_over(vec![n, n], T::DTYPE, vt),
        ))
    }
}
