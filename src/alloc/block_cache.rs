//! `BlockCache`: the global allocator for large buffers (see the module docs).

use super::cap_lease::cap_in_force;
use super::resident::resident_bytes;
use super::size_class::{class_of, class_size, CLASSES, MIN_BLOCK};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ptr::null_mut;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Page alignment every block has (it comes straight from `mmap`).
const PAGE: usize = 4096;

/// Large buffers from cached `mmap` blocks, the rest from the system allocator.
pub struct BlockCache;

/// Cached blocks of one class, as an intrusive list: each free block's first word holds the
/// address of the next (0 ends the list).
struct FreeLists {
    heads: [usize; CLASSES],
}

static FREE: Mutex<FreeLists> = Mutex::new(FreeLists {
    heads: [0; CLASSES],
});
static LIVE: AtomicUsize = AtomicUsize::new(0);
static CACHED: AtomicUsize = AtomicUsize::new(0);
static MAPPED: AtomicUsize = AtomicUsize::new(0);
static UNMAPPED: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Blocks this thread mapped since it last took the count.
    static MAPPED_HERE: Cell<usize> = const { Cell::new(0) };
}

/// What the block cache holds and has done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheStats {
    /// Bytes of blocks in use.
    pub live_bytes: usize,
    /// Bytes of freed blocks kept for reuse.
    pub cached_bytes: usize,
    /// Blocks mapped so far (cache misses).
    pub mapped: usize,
    /// Cached blocks unmapped so far to stay within the cap.
    pub unmapped: usize,
}

/// Bytes of large blocks in use and cached now.
pub fn stats() -> CacheStats {
    CacheStats {
        live_bytes: LIVE.load(Ordering::Relaxed),
        cached_bytes: CACHED.load(Ordering::Relaxed),
        mapped: MAPPED.load(Ordering::Relaxed),
        unmapped: UNMAPPED.load(Ordering::Relaxed),
    }
}

/// Blocks the calling thread mapped fresh from the system (cache misses) since it last asked:
/// the count starts again from zero. How a task's fresh memory is counted (its primitive
/// counts carry it to the trace).
pub fn take_mapped_here() -> usize {
    MAPPED_HERE.try_with(Cell::take).unwrap_or(0)
}

/// True when the cache serves this request.
fn cached_kind(layout: Layout) -> bool {
    layout.size() >= MIN_BLOCK && layout.align() <= PAGE
}

impl BlockCache {
    /// A block of `class`: a cached one (and `false`), or a fresh zeroed mapping (and `true`).
    fn take(class: usize) -> Option<(*mut u8, bool)> {
        let size = class_size(class);
        let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
        let head = free.heads[class];
        if head != 0 {
            // SAFETY: a cached block is ours and its first word holds the next address.
            free.heads[class] = unsafe { *(head as *const usize) };
            CACHED.fetch_sub(size, Ordering::Relaxed);
            LIVE.fetch_add(size, Ordering::Relaxed);
            return Some((head as *mut u8, false));
        }
        // Before a new block takes the process past the cap in force, cached blocks are
        // unmapped; blocks in use are never touched, so the cap never fails a request.
        let cap = cap_in_force();
        let mut resident = if cap == usize::MAX {
            0
        } else {
            resident_bytes().unwrap_or(0)
        };
        let mut class_to_free = CLASSES;
        while resident + size > cap {
            let Some(class) = (0..class_to_free).rev().find(|&c| free.heads[c] != 0) else {
                break;
            };
            class_to_free = class;
            let block = free.heads[class_to_free];
            // SAFETY: as above; the block leaves the list before it is unmapped.
            free.heads[class_to_free] = unsafe { *(block as *const usize) };
            let bytes = class_size(class_to_free);
            unmap(block as *mut u8, bytes);
            CACHED.fetch_sub(bytes, Ordering::Relaxed);
            resident = resident_bytes().unwrap_or_else(|| resident.saturating_sub(bytes));
            class_to_free += 1;
        }
        drop(free);
        let block = map(size)?;
        LIVE.fetch_add(size, Ordering::Relaxed);
        let _ = MAPPED_HERE.try_with(|mapped| mapped.set(mapped.get() + 1));
        Some((block, true))
    }
}

unsafe impl GlobalAlloc for BlockCache {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !cached_kind(layout) {
            // SAFETY: forwarded with the caller's layout.
            return unsafe { System.alloc(layout) };
        }
        BlockCache::take(class_of(layout.size())).map_or(null_mut(), |(block, _)| block)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !cached_kind(layout) {
            // SAFETY: forwarded with the caller's layout.
            return unsafe { System.alloc_zeroed(layout) };
        }
        match BlockCache::take(class_of(layout.size())) {
            Some((block, true)) => block,
            Some((block, false)) => {
                // SAFETY: the block holds at least `layout.size()` writable bytes.
                unsafe { block.write_bytes(0, layout.size()) };
                block
            }
            None => null_mut(),
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if !cached_kind(layout) {
            // SAFETY: it came from System.alloc with this layout.
            return unsafe { System.dealloc(ptr, layout) };
        }
        let class = class_of(layout.size());
        let size = class_size(class);
        let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the block is ours again; its first word links it into the list.
        unsafe { *(ptr as *mut usize) = free.heads[class] };
        free.heads[class] = ptr as usize;
        LIVE.fetch_sub(size, Ordering::Relaxed);
        CACHED.fetch_add(size, Ordering::Relaxed);
    }
}

/// Unmaps every cached block: what the process no longer holds for a run once none is under
/// way ([`super::CapLease`] calls it when the last lease ends).
pub(super) fn release_cached() {
    let mut free = FREE.lock().unwrap_or_else(|e| e.into_inner());
    for class in 0..CLASSES {
        while free.heads[class] != 0 {
            let block = free.heads[class];
            // SAFETY: a cached block is ours and its first word holds the next address; it
            // leaves the list before it is unmapped.
            free.heads[class] = unsafe { *(block as *const usize) };
            unmap(block as *mut u8, class_size(class));
            CACHED.fetch_sub(class_size(class), Ordering::Relaxed);
        }
    }
}

/// Maps `size` bytes of fresh zeroed memory.
fn map(size: usize) -> Option<*mut u8> {
    // SAFETY: an anonymous private mapping with no address hint.
    let ptr = unsafe {
        libc::mmap(
            null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return None;
    }
    MAPPED.fetch_add(1, Ordering::Relaxed);
    Some(ptr.cast())
}

/// Unmaps a block made by [`map`].
fn unmap(ptr: *mut u8, size: usize) {
    // SAFETY: `ptr` and `size` describe a whole mapping made by `map` and no longer used.
    unsafe { libc::munmap(ptr.cast(), size) };
    UNMAPPED.fetch_add(1, Ordering::Relaxed);
}
