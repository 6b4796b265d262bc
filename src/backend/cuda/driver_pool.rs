//! The device's memory as the governor counts it, over the driver's own caching allocator.
//!
//! Every [`DeviceBuffer`](super::memory::DeviceBuffer) comes from `cuMemAllocAsync`, which
//! serves it from the device's default memory pool. That pool caches what is freed, but by
//! default gives the cache back to the device at every synchronization, and the backend
//! synchronizes after each primitive; [`keep_freed_memory`] makes it keep the cache until
//! [`MemoryPool::release_cache`] trims it. The governor's accounting (admission, fragmentation,
//! the half-batch rewrite) is a [`SimulatedPool`] of the capacity the device had free when
//! the run began: the driver's pool caches the same blocks the accounting does.

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

/// Makes the default memory pool of `context`'s device keep freed memory cached across
/// synchronizations (its release threshold set to everything), so that a run's allocations
/// after the first are served without the driver's allocator.
pub fn keep_freed_memory(context: &CudaContext) -> Result<()> {
    let pool = default_pool(context)?;
    let mut threshold = u64::MAX;
    // SAFETY: the attribute takes a `cuuint64_t`, which `threshold` is.
    let status = unsafe {
        sys::cuMemPoolSetAttribute(
            pool,
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

/// A CUDA device's memory for the governor: the accounting of a [`SimulatedPool`], whose cache
/// release also trims the driver's (see the module documentation).
pub struct DriverPool {
    accounting: SimulatedPool,
    context: Arc<CudaContext>,
}

impl DriverPool {
    /// The pool of `context`'s device, laid out as `config` says (its capacity already
    /// limited to what the device has free).
    pub fn new(context: Arc<CudaContext>, config: PoolConfig) -> Result<Self> {
        Ok(DriverPool {
            accounting: SimulatedPool::new(config)?,
            context,
        })
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
        if let Err(e) = trim_cache(&self.context) {
            tracing::warn!("CUDA device {}: {e}", self.context.ordinal());
        }
        released
    }

    fn set_capacity(&self, bytes: u64) {
        self.accounting.set_capacity(bytes)
    }

    fn usage(&self) -> PoolUsage {
        self.accounting.usage()
    }
}
