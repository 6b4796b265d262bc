//! The allocator's locks across a `fork`: taken just before it and released just after it, in
//! the parent and in the child, so that a child never starts with a lock held by a thread it
//! does not have (a Python `os.fork` or multiprocessing's "fork" while a run allocates).

use super::block_cache::{lock_arena, Arena};
use super::leases::{leases, Leases};
use std::cell::RefCell;
use std::sync::{MutexGuard, Once};

thread_local! {
    /// The locks the forking thread holds across its `fork`.
    static HELD: RefCell<Option<(MutexGuard<'static, Arena>, MutexGuard<'static, Leases>)>> =
        const { RefCell::new(None) };
}

/// Registers the handlers with `pthread_atfork`, once per process (before the allocator's
/// locks are first taken).
pub(super) fn guard_forks() {
    static REGISTERED: Once = Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: the handlers are plain functions that live as long as the process.
        let registered = unsafe { libc::pthread_atfork(Some(before), Some(after), Some(after)) };
        assert_eq!(registered, 0, "pthread_atfork failed (out of memory)");
    });
}

/// Before a fork: takes the locks in the order the allocator nests them (arena, then leases).
extern "C" fn before() {
    HELD.with(|held| {
        let locks = (lock_arena(), leases());
        *held.borrow_mut() = Some(locks);
    });
}

/// After a fork, in the parent and in the child: releases them.
extern "C" fn after() {
    HELD.with(|held| held.borrow_mut().take());
}
