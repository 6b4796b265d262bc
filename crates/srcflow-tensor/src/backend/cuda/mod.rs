//! The CUDA backend: kernels of this crate's `kernels/` folder compiled by NVRTC, GEMMs by
//! cuBLAS, factorizations by cuSOLVER, all loaded at run time through cudarc, so srcflow builds
//! and runs everywhere and asks for a GPU only when a run does.
//!
//! Each primitive is issued on the stream of the lane that runs it ([`Backend::within`]) and
//! waits for it before returning, so a value is complete whenever another lane can see it.

mod copies;
mod driver_pool;
mod factorizations;
mod gemm;
mod kernel_cache;
pub(crate) mod kernels;
mod library;
mod loaded_kernels;
mod memory;
mod strided;

use super::primitive_time::{timed, timed_shape, Primitive};
use super::{matrix_dims, Backend, DeviceTensor, Gemm, PrimitiveShape, Stream};
use crate::device::{MemoryPool, PoolConfig};
use crate::error::{Error, Result};
use crate::tensor::{AnyTensor, DType};
use cudarc::cublas::CudaBlas;
use cudarc::cusolver::DnHandle;
use cudarc::driver::{CudaContext, CudaStream};
use loaded_kernels::LoadedKernels;
use std::cell::Cell;
use std::fmt::Debug;
use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard};

thread_local! {
    /// The stream the calling thread issues on: set by [`Backend::within`], compute otherwise.
    static CURRENT_STREAM: Cell<Stream> = const { Cell::new(Stream::Compute) };
}

/// Puts back the calling thread's stream when dropped, even by a panic.
struct StreamRestored(Stream);

impl Drop for StreamRestored {
    fn drop(&mut self) {
        CURRENT_STREAM.set(self.0);
    }
}

/// The error of the CUDA call `call` that said `error`.
pub(crate) fn cuda_error(call: &str, error: impl Debug) -> Error {
    Error::Cuda(format!("{call} failed: {error:?}"))
}

/// Device memory the pool leaves to what the governor does not count: cuBLAS's and cuSOLVER's
/// workspaces and the temporaries of a factorization.
const LIBRARY_HEADROOM: u64 = 1 << 30;

/// One CUDA device: its context, a stream per kind of lane, its kernels and library handles.
pub struct CudaBackend {
    ordinal: usize,
    context: Arc<CudaContext>,
    streams: [Arc<CudaStream>; 4],
    kernels: LoadedKernels,
    blas: Mutex<CudaBlas>,
    solver: Mutex<DnHandle>,
}

/// Index of `stream` in [`CudaBackend::streams`].
fn slot(stream: Stream) -> usize {
    match stream {
        Stream::Compute => 0,
        Stream::Upload => 1,
        Stream::Download => 2,
        Stream::Peer => 3,
    }
}

/// An error naming the first library of CUDA's that cannot be loaded here, or that is older
/// than CUDA 12 (whose cuBLAS lacks the 64-bit GEMMs this backend calls).
fn libraries_present() -> Result<()> {
    let missing = |what: &str| {
        Error::Unavailable(format!(
            "the CUDA backend needs {what}, which is not on this machine's library path"
        ))
    };
    // SAFETY: each check loads a shared library by name; CUDA's initialisers are benign.
    unsafe {
        if !cudarc::driver::sys::is_culib_present() {
            return Err(missing("the CUDA driver (libcuda.so.1)"));
        }
        if !cudarc::cublas::sys::is_culib_present() {
            return Err(missing("cuBLAS 12 or later (libcublas.so)"));
        }
        let gemm_64 = cudarc::cublas::sys::culib()
            .get::<unsafe extern "C" fn()>(b"cublasZgemmStridedBatched_64\0")
            .is_ok();
        if !gemm_64 {
            return Err(missing(
                "cuBLAS 12 or later (the one found lacks the 64-bit GEMMs)",
            ));
        }
        if !cudarc::cusolver::sys::is_culib_present() {
            return Err(missing("cuSOLVER (libcusolver.so)"));
        }
    }
    kernels::nvrtc_present()
}

