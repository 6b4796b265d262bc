//! `CapLease`: one run's claim on the process's resident memory. The block cache keeps the
//! process within the sum of the caps of the runs under way, and uncapped while any of them
//! has none, so that runs sharing a process do not reset each other's caps.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes claimed by the capped runs under way.
static CAPPED: AtomicUsize = AtomicUsize::new(0);
/// Runs under way with no cap.
static UNCAPPED: AtomicUsize = AtomicUsize::new(0);

/// A run's cap on resident memory, in force until dropped.
#[derive(Debug)]
pub struct CapLease {
    cap: Option<usize>,
}

impl CapLease {
    /// Claims `cap` bytes (`None`: no cap) for as long as the lease lives.
    pub fn new(cap: Option<u64>) -> Self {
        let cap = cap.map(|c| usize::try_from(c).unwrap_or(usize::MAX));
        match cap {
            Some(bytes) => CAPPED.fetch_add(bytes, Ordering::Relaxed),
            None => UNCAPPED.fetch_add(1, Ordering::Relaxed),
        };
        CapLease { cap }
    }
}

impl Drop for CapLease {
    fn drop(&mut self) {
        match self.cap {
            Some(bytes) => CAPPED.fetch_sub(bytes, Ordering::Relaxed),
            None => UNCAPPED.fetch_sub(1, Ordering::Relaxed),
        };
    }
}

/// The cap the block cache keeps to now: the sum of the leases', or none when no lease caps
/// or one lease does not.
pub(super) fn cap_in_force() -> usize {
    match (
        CAPPED.load(Ordering::Relaxed),
        UNCAPPED.load(Ordering::Relaxed),
    ) {
        (0, _) | (_, 1..) => usize::MAX,
        (capped, 0) => capped,
    }
}
