//! Backends: the primitives that compute tasks run on, over tensors in the backend's memory.
//!
//! A backend knows nothing of SRC: what each task computes is written once, in
//! `SweepGraph::run_kernel` (srcflow-graph), over these primitives (through
//! [`BackendTensor`], an [`Operand`](crate::tensor::Operand)). The CPU backend implements
//! them with faer and a rayon pool of its own; a GPU backend implements the same set.

#[macro_use]
mod for_dtype;
mod checks;
mod cpu;
mod cuda;
mod device_tensor;
mod gathered_gemm;
mod instruction_sets;
mod kind;
mod operand;
mod primitive_shape;
mod primitive_time;

pub use cpu::CpuBackend;
pub use cuda::CudaBackend;
pub use device_tensor::DeviceTensor;
pub use kind::BackendKind;
pub use operand::BackendTensor;
pub use primitive_shape::{qr_flops, svd_flops, PrimitiveShape, ShapeTime};
pub use primitive_time::PrimitiveTimes;
pub use primitive_time::{add as add_primitive_times, take as take_primitive_times};

use crate::device::{MemoryPool, PoolConfig};
use crate::error::{Error, Result};
use crate::tensor::{AnyTensor, DType};
use std::ops::Range;

/// A batched GEMM over row-major operands: `out[i] = op(a[i]) · op(c[i])` for `i < batch`,
/// with `op(a[i])` of `m × k`, `op(c[i])` of `k × n` and `out[i]` of `m × n`, each batch
/// contiguous. `op` reads an operand as stored, or as the transpose of what is stored where its
/// `transpose_*` flag is set (so a permute that only swaps the summed and the free axes costs no
/// copy), and takes the complex conjugate where its `conj_*` flag is set. faer conjugates inside
/// the product; cuBLAS conjugates only with a transpose, so a GPU backend may conjugate a copy of
/// one operand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gemm {
    /// Number of independent products.
    pub batch: usize,
    /// Rows of each product.
    pub m: usize,
    /// Columns of each product.
    pub n: usize,
    /// Summed dimension of each product.
    pub k: usize,
    /// Conjugates the left operand's elements.
    pub conj_a: bool,
    /// Conjugates the right operand's elements.
    pub conj_b: bool,
    /// The left operand is stored as its `k × m` transpose.
    pub transpose_a: bool,
    /// The right operand is stored as its `n × k` transpose.
    pub transpose_b: bool,
}

impl Gemm {
    /// The plain product of `batch` pairs of `m × k` and `k × n` matrices (no conjugation, no
    /// transpose).
    pub fn new(batch: usize, m: usize, n: usize, k: usize) -> Self {
        Gemm {
            batch,
            m,
            n,
            k,
            conj_a: false,
            conj_b: false,
            transpose_a: false,
            transpose_b: false,
        }
    }
}

/// A queue of one device's work, one per kind of lane, so that copies to and from the device
/// and between devices overlap its kernels (a CUDA stream each on a GPU).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stream {
    /// Kernels.
    Compute,
    /// Copies from host memory to the device.
    Upload,
    /// Copies from the device to host memory.
    Download,
    /// Copies between devices.
    Peer,
}

/// The primitives a device offers: copies to and from host memory, and kernels on its own
/// tensors. Every tensor argument must come from this backend.
pub trait Backend: Send + Sync {
    /// A short name for reports ("cpu", "cuda").
    fn name(&self) -> &'static str;
    /// Number of worker threads (or streams) a kernel may use.
    fn threads(&self) -> usize;
    /// What decides the last bits of its kernels' results besides their inputs and threads:
    /// the instruction sets the CPU kernels dispatch to, or the device's model.
    fn arithmetic(&self) -> String;
    /// True when device memory is host memory, so both count against the host budget.
    fn shares_host_memory(&self) -> bool;
    /// Runs `work`, one task's primitives, issued in order on `stream` in the backend's
    /// execution context (for the CPU backend, its thread pool for kernels; for a GPU, its
    /// context bound to the calling thread), and returns once they are complete. That completion is the event every later
    /// task waits on (the scheduler starts a task only after the tasks it reads from), so a
    /// value made on one stream may be read on any other.
    fn within(&self, stream: Stream, work: &mut (dyn FnMut() + Send));
    /// Like [`Backend::within`] on the compute stream, leaving the calling thread free to call
    /// `watch` about every [`crate::WATCH_EVERY`] until `work` is done. The default runs `work`
    /// with `within` and never watches.
    fn within_watched(&self, work: &mut (dyn FnMut() + Send), watch: &mut dyn FnMut()) {
        let _ = watch;
        self.within(Stream::Compute, work);
    }
    /// The pool that accounts for the device's memory, of at most `config.capacity` bytes
    /// (`None`: all the device has), laid out as `config` says; the memory governor admits
    /// and allocates every task's blocks from it.
    fn memory_pool(&self, config: PoolConfig) -> Result<Box<dyn MemoryPool>>;

