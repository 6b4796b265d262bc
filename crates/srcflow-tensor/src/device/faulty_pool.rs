//! `FaultyPool`: any memory pool with injected allocation failures (`--inject-oom`), to test
//! the memory governor's recovery on any backend.

use super::{Block, MemoryPool, OomFault, OutOfMemory, PoolUsage};

/// A pool that fails the allocations its fault picks and passes the others to `inner`.
pub struct FaultyPool {
    inner: Box<dyn MemoryPool>,
    fault: OomFault,
}

impl FaultyPool {
    /// `inner` with allocations failing as `fault` says.
    pub fn new(inner: Box<dyn MemoryPool>, fault: OomFault) -> Self {
        FaultyPool { inner, fault }
    }
}

impl MemoryPool for FaultyPool {
    fn allocate(&self, bytes: u64) -> Result<Block, OutOfMemory> {
        if self.fault.strikes() {
            return Err(OutOfMemory {
                usage: self.inner.usage(),
                injected: true,
            });
        }
        self.inner.allocate(bytes)
    }

    fn fits(&self, bytes: &[u64]) -> bool {
        self.inner.fits(bytes)
    }

    fn release_cache(&self) -> u64 {
        self.inner.release_cache()
    }

    fn set_capacity(&self, bytes: u64) {
        self.inner.set_capacity(bytes)
    }

    fn usage(&self) -> PoolUsage {
        self.inner.usage()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{PoolConfig, SimulatedPool};

    #[test]
    fn every_allocation_fails_at_rate_one_and_none_at_rate_zero() {
        let pool = |rate| {
            let inner = SimulatedPool::new(PoolConfig::default()).unwrap();
            FaultyPool::new(Box::new(inner), OomFault::new(rate, 3).unwrap())
        };
        let always = pool(1.0);
        let failure = always.allocate(1024).unwrap_err();
        assert!(failure.injected);
        assert_eq!(always.usage().allocated, 0);
        let never = pool(0.0);
        let block = never.allocate(1024).unwrap();
        assert_eq!(never.usage().allocated, block.bytes());
    }
}
