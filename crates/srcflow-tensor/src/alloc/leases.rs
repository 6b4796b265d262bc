//! The leases in force in this process, which the block cache reads for its cap and
//! [`super::CapLease`] updates: one registry, so that neither needs the other's state.

use std::sync::Mutex;

/// The leases in force: how many cap, the sum of their caps, and how many do not cap.
pub(super) struct Leases {
    pub(super) capped: usize,
    pub(super) bytes: usize,
    pub(super) uncapped: usize,
}

static LEASES: Mutex<Leases> = Mutex::new(Leases {
    capped: 0,
    bytes: 0,
    uncapped: 0,
});

/// The leases, even if a thread panicked while holding them (they stay consistent), guarded
/// across forks.
pub(super) fn leases() -> std::sync::MutexGuard<'static, Leases> {
    super::fork_guard::guard_forks();
    LEASES.lock().unwrap_or_else(|e| e.into_inner())
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