impl CudaBackend {
    /// The backend of CUDA device `ordinal`: an error naming what is missing where the machine
    /// has no CUDA driver or libraries, or no such device.
    pub fn new(ordinal: usize) -> Result<Self> {
        libraries_present()?;
        let count = CudaContext::device_count().map_err(|e| cuda_error("cuDeviceGetCount", e))?;
        if ordinal >= count.max(0) as usize {
            return Err(Error::Unavailable(format!(
                "CUDA device {ordinal} asked for; this machine has {count}"
            )));
        }
        let context = CudaContext::new(ordinal).map_err(|e| cuda_error("cuCtxCreate", e))?;
        // SAFETY: no slice exists yet; every primitive waits for its stream before returning,
        // so cudarc's per-slice events are not needed.
        unsafe { context.disable_event_tracking() };
        let new_stream = || {
            context
                .new_stream()
                .map_err(|e| cuda_error("cuStreamCreate", e))
        };
        let streams = [new_stream()?, new_stream()?, new_stream()?, new_stream()?];
        let compute = streams[slot(Stream::Compute)].clone();
        Ok(CudaBackend {
            ordinal,
            kernels: LoadedKernels::load(&context)?,
            blas: Mutex::new(
                CudaBlas::new(compute.clone()).map_err(|e| cuda_error("cublasCreate", e))?,
            ),
            solver: Mutex::new(
                DnHandle::new(compute).map_err(|e| cuda_error("cusolverDnCreate", e))?,
            ),
            context,
            streams,
        })
    }

    /// The number of CUDA devices this backend can run on here: 0 without a driver or without
    /// the libraries it needs.
    pub fn device_count() -> usize {
        if libraries_present().is_err() {
            return 0;
        }
        CudaContext::device_count().map_or(0, |n| n.max(0) as usize)
    }

    /// Makes the device's context current on the calling thread (libraries issue into it).
    fn bind(&self) -> Result<()> {
        self.context
            .bind_to_thread()
            .map_err(|e| cuda_error("cuCtxSetCurrent", e))
    }

    /// The stream the calling thread issues on.
    fn stream(&self) -> &Arc<CudaStream> {
        &self.streams[slot(CURRENT_STREAM.get())]
    }

    /// The cuBLAS handle, issuing on the calling thread's stream.
    fn blas(&self) -> Result<MutexGuard<'_, CudaBlas>> {
        self.bind()?;
        let mut blas = self.blas.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: every primitive waits for its stream, so no two streams share memory in flight.
        unsafe { blas.set_stream(self.stream().clone()) }
            .map_err(|e| cuda_error("cublasSetStream", e))?;
        Ok(blas)
    }

    /// The cuSOLVER handle, issuing on the calling thread's stream.
    fn solver(&self) -> Result<MutexGuard<'_, DnHandle>> {
        self.bind()?;
        let mut solver = self.solver.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: as in `blas`.
        unsafe { solver.set_stream(self.stream().clone()) }
            .map_err(|e| cuda_error("cusolverDnSetStream", e))?;
        Ok(solver)
    }
}

