//! `CapLease`: one run's claim on the process's resident memory. The block cache keeps the
//! process within the sum of the caps of the runs under way, and uncapped while any of them
//! has none, so that runs sharing a process do not reset each other's caps.

use super::block_cache::release_cached;
use super::leases::leases;

/// A run's cap on resident memory, in force until dropped.
#[derive(Debug)]
pub struct CapLease {
    cap: Option<usize>,
}

impl CapLease {
    /// Claims `cap` bytes (`None`: no cap) for as long as the lease lives.
    pub fn new(cap: Option<u64>) -> Self {
        let cap = cap.map(|c| usize::try_from(c).unwrap_or(usize::MAX));
        let mut leases = leases();
        match cap {
            Some(bytes) => {
                leases.capped += 1;
                leases.bytes = leases.bytes.saturating_add(bytes);
            }
            None => leases.uncapped += 1,
        }
        CapLease { cap }
    }
}

impl Drop for CapLease {
    /// Ends the claim; the last lease to end gives the cached blocks back, so that a process
    /// that runs srcflow among other work (a Python session) holds no memory between runs.
    fn drop(&mut self) {
        let mut leases = leases();
        match self.cap {
            Some(bytes) => {
                leases.capped -= 1;
                leases.bytes = if leases.capped == 0 {
                    0
                } else {
                    leases.bytes.saturating_sub(bytes)
                };
            }
            None => leases.uncapped -= 1,
        }
        let last = leases.capped == 0 && leases.uncapped == 0;
        drop(leases);
        if last {
            release_cached();
        }
    }
}

/// Unmaps every cached block when no run holds a lease (none could be using the cache).
pub fn release_cached_if_idle() {
    let idle = {
        let leases = leases();
        leases.capped == 0 && leases.uncapped == 0
    };
    if idle {
        release_cached();
    }
}
