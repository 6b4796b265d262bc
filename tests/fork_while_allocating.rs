//! A process that forks while its threads allocate large blocks: each child allocates at once
//! and exits, never waiting for a lock of the block cache that a thread it lacks held at the
//! fork (Python's `os.fork`, multiprocessing's "fork", while a run is under way).

use srcflow_tensor::alloc::{BlockCache, CapLease};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOCATOR: BlockCache = BlockCache;

const MB: usize = 1 << 20;

/// Forks made while the threads allocate.
const FORKS: usize = 200;

/// In a forked child: one large block and one lease, then exit 0 (or die by the alarm).
fn child() -> ! {
    // SAFETY: async-signal-safe calls only around the allocation, which is what is tested.
    unsafe { libc::alarm(10) };
    let block = vec![1u8; 2 * MB];
    let lease = CapLease::new(Some(1 << 30));
    drop((block, lease));
    unsafe { libc::_exit(0) }
}

/// The exit status of child `pid`, or `None` when it ran past `limit`.
fn wait(pid: libc::pid_t, limit: Duration) -> Option<i32> {
    let started = Instant::now();
    let mut status = 0;
    while started.elapsed() < limit {
        // SAFETY: `pid` is our child; `status` is written by waitpid.
        if unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } == pid {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    None
}

#[test]
fn children_forked_while_threads_allocate_never_wait_for_the_block_cache() {
    let stop = Arc::new(AtomicBool::new(false));
    let allocators: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let lease = CapLease::new(None);
                    let blocks: Vec<Vec<u8>> = (1..4).map(|i| vec![0u8; i * MB]).collect();
                    drop((blocks, lease));
                }
            })
        })
        .collect();
    let mut hung = 0;
    for _ in 0..FORKS {
        // SAFETY: the child calls `child`, which ends in `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            child();
        }
        match wait(pid, Duration::from_secs(20)) {
            Some(status) => assert_eq!(status, 0, "a child exited with status {status}"),
            None => {
                hung += 1;
                unsafe { libc::kill(pid, libc::SIGKILL) };
                wait(pid, Duration::from_secs(5));
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    allocators.into_iter().for_each(|t| t.join().unwrap());
    assert_eq!(hung, 0, "{hung} of {FORKS} children hung");
}