impl Drop for CudaBackend {
    /// The library handles are destroyed in the device's context, whichever thread drops it.
    fn drop(&mut self) {
        let _ = self.bind();
    }
}

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn threads(&self) -> usize {
        1
    }

    fn arithmetic(&self) -> String {
        let name = self
            .context
            .name()
            .unwrap_or_else(|_| "unnamed device".into());
        match self.context.compute_capability() {
            Ok((major, minor)) => format!("{name}, compute capability {major}.{minor}"),
            Err(_) => name,
        }
    }

    fn shares_host_memory(&self) -> bool {
        false
    }

    /// Binds the device's context to the calling thread and issues `work` on `stream`'s CUDA
    /// stream; each primitive waits for its own work, so all of it is complete on return.
    fn within(&self, stream: Stream, work: &mut (dyn FnMut() + Send)) {
        if let Err(e) = self.bind() {
            tracing::error!("CUDA device {}: {e}", self.ordinal);
        }
        let _restore = StreamRestored(CURRENT_STREAM.replace(stream));
        work();
    }

    /// The governor's pool over the driver's caching allocator (`driver_pool.rs`), of the
    /// budget or the memory the device has free now less 1 GiB for the libraries'
    /// workspaces, whichever is less.
    fn memory_pool(&self, config: PoolConfig) -> Result<Box<dyn MemoryPool>> {
        let (free, _) = self
            .context
            .mem_get_info()
            .map_err(|e| cuda_error("cuMemGetInfo", e))?;
        let usable = (free as u64).saturating_sub(LIBRARY_HEADROOM);
        let capacity = config.capacity.map_or(usable, |c| c.min(usable));
        let config = PoolConfig {
            capacity: Some(capacity),
            ..config
        };
        Ok(Box::new(driver_pool::DriverPool::new(
            self.context.clone(),
            config,
        )?))
    }

    fn upload(&self, host: &AnyTensor) -> Result<DeviceTensor> {
        memory::upload(self.stream(), host)
    }

    fn download(&self, tensor: DeviceTensor) -> Result<AnyTensor> {
        memory::download(self.stream(), &tensor)
    }

    fn permute(&self, tensor: &DeviceTensor, perm: &[usize]) -> Result<DeviceTensor> {
        timed(Primitive::Copy, || self.permuted(tensor, perm))
    }

    fn conj(&self, tensor: &DeviceTensor) -> Result<DeviceTensor> {
        timed(Primitive::Copy, || self.conjugated(tensor))
    }

    fn cast(&self, tensor: &DeviceTensor, dtype: DType) -> Result<DeviceTensor> {
        timed(Primitive::Copy, || self.converted(tensor, dtype))
    }

    fn batched_gemm(
        &self,
        a: &DeviceTensor,
        b: &DeviceTensor,
        gemm: Gemm,
        dims: Vec<usize>,
    ) -> Result<DeviceTensor> {
        let shape = PrimitiveShape::of_gemm(&gemm);
        timed_shape(Primitive::Gemm, shape, a.dtype(), || {
            self.product(a, b, gemm, dims)
        })
    }

    fn thin_qr(&self, a: &DeviceTensor) -> Result<(DeviceTensor, DeviceTensor)> {
        let (rows, cols) = matrix_dims(a)?;
        let shape = PrimitiveShape::Qr { rows, cols };
        timed_shape(Primitive::Factorization, shape, a.dtype(), || self.qr(a))
    }

    fn thin_svd(&self, a: &DeviceTensor) -> Result<(DeviceTensor, Vec<f64>, DeviceTensor)> {
        let (rows, cols) = matrix_dims(a)?;
        let shape = PrimitiveShape::Svd { rows, cols };
        timed_shape(Primitive::Factorization, shape, a.dtype(), || self.svd(a))
    }

    fn scale(&self, tensor: &DeviceTensor, axis: usize, factors: &[f64]) -> Result<DeviceTensor> {
        timed(Primitive::Copy, || self.scaled(tensor, axis, factors))
    }

    fn slice(
        &self,
        tensor: &DeviceTensor,
        axis: usize,
        range: Range<usize>,
    ) -> Result<DeviceTensor> {
        timed(Primitive::Copy, || self.sliced(tensor, axis, range))
    }

    fn join(&self, parts: &[DeviceTensor], axis: usize) -> Result<DeviceTensor> {
        timed(Primitive::Copy, || self.joined(parts, axis))
    }

    fn zeros(&self, dims: Vec<usize>, dtype: DType) -> Result<DeviceTensor> {
        let len = dims.iter().product();
        let buffer = memory::DeviceBuffer::zeros(self.stream(), len, dtype)?;
        memory::synchronize(self.stream())?;
        Ok(memory::tensor_over(dims, dtype, buffer))
    }

    fn place(
        &self,
        whole: &mut DeviceTensor,
        axis: usize,
        start: usize,
        part: &DeviceTensor,
    ) -> Result<()> {
        timed(Primitive::Copy, || self.placed(whole, axis, start, part))
    }
}