    /// A copy of the host array `host` on the device.
    fn upload(&self, host: &AnyTensor) -> Result<DeviceTensor>;
    /// The elements of `tensor` in host memory, with its dimensions.
    fn download(&self, tensor: DeviceTensor) -> Result<AnyTensor>;

    /// A copy with axes reordered: axis `i` of the result is axis `perm[i]` of `tensor`.
    fn permute(&self, tensor: &DeviceTensor, perm: &[usize]) -> Result<DeviceTensor>;
    /// The element-wise complex conjugate (a copy for real types too).
    fn conj(&self, tensor: &DeviceTensor) -> Result<DeviceTensor>;
    /// The elements converted to `dtype` (a real type keeps the real parts).
    fn cast(&self, tensor: &DeviceTensor, dtype: DType) -> Result<DeviceTensor>;
    /// The batched GEMM `gemm` of `a` (`batch × m × k`, or `batch × k × m` stored transposed)
    /// and `b` (`batch × k × n`, or `batch × n × k`), as a tensor of dimensions `dims`
    /// (`batch · m · n` elements).
    fn batched_gemm(
        &self,
        a: &DeviceTensor,
        b: &DeviceTensor,
        gemm: Gemm,
        dims: Vec<usize>,
    ) -> Result<DeviceTensor>;
    /// [`Backend::batched_gemm`] whose left operand is `a` with its axes in the order `perm`
    /// (batch axes, rows, then the summed axes), a permutation that moves elements. The default
    /// copies `a` into that order first; a backend may read it where it is.
    fn batched_gemm_permuted(
        &self,
        a: &DeviceTensor,
        perm: &[usize],
        b: &DeviceTensor,
        gemm: Gemm,
        dims: Vec<usize>,
    ) -> Result<DeviceTensor> {
        checks::axis_order(a, perm)?;
        self.batched_gemm(&self.permute(a, perm)?, b, gemm, dims)
    }
    /// Thin Householder QR of the `m × n` matrix `a`: `Q` (`m × r`, orthonormal columns) and
    /// `R` (`r × n`, upper triangular), `r = min(m, n)`. Matrices are column-major, as LAPACK
    /// and cuSOLVER take them: an `m × n` matrix is a tensor of dimensions `[n, m]`.
    fn thin_qr(&self, a: &DeviceTensor) -> Result<(DeviceTensor, DeviceTensor)>;
    /// Thin SVD of the `m × n` matrix `a`: `U` (`m × r`), the singular values (largest first,
    /// in host memory) and `Vᴴ` (`r × n`), `r = min(m, n)`; matrices column-major as for
    /// [`Backend::thin_qr`].
    fn thin_svd(&self, a: &DeviceTensor) -> Result<(DeviceTensor, Vec<f64>, DeviceTensor)>;
    /// `tensor` with each entry along `axis` multiplied by its factor in `factors`.
    fn scale(&self, tensor: &DeviceTensor, axis: usize, factors: &[f64]) -> Result<DeviceTensor>;
    /// A copy of the entries `range` along `axis`.
    fn slice(
        &self,
        tensor: &DeviceTensor,
        axis: usize,
        range: Range<usize>,
    ) -> Result<DeviceTensor>;
    /// `parts` (alike but along `axis`) joined along `axis`.
    fn join(&self, parts: &[DeviceTensor], axis: usize) -> Result<DeviceTensor>;
    /// A tensor of `dims` and `dtype`, every element zero.
    fn zeros(&self, dims: Vec<usize>, dtype: DType) -> Result<DeviceTensor>;
    /// Writes `part` (alike `whole` but along `axis`) into `whole` from entry `start` of
    /// `axis` on: how slices of a half-batch output fill the output allocated once.
    fn place(
        &self,
        whole: &mut DeviceTensor,
        axis: usize,
        start: usize,
        part: &DeviceTensor,
    ) -> Result<()>;
}

/// An error unless `part` fits in `whole` from entry `start` of `axis` on, alike in every other
/// axis ([`Backend::place`]'s precondition).
pub(crate) fn placeable(
    whole: &DeviceTensor,
    axis: usize,
    start: usize,
    part: &DeviceTensor,
) -> Result<()> {
    let (w, p) = (whole.dims(), part.dims());
    let alike = w.len() == p.len() && (0..w.len()).all(|a| a == axis || w[a] == p[a]);
    if axis >= w.len() || !alike || start + p[axis] > w[axis] || whole.dtype() != part.dtype() {
        return Err(Error::Invalid(format!(
            "cannot place {part:?} at {start} along axis {axis} of {whole:?}"
        )));
    }
    Ok(())
}

/// Rows and columns of `tensor` as a column-major matrix (dimensions `[cols, rows]`), which it
/// must be.
pub(crate) fn matrix_dims(tensor: &DeviceTensor) -> Result<(usize, usize)> {
    match tensor.dims() {
        &[cols, rows] => Ok((rows, cols)),
        dims => Err(Error::Invalid(format!(
            "a factorization needs a matrix, found dimensions {dims:?}"
        ))),
    }
}
