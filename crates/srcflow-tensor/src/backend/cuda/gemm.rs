//! The CUDA backend's batched GEMM: cuBLAS strided-batched products of row-major operands.

use super::library::CudaScalar;
use super::memory::{buffer, synchronize, tensor_over, DeviceBuffer};
use super::{cuda_error, CudaBackend};
use crate::backend::{checks, Backend, DeviceTensor, Gemm};
use crate::error::Result;
use cudarc::cublas::sys::{cublasOperation_t, cublasStatus_t};

/// How cuBLAS reads an operand: as stored (`N`), transposed (`T`) or conjugate-transposed (`C`).
fn operation(transposed: bool, conjugated: bool) -> cublasOperation_t {
    match (transposed, conjugated) {
        (false, _) => cublasOperation_t::CUBLAS_OP_N,
        (true, false) => cublasOperation_t::CUBLAS_OP_T,
        (true, true) => cublasOperation_t::CUBLAS_OP_C,
    }
}

impl CudaBackend {
    /// [`Backend::batched_gemm`](crate::backend::Backend::batched_gemm).
    ///
    /// A row-major `m × n` product is the column-major `n × m` product `op(b)ᵀ · op(a)ᵀ`, so
    /// cuBLAS is called with the operands swapped and no copy. cuBLAS conjugates only together
    /// with a transpose: an operand to conjugate that is read as stored is conjugated in a copy.
    pub(super) fn product(
        &self,
        a: &DeviceTensor,
        b: &DeviceTensor,
        gemm: Gemm,
        dims: Vec<usize>,
    ) -> Result<DeviceTensor> {
        checks::gemm_operands(a, b, &gemm, &dims)?;
        let Gemm { batch, m, n, k, .. } = gemm;
        if batch * m * n * k == 0 {
            return Backend::zeros(self, dims, a.dtype());
        }
        let complex = a.dtype().is_complex();
        let conjugated_a = (complex && gemm.conj_a && !gemm.transpose_a)
            .then(|| self.conjugated(a))
            .transpose()?;
        let conjugated_b = (complex && gemm.conj_b && !gemm.transpose_b)
            .then(|| self.conjugated(b))
            .transpose()?;
        let gemm = Gemm {
            conj_a: gemm.conj_a && gemm.transpose_a,
            conj_b: gemm.conj_b && gemm.transpose_b,
            ..gemm
        };
        let (a, b) = (
            conjugated_a.as_ref().unwrap_or(a),
            conjugated_b.as_ref().unwrap_or(b),
        );
        for_dtype!(a.dtype(), T => self.strided_batched::<T>(a, b, gemm, dims))
    }

    /// `cublas?gemmStridedBatched` of `gemm` (its conjugations only on transposed operands).
    fn strided_batched<T: CudaScalar>(
        &self,
        a: &DeviceTensor,
        b: &DeviceTensor,
        gemm: Gemm,
        dims: Vec<usize>,
    ) -> Result<DeviceTensor> {
        let Gemm { batch, m, n, k, .. } = gemm;
        let stream = self.stream();
        let mut out = DeviceBuffer::uninit(stream, batch * m * n, a.dtype())?;
        let (a_address, b_address) = (
            buffer(a, stream)?.address(stream),
            buffer(b, stream)?.address(stream),
        );
        let c_address = out.address_mut(stream);
        let lead_a = if gemm.transpose_a { m } else { k };
        let lead_b = if gemm.transpose_b { k } else { n };
        let blas = self.blas()?;
        let wide = |x: usize| x as i64;
        // SAFETY: the sizes checked in `product` bound every read and write.
        let status = unsafe {
            T::gemm_strided_batched(
                *blas.handle(),
                (
                    operation(gemm.transpose_b, gemm.conj_b),
                    operation(gemm.transpose_a, gemm.conj_a),
                ),
                (wide(n), wide(m), wide(k)),
                (b_address, wide(lead_b), wide(k * n)),
                (a_address, wide(lead_a), wide(m * k)),
                (c_address, wide(n), wide(m * n)),
                wide(batch),
            )
        };
        drop(blas);
        if status != cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            return Err(cuda_error("cublas?gemmStridedBatched", status));
        }
        synchronize(stream)?;
        Ok(tensor_over(dims, a.dtype(), out))
    }
}
