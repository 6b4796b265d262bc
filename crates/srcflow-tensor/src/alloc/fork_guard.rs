//! The allocator's locks across a `fork`: taken just before it and released just after it, in
//! the parent and in the child, so that a child never starts with a lock held by a thread it
//! does not have (a Python `os.fork` or multiprocessing's "fork" while a run allocates).

use super::block_cache::{lock_arena, Arena};
use super::leases::{leases, Leases};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::MutexGuard;

thread_local! {
    /// The locks the forking thread holds across its `fork`.
    static HELD: RefCell<Option<(MutexGuard<'static, Arena>, MutexGuard<'static, Leases>)>> =
        const { RefCell::new(None) };
}

/// Whether this process registered the handlers.
static HANDLERS: Registration = Registration::new();

/// Registers the handlers with `pthread_atfork`, once per process (before the allocator's
/// locks are first taken).
pub(super) fn guard_forks() {
    HANDLERS.ensure(|| {
        // SAFETY: the handlers are plain functions that live as long as the process.
        let registered = unsafe { libc::pthread_atfork(Some(before), Some(after), Some(after)) };
        assert_eq!(registered, 0, "pthread_atfork failed (out of memory)");
    });
}

/// Before a fork: takes the locks in the order the allocator nests them (arena, then leases),
/// unless a second registration of the handlers took them already.
extern "C" fn before() {
    HELD.with(|held| {
        if held.borrow().is_none() {
            let locks = (lock_arena(), leases());
            *held.borrow_mut() = Some(locks);
        }
    });
}

/// After a fork, in the parent and in the child: releases them.
extern "C" fn after() {
    HELD.with(|held| held.borrow_mut().take());
}

/// A one-time registration that a forked child never waits for. A `std::sync::Once` would
/// hang a child forked while another thread was registering (it stays "running" there, with
/// no thread left to finish it); this one notes the registering process, and a child finding
/// its parent's registration unfinished registers itself (a second registration of the
/// handlers is harmless: `before` takes the locks once).
struct Registration {
    /// [`UNREGISTERED`], [`REGISTERED`], or the id of the process registering plus 2.
    state: AtomicU64,
}

/// No thread has begun to register.
const UNREGISTERED: u64 = 0;
/// The handlers are registered.
const REGISTERED: u64 = 1;

impl Registration {
    const fn new() -> Self {
        Registration {
            state: AtomicU64::new(UNREGISTERED),
        }
    }

    /// Runs `register` unless this process registered already (or another of its threads is
    /// registering: then waits for it).
    fn ensure(&self, register: impl FnOnce()) {
        if self.state.load(Ordering::Acquire) != REGISTERED {
            // SAFETY: getpid has no preconditions.
            self.ensure_as(unsafe { libc::getpid() } as u64, register);
        }
    }

    /// [`Registration::ensure`] in the process `pid`.
    #[cold]
    fn ensure_as(&self, pid: u64, register: impl FnOnce()) {
        let mine = pid + 2;
        loop {
            let state = self.state.load(Ordering::Acquire);
            match state {
                REGISTERED => return,
                _ if state == mine => std::thread::yield_now(),
                // Unregistered, or left unfinished by the parent this process was forked from.
                _ => {
                    let claimed = self.state.compare_exchange(
                        state,
                        mine,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    );
                    if claimed.is_ok() {
                        register();
                        self.state.store(REGISTERED, Ordering::Release);
                        return;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    #[test]
    fn a_process_registers_once() {
        let registration = Registration::new();
        let runs = AtomicUsize::new(0);
        for _ in 0..3 {
            registration.ensure_as(10, || {
                runs.fetch_add(1, Ordering::Relaxed);
            });
        }
        assert_eq!(runs.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_child_registers_where_its_parent_was_registering_when_it_forked() {
        let registration = Registration::new();
        registration.state.store(10 + 2, Ordering::Release); // the parent, pid 10, midway
        let mut ran = false;
        registration.ensure_as(11, || ran = true);
        assert!(ran, "the child (pid 11) waited for its parent instead");
        assert_eq!(registration.state.load(Ordering::Acquire), REGISTERED);
    }

    #[test]
    fn a_thread_waits_while_another_thread_of_its_process_registers() {
        let registration = Arc::new(Registration::new());
        registration.state.store(10 + 2, Ordering::Release); // a thread of pid 10, midway
        let waiter = std::thread::spawn({
            let registration = registration.clone();
            move || {
                let mut ran = false;
                registration.ensure_as(10, || ran = true);
                ran
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            !waiter.is_finished(),
            "it went on before the registration ended"
        );
        registration.state.store(REGISTERED, Ordering::Release);
        assert!(!waiter.join().unwrap(), "it registered a second time");
    }
}
