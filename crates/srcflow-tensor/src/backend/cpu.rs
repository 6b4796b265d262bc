//! `CpuBackend`: the primitives on host memory, GEMM, QR and SVD by faer, parallel with a rayon
//! pool of its own (each device of a run keeps its own pool; nothing is set globally).

use super::checks;
use super::gathered_gemm::{gathered_gemm, gathers};
use super::primitive_time::{timed, timed_shape, Primitive};
use super::PrimitiveShape;
use super::{matrix_dims, placeable, Backend, DeviceTensor, Gemm, Stream};
use crate::device::{MemoryPool, PoolConfig, SimulatedPool};
use crate::error::{Error, Result};
use crate::pool::{faer_par, in_pool};
use crate::tensor::matrix;
use crate::tensor::{permute_elements, AnyTensor, Array, DType, Scalar, Typed};
use faer::{Accum, Conj, MatMut, MatRef, Par};
use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::Arc;

/// Runs kernels on the CPU with a dedicated thread pool; its "device memory" is host memory.
pub struct CpuBackend {
    pool: rayon::ThreadPool,
}

impl CpuBackend {
    /// A backend with `threads` workers (0: one per core).
    pub fn new(threads: usize) -> Result<Self> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("srcflow-cpu-{i}"))
            .build()
            .map_err(|e| Error::Invalid(format!("cannot start {threads} threads: {e}")))?;
        pool.broadcast(|_| reserve_gemm_workspace());
        Ok(CpuBackend { pool })
    }
}

/// Runs one GEMM just large enough to reach faer's blocked kernel (`private_gemm_x86`), which
/// reserves its packing workspace (twice the L3 cache, address space that is not yet written)
/// in the calling thread's locals on its first call. Each pool thread does so when the pool
/// starts, so what a call holds is the call's, whichever threads its GEMMs happened to run on.
fn reserve_gemm_workspace() {
    const SIDE: usize = 17;
    let a = vec![faer::c64::new(0.0, 0.0); SIDE * SIDE];
    let mut out = vec![faer::c64::new(0.0, 0.0); SIDE * SIDE];
    let lhs = MatRef::from_row_major_slice(&a, SIDE, SIDE);
    let dst = MatMut::from_row_major_slice_mut(&mut out, SIDE, SIDE);
    faer::linalg::matmul::matmul(
        dst,
        Accum::Replace,
        lhs,
        lhs,
        faer::c64::new(1.0, 0.0),
        Par::Seq,
    );
}

/// The elements of `tensor`, which a CPU backend made, as `T`.
fn elements<T: Typed>(tensor: &DeviceTensor) -> Result<&[T]> {
    let host = tensor.memory().downcast_ref::<AnyTensor>().ok_or_else(|| {
        Error::Invalid(format!(
            "the CPU backend was given {tensor:?}, which another backend holds"
        ))
    })?;
    let array = T::unwrap(host).ok_or_else(|| {
        Error::Invalid(format!(
            "{tensor:?} holds {} elements, not {}",
            host.dtype(),
            T::DTYPE
        ))
    })?;
    Ok(array.data())
}

/// The elements of `tensor`, which a CPU backend made and no other handle shares, to write.
fn elements_mut<T: Typed>(tensor: &mut DeviceTensor) -> Result<&mut [T]> {
    let name = format!("{tensor:?}");
    let host = tensor
        .memory_mut()
        .and_then(|m| m.downcast_mut::<AnyTensor>())
        .and_then(T::unwrap_mut)
        .ok_or_else(|| {
            Error::Invalid(format!(
                "the CPU backend cannot write into {name}: another handle shares it, another \
                 backend holds it, or it holds other elements than {}",
                T::DTYPE
            ))
        })?;
    Ok(Arc::make_mut(host).data_mut())
}

/// A CPU tensor of `dims` over `data`.
fn tensor_of<T: Typed>(dims: Vec<usize>, data: Vec<T>) -> Result<DeviceTensor> {
    let host = T::wrap(Array::new(dims.clone(), data)?);
    Ok(DeviceTensor::new(dims, T::DTYPE, Arc::new(host)))
}

/// `m` as a column-major CPU tensor (dimensions `[columns, rows]`).
fn column_major<T: Typed>(m: MatRef<'_, T>) -> Result<DeviceTensor> {
    let data = (0..m.ncols())
        .flat_map(|c| m.col(c).iter().copied())
        .collect();
    tensor_of(vec![m.ncols(), m.nrows()], data)
}

