//! Device memory as a kernel sees it: a pool that hands out blocks, caches what is freed, can
//! fragment, and fails an allocation when it cannot serve it.
//!
//! [`MemoryPool`] is the interface; [`SimulatedPool`] implements it on the CPU so that the
//! memory governor (admission, cache releases, half-batch rewrites) is exercised and tested
//! without a GPU. The CUDA backend fronts the same trait over the driver's caching allocator. [`FaultyPool`]
//! injects allocation failures into any pool; a capacity schedule shrinks any pool through
//! [`MemoryPool::set_capacity`]. Pre-fragmentation stays a setting of the simulated pool: it
//! lays out the segments of the pool itself, which no wrapper can see.

mod block;
mod capacity_schedule;
mod device_fault;
mod faulty_pool;
mod oom_fault;
mod options;
mod pool;

pub use block::Block;
pub use capacity_schedule::CapacitySchedule;
pub use device_fault::DeviceFault;
pub use faulty_pool::FaultyPool;
pub use oom_fault::OomFault;
pub use options::DeviceOptions;
pub use pool::{PoolConfig, SimulatedPool};

use serde::Serialize;

/// A device's memory as the governor asks about it.
pub trait MemoryPool: Send + Sync {
    /// A block of at least `bytes`, or why none could be had.
    fn allocate(&self, bytes: u64) -> Result<Block, OutOfMemory>;
    /// True when every request in `bytes` could be allocated now, from physically free memory
    /// or from cached blocks large enough for it (a cached block too small does not count).
    fn fits(&self, bytes: &[u64]) -> bool;
    /// Returns every wholly unused cached segment to the device; the bytes it gave back.
    fn release_cache(&self) -> u64;
    /// Changes the device's capacity (a device shared with other work loses memory mid-run).
    fn set_capacity(&self, bytes: u64);
    /// What the pool holds now.
    fn usage(&self) -> PoolUsage;
}

/// The state of a pool at one moment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PoolUsage {
    /// Bytes the device has.
    pub capacity: u64,
    /// Bytes the pool has taken from the device (segments).
    pub reserved: u64,
    /// Bytes of blocks in use.
    pub allocated: u64,
    /// Bytes reserved but not in use: freed blocks the pool keeps.
    pub cached: u64,
    /// The largest cached block: the biggest request the cache alone can serve.
    pub largest_cached: u64,
    /// Bytes of wholly unused segments: what a release would give back.
    pub releasable: u64,
}

impl PoolUsage {
    /// Bytes the device has that the pool has not reserved.
    pub fn physically_free(&self) -> u64 {
        self.capacity.saturating_sub(self.reserved)
    }
}

/// Why an allocation failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutOfMemory {
    /// The pool then.
    pub usage: PoolUsage,
    /// True when an injected fault (`DeviceOptions::inject_oom`) made it fail.
    pub injected: bool,
}
