//! `CapLease`: one run's claim on the process's resident memory. The block cache keeps the
//! process within the sum of the caps of the runs under way, and uncapped while any of them
//! has none, so that runs sharing a process do not reset each other's caps.

use std::sync::Mutex;

/// The leases in force: how many cap, the sum of their caps, and how many do not cap.
struct Leases {
    capped: usize,
    bytes: usize,
    uncapped: usize,
}

static LEASES: Mutex<Leases> = Mutex::new(Leases {
    capped: 0,
    bytes: 0,
    uncapped: 0,
});

/// The leases, even if a thread panicked while holding them (they stay consistent).
fn leases() -> std::sync::MutexGuard<'static, Leases> {
    LEASES.lock().unwrap_or_else(|e| e.into_inner())
}

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
            super::block_cache::release_cached();
        }
    }
}

/// The cap the block cache keeps to now: the sum of the leases' caps, or none when no lease
/// caps or one lease does not.
pub(super) fn cap_in_force() -> usize {
    let leases = leases();
    if leases.capped == 0 || leases.uncapped > 0 {
        usize::MAX
    } else {
        leases.bytes
    }
}

/// Unmaps every cached block when no run holds a lease (none could be using the cache).
pub fn release_cached_if_idle() {
    let idle = {
        let leases = leases();
        leases.capped == 0 && leases.uncapped == 0
    };
    if idle {
        super::block_cache::release_cached();
    }
}