/// Outer size, axis size and inner size of `dims` around `axis`.
fn around(dims: &[usize], axis: usize) -> (usize, usize, usize) {
    let outer = dims[..axis].iter().product();
    let inner = dims[axis + 1..].iter().product();
    (outer, dims[axis], inner)
}

/// GEMMs smaller than this (m·n·k) run one per rayon task, or all on the calling thread when
/// the whole batch is smaller (waking another thread would cost more than the batch); larger
/// ones use all threads each.
const SMALL_GEMM: usize = 64 * 64 * 64;

/// From this size of `m`, `n` and `k` each, a left operand stored transposed is copied into
/// row-major order before the GEMM: faer reads a transposed left operand at about half its
/// row-major rate at such sizes, and the copy costs less than that (256 × 512 × 8192 in
/// complex128 on one thread: 43 GFLOP/s read transposed, 65 with the copy, 86 stored
/// row-major; `cargo bench --bench kernel_shapes -- 1`). Below it the copy can cost more than
/// it saves.
const ROW_MAJOR_LHS_FROM: usize = 256;

/// `out[i] = op(a[i]) · op(c[i])` for every batch index `i` (see [`Gemm`]), with faer's GEMM on
/// the current pool, written into `out` without reading it (faer's `Accum::Replace` never reads
/// its destination): every element of `out` is written, so it may be memory not yet written.
fn batched_gemm<T: Scalar>(gemm: Gemm, a: &[T], b: &[T], out: &mut [MaybeUninit<T>]) {
    let Gemm { batch, m, n, k, .. } = gemm;
    if gemm.transpose_a && m.min(n).min(k) >= ROW_MAJOR_LHS_FROM {
        let row_major = permute_elements(a, &[batch, k, m], &[0, 2, 1]);
        let gemm = Gemm {
            transpose_a: false,
            ..gemm
        };
        return batched_gemm(gemm, &row_major, b, out);
    }
    if m * n == 0 {
        return;
    }
    if k == 0 {
        // Empty operands: no block to pair with each result, whose every element is zero.
        out.fill(MaybeUninit::new(T::zero()));
        return;
    }
    let one_gemm =
        |a: &[T], b: &[T], out: &mut [MaybeUninit<T>], par: Par| one_product(gemm, a, b, out, par);
    let a_blocks = a.chunks(m * k);
    let b_blocks = b.chunks(k * n);
    if batch * m * n * k < SMALL_GEMM {
        out.chunks_mut(m * n)
            .zip(a_blocks)
            .zip(b_blocks)
            .for_each(|((o, a), b)| one_gemm(a, b, o, Par::Seq));
    } else if batch > 1 && m * n * k < SMALL_GEMM && in_pool() {
        out.par_chunks_mut(m * n)
            .zip(a_blocks.collect::<Vec<_>>())
            .zip(b_blocks.collect::<Vec<_>>())
            .for_each(|((o, a), b)| one_gemm(a, b, o, Par::Seq));
    } else {
        let par = faer_par();
        out.chunks_mut(m * n)
            .zip(a_blocks)
            .zip(b_blocks)
            .for_each(|((o, a), b)| one_gemm(a, b, o, par));
    }
}

/// `out = op(a) · op(b)` for one product of `gemm` (its `m × k` and `k × n` operands), with
/// faer's GEMM, written into `out` without reading it (faer's `Accum::Replace` never reads its
/// destination).
pub(super) fn one_product<T: Scalar>(
    gemm: Gemm,
    a: &[T],
    b: &[T],
    out: &mut [MaybeUninit<T>],
    par: Par,
) {
    let Gemm { m, n, k, .. } = gemm;
    let conj = |flag: bool| if flag { Conj::Yes } else { Conj::No };
    let lhs = if gemm.transpose_a {
        MatRef::from_row_major_slice(a, k, m).transpose()
    } else {
        MatRef::from_row_major_slice(a, m, k)
    };
    let rhs = if gemm.transpose_b {
        MatRef::from_row_major_slice(b, n, k).transpose()
    } else {
        MatRef::from_row_major_slice(b, k, n)
    };
    assert_eq!(out.len(), m * n, "one product's result");
    // SAFETY: `out` holds the `m × n` row-major elements this view spans, borrowed mutably for
    // the call; faer writes each of them and reads none (`Accum::Replace`).
    let dst =
        unsafe { MatMut::from_raw_parts_mut(out.as_mut_ptr().cast::<T>(), m, n, n as isize, 1) };
    faer::linalg::matmul::matmul_with_conj(
        dst,
        Accum::Replace,
        lhs,
        conj(gemm.conj_a),
        rhs,
        conj(gemm.conj_b),
        T::one(),
        par,
    );
}

