//! The device's memory as the governor counts it, over the driver's own caching allocator.
//!
//! Every [`DeviceBuffer`](super::memory::DeviceBuffer) comes from `cuMemAllocAsync`, which
//! serves it from the device's default memory pool. That pool caches what is freed, but by
//! default gives the cache back to the device at every synchronization, and the backend
//! synchronizes after each primitive. For the life of a run's [`DriverPool`] the driver's pool
//! keeps its cache (its release threshold raised to everything) until the governor's
//! [`MemoryPool::release_cache`] trims it; when the run ends the cache is trimmed and the
//! threshold put back, so a host program (a Python session) gets its device memory back. The
//! governor's accounting (admission, fragmentation, the half-batch rewrite) is a
//! [`SimulatedPool`] of the capacity the device had free when the run began, kept beside the
//! driver's pool: the two are separate allocators that see the same requests.

use super::cuda_error;
use crate::device::{Block, MemoryPool, OutOfMemory, PoolConfig, PoolUsage, SimulatedPool};
use crate::error::Result;
use cudarc::driver::sys::{self, CUmemPool_attribute, CUmemoryPool, CUresult};
use cudarc::driver::CudaContext;
use std::sync::Arc;

/// The default memory pool of `context`'s device.
fn default_pool(context: &CudaContext) -> Result<CUmemoryPool> {
    let mut pool: CUmemoryPool = std::ptr::null_mut();
    // SAFETY: the device handle is the context's own; `pool` is written on success only.
    let status = unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, context.cu_device()) };
    checked("cuDeviceGetDefaultMemPool", status)?;
    Ok(pool)
}

/// An error naming `call` unless `status` is success.
fn checked(call: &str, status: CUresult) -> Result<()> {
    match status {
        CUresult::CUDA_SUCCESS => Ok(()),
        error => Err(cuda_error(call, error)),
    }
}

/// The release threshold of the default memory pool of `context`'s device.
fn release_threshold(context: &CudaContext) -> Result<u64> {
    let mut threshold = 0u64;
    // SAFETY: the attribute is a `cuuint64_t`, which `threshold` is.
    let status = unsafe {
        sys::cuMemPoolGetAttribute(
            default_pool(context)?,
            CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
    };
    checked("cuMemPoolGetAttribute", status)?;
    Ok(threshold)
}

/// Sets the release threshold of the default memory pool of `context`'s device: the cached
/// bytes it keeps across synchronizations.
fn set_release_threshold(context: &CudaContext, mut threshold: u64) -> Result<()> {
    // SAFETY: the attribute takes a `cuuint64_t`, which `threshold` is.
    let status = unsafe {
        sys::cuMemPoolSetAttribute(
            default_pool(context)?,
            CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
    };
    checked("cuMemPoolSetAttribute", status)
}

/// Gives every unused byte the default memory pool of `context`'s device caches back to it.
fn trim_cache(context: &CudaContext) -> Result<()> {
    context
        .bind_to_thread()
        .map_err(|e| cuda_error("cuCtxSetCurrent", e))?;
    let pool = default_pool(context)?;
    // SAFETY: the pool is the device's own; trimming frees only memory no allocation holds.
    checked("cuMemPoolTrimTo", unsafe { sys::cuMemPoolTrimTo(pool, 0) })
}

/// A CUDA device's memory for the governor during one run: the accounting of a
/// [`SimulatedPool`], the driver's pool set to keep its cache (see the module documentation).
pub(crate) struct DriverPool {
    accounting: SimulatedPool,
    context: Arc<CudaContext>,
    /// The driver pool's release threshold before the run, put back when it ends.
    threshold_before: u64,
}

impl DriverPool {
    /// The pool of `context`'s device, laid out as `config` says (its capacity already
    /// limited to what the device has free).
    pub fn new(context: Arc<CudaContext>, config: PoolConfig) -> Result<Self> {
        let threshold_before = release_threshold(&context)?;
        set_release_threshold(&context, u64::MAX)?;
        Ok(DriverPool {
            accounting: SimulatedPool::new(config)?,
            context,
            threshold_before,
        })
    }

    /// Logs `outcome`'s error, if any: the memory stays cached and usable.
    fn warn_on(&self, outcome: Result<()>) {
        if let Err(e) = outcome {
            tracing::warn!("CUDA device {}: {e}", self.context.ordinal());
        }
    }
}

impl Drop for DriverPool {
    /// Gives the run's cache back to the device and puts the release threshold back.
    fn drop(&mut self) {
        self.warn_on(trim_cache(&self.context));
        self.warn_on(set_release_threshold(&self.context, self.threshold_before));
    }
}

impl MemoryPool for DriverPool {
    fn allocate(&self, bytes: u64) -> std::result::Result<Block, OutOfMemory> {
        self.accounting.allocate(bytes)
    }

    fn fits(&self, bytes: &[u64]) -> bool {
        self.accounting.fits(bytes)
    }

    /// Releases the accounting's unused segments and trims the driver's cache to match; a
    /// failed trim is logged, as the memory stays cached and usable.
    fn release_cache(&self) -> u64 {
        let released = self.accounting.release_cache();
        self.warn_on(trim_cache(&self.context));
        released
    }

    fn set_capacity(&self, bytes: u64) {
        self.accounting.set_capacity(bytes)
    }

    fn usage(&self) -> PoolUsage {
        self.accounting.usage()
    }
}
