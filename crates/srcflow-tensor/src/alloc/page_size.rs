//! The system's page size, which the block cache aligns its ranges to and reads residency by.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes per page of this system (4 KiB on x86-64; 16 or 64 KiB on some aarch64 kernels, such
/// as GH200 nodes), asked of the OS once.
pub(super) fn page_size() -> usize {
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    match PAGE.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: sysconf reads a constant of the system; it allocates nothing (the block
            // cache asks from inside the allocator).
            let asked = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            let size = usize::try_from(asked)
                .ok()
                .filter(|s| s.is_power_of_two())
                .unwrap_or(4096);
            PAGE.store(size, Ordering::Relaxed);
            size
        }
        size => size,
    }
}