impl CpuBackend {
    /// `gemm`'s product computed by `product` on the pool, timed as a GEMM of its shape.
    fn timed_gemm(
        &self,
        gemm: &Gemm,
        dtype: DType,
        product: impl FnOnce() -> Result<DeviceTensor> + Send,
    ) -> Result<DeviceTensor> {
        let shape = PrimitiveShape::of_gemm(gemm);
        timed_shape(Primitive::Gemm, shape, dtype, || self.pool.install(product))
    }
}

/// A tensor of `dims` holding the `len` elements `write` writes, every one of them, into memory
/// not yet written (an error if `dims` does not hold `len`).
fn written_by<T: Typed>(
    len: usize,
    dims: Vec<usize>,
    write: impl FnOnce(&mut [MaybeUninit<T>]),
) -> Result<DeviceTensor> {
    let mut out = Vec::with_capacity(len);
    write(&mut out.spare_capacity_mut()[..len]);
    // SAFETY: `write` wrote all `len` elements (its contract).
    unsafe { out.set_len(len) };
    tensor_of(dims, out)
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn threads(&self) -> usize {
        self.pool.current_num_threads()
    }

    fn arithmetic(&self) -> String {
        super::instruction_sets::dispatched()
    }

    fn shares_host_memory(&self) -> bool {
        true
    }

    /// Kernels run on the backend's thread pool; copies are shares of host memory and run on
    /// the calling thread. Everything is synchronous, so each task is complete on return.
    fn within(&self, stream: Stream, work: &mut (dyn FnMut() + Send)) {
        match stream {
            Stream::Compute => self.pool.install(work),
            Stream::Upload | Stream::Download | Stream::Peer => work(),
        }
    }

    /// Runs `work` on one of the pool's threads while the calling thread waits for it in
    /// slices of [`crate::WATCH_EVERY`], calling `watch` between them.
    fn within_watched(&self, work: &mut (dyn FnMut() + Send), watch: &mut dyn FnMut()) {
        let (done, finished) = crossbeam_channel::bounded::<()>(1);
        self.pool.in_place_scope(|scope| {
            scope.spawn(move |_| {
                work();
                let _ = done.send(());
            });
            crate::cancel::wait_watching(&finished, watch);
        });
    }

    /// Host memory has no device allocator to front: the simulated caching pool keeps the
    /// device budget as a GPU's caching allocator would, and fragments as one does.
    fn memory_pool(&self, config: PoolConfig) -> Result<Box<dyn MemoryPool>> {
        Ok(Box::new(SimulatedPool::new(config)?))
    }

    /// The CPU's device memory is host memory: the array is shared, not copied.
    fn upload(&self, host: &AnyTensor) -> Result<DeviceTensor> {
        let dims = host.shape().to_vec();
        Ok(DeviceTensor::new(
            dims,
            host.dtype(),
            Arc::new(host.clone()),
        ))
    }

    fn download(&self, tensor: DeviceTensor) -> Result<AnyTensor> {
        let dims = tensor.dims().to_vec();
        let host = tensor.memory().downcast_ref::<AnyTensor>().cloned();
        let host = host
            .ok_or_else(|| Error::Invalid(format!("the CPU backend cannot download {tensor:?}")))?;
        drop(tensor);
        Ok(if host.shape() == dims {
            host
        } else {
            host.reshape(dims)
        })
    }

    fn permute(&self, tensor: &DeviceTensor, perm: &[usize]) -> Result<DeviceTensor> {
        timed(Primitive::Copy, || {
            let dims: Vec<usize> = perm.iter().map(|&p| tensor.dims()[p]).collect();
            self.pool.install(|| {
                for_dtype!(tensor.dtype(), T => {
                    let data = permute_elements(elements::<T>(tensor)?, tensor.dims(), perm);
                    tensor_of(dims, data)
                })
            })
        })
    }

    fn conj(&self, tensor: &DeviceTensor) -> Result<DeviceTensor> {
        timed(Primitive::Copy, || {
            for_dtype!(tensor.dtype(), T => {
                let data = elements::<T>(tensor)?.iter().map(|&z| Scalar::conj(z)).collect();
                tensor_of::<T>(tensor.dims().to_vec(), data)
            })
        })
    }

    fn cast(&self, tensor: &DeviceTensor, dtype: DType) -> Result<DeviceTensor> {
        timed(Primitive::Copy, || {
            if tensor.dtype() == dtype {
                return Ok(tensor.clone());
            }
            for_dtype!(tensor.dtype(), T => {
                let from = elements::<T>(tensor)?;
                for_dtype!(dtype, U => {
                    let data = from.iter().map(|&z| U::from_c64(z.to_c64())).collect();
                    tensor_of::<U>(tensor.dims().to_vec(), data)
                })
            })
        })
    }

    fn batched_gemm(
        &self,
        a: &DeviceTensor,
        b: &DeviceTensor,
        gemm: Gemm,
        dims: Vec<usize>,
    ) -> Result<DeviceTensor> {
        checks::gemm_operands(a, b, &gemm, &dims)?;
        self.timed_gemm(&gemm, a.dtype(), || {
            for_dtype!(a.dtype(), T => {
                let (a, b) = (elements::<T>(a)?, elements::<T>(b)?);
                let len = gemm.batch * gemm.m * gemm.n;
                written_by(len, dims, |out| batched_gemm(gemm, a, b, out))
            })
        })
    }

    /// Gathers `a` a tile of rows at a time where `gathered_gemm::gathers` says so (a short
    /// sum and a small right operand); otherwise copies it into GEMM order first.
    fn batched_gemm_permuted(
        &self,
        a: &DeviceTensor,
        perm: &[usize],
        b: &DeviceTensor,
        gemm: Gemm,
        dims: Vec<usize>,
    ) -> Result<DeviceTensor> {
        checks::axis_order(a, perm)?;
        if !gathers(&gemm) || gemm.batch * gemm.m * gemm.n == 0 || gemm.k == 0 {
            return self.batched_gemm(&self.permute(a, perm)?, b, gemm, dims);
        }
        checks::gemm_operands(a, b, &gemm, &dims)?;
        self.timed_gemm(&gemm, a.dtype(), || {
            for_dtype!(a.dtype(), T => {
                let (elements_a, b) = (elements::<T>(a)?, elements::<T>(b)?);
                let (len, dims_a) = (gemm.batch * gemm.m * gemm.n, a.dims());
                written_by(len, dims, |out| gathered_gemm(gemm, elements_a, dims_a, perm, b, out))
            })
        })
    }

    fn thin_qr(&self, a: &DeviceTensor) -> Result<(DeviceTensor, DeviceTensor)> {
        let (rows, cols) = matrix_dims(a)?;
        let shape = PrimitiveShape::Qr { rows, cols };
        timed_shape(Primitive::Factorization, shape, a.dtype(), || {
            self.pool.install(|| {
                for_dtype!(a.dtype(), T => {
                    let view = MatRef::from_column_major_slice(elements::<T>(a)?, rows, cols);
                    let qr = matrix::thin_qr(view);
                    Ok((
                        tensor_of(vec![qr.rank, rows], qr.q)?,
                        tensor_of(vec![cols, qr.rank], qr.r)?,
                    ))
                })
            })
        })
    }

    fn thin_svd(&self, a: &DeviceTensor) -> Result<(DeviceTensor, Vec<f64>, DeviceTensor)> {
        let (rows, cols) = matrix_dims(a)?;
        let shape = PrimitiveShape::Svd { rows, cols };
        timed_shape(Primitive::Factorization, shape, a.dtype(), || {
            self.pool.install(|| {
                for_dtype!(a.dtype(), T => {
                    let view = MatRef::from_column_major_slice(elements::<T>(a)?, rows, cols);
                    let (u, s, v) = matrix::svd(view)?;
                    let vh = faer::Mat::from_fn(s.len(), cols, |i, j| Scalar::conj(v[(j, i)]));
                    Ok((column_major(u.as_ref())?, s, column_major(vh.as_ref())?))
                })
            })
        })
    }

    fn scale(&self, tensor: &DeviceTensor, axis: usize, factors: &[f64]) -> Result<DeviceTensor> {
        checks::scale_factors(tensor, axis, factors)?;
        timed(Primitive::Copy, || {
            let (_, size, inner) = around(tensor.dims(), axis);
            for_dtype!(tensor.dtype(), T => {
                let data = elements::<T>(tensor)?
                    .iter()
                    .enumerate()
                    .map(|(i, &z)| z * T::from_c64(factors[(i / inner) % size].into()))
                    .collect();
                tensor_of::<T>(tensor.dims().to_vec(), data)
            })
        })
    }

    fn slice(
        &self,
        tensor: &DeviceTensor,
        axis: usize,
        range: Range<usize>,
    ) -> Result<DeviceTensor> {
        timed(Primitive::Copy, || {
            let (outer, size, inner) = around(tensor.dims(), axis);
            let mut dims = tensor.dims().to_vec();
            dims[axis] = range.len();
            for_dtype!(tensor.dtype(), T => {
                let from = elements::<T>(tensor)?;
                let data = (0..outer)
                    .flat_map(|o| {
                        let start = (o * size + range.start) * inner;
                        from[start..start + range.len() * inner].iter().copied()
                    })
                    .collect();
                tensor_of::<T>(dims, data)
            })
        })
    }

    fn join(&self, parts: &[DeviceTensor], axis: usize) -> Result<DeviceTensor> {
        timed(Primitive::Copy, || {
            let first = parts
                .first()
                .ok_or_else(|| Error::Invalid("nothing to join".into()))?;
            let (outer, _, inner) = around(first.dims(), axis);
            let mut dims = first.dims().to_vec();
            dims[axis] = parts.iter().map(|p| p.dims()[axis]).sum();
            for_dtype!(first.dtype(), T => {
                let sources = parts
                    .iter()
                    .map(|p| Ok((elements::<T>(p)?, p.dims()[axis] * inner)))
                    .collect::<Result<Vec<_>>>()?;
                let mut data = Vec::with_capacity(dims.iter().product());
                for o in 0..outer {
                    for (from, run) in &sources {
                        data.extend_from_slice(&from[o * run..(o + 1) * run]);
                    }
                }
                tensor_of::<T>(dims, data)
            })
        })
    }

    fn zeros(&self, dims: Vec<usize>, dtype: DType) -> Result<DeviceTensor> {
        timed(Primitive::Copy, || {
            self.upload(&AnyTensor::zeros(dtype, dims))
        })
    }

    fn place(
        &self,
        whole: &mut DeviceTensor,
        axis: usize,
        start: usize,
        part: &DeviceTensor,
    ) -> Result<()> {
        timed(Primitive::Copy, || {
            placeable(whole, axis, start, part)?;
            let (w, p) = (whole.dims(), part.dims());
            let (outer, size, inner) = around(w, axis);
            let run = p[axis] * inner;
            for_dtype!(whole.dtype(), T => {
                let from = elements::<T>(part)?;
                let to = elements_mut::<T>(whole)?;
                for o in 0..outer {
                    let at = (o * size + start) * inner;
                    to[at..at + run].copy_from_slice(&from[o * run..(o + 1) * run]);
                }
                Ok(())
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_run_on_the_backends_own_pool_and_copies_on_the_caller() {
        let backend = CpuBackend::new(3).unwrap();
        let mut threads = 0;
        backend.within(Stream::Compute, &mut || {
            threads = rayon::current_num_threads()
        });
        assert_eq!(threads, 3);
        let mut pool_thread = Some(0);
        backend.within(Stream::Upload, &mut || {
            pool_thread = rayon::current_thread_index()
        });
        assert_eq!(pool_thread, None, "a copy runs on the calling thread");
    }

    #[test]
    fn a_product_over_an_empty_sum_is_written_as_zeros() {
        let backend = CpuBackend::new(2).unwrap();
        let empty = |dims: Vec<usize>| {
            backend
                .upload(&AnyTensor::zeros(DType::Complex128, dims))
                .unwrap()
        };
        let (a, b) = (empty(vec![3, 4, 0]), empty(vec![3, 0, 5]));
        let out = backend
            .batched_gemm(&a, &b, Gemm::new(3, 4, 5, 0), vec![3, 4, 5])
            .unwrap();
        let out = backend.download(out).unwrap().to_c64();
        assert_eq!(out.shape(), &[3, 4, 5]);
        assert!(out
            .data()
            .iter()
            .all(|z| *z == crate::tensor::C64::new(0.0, 0.0)));
    }
}
