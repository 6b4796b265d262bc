//! `BlockCache`: the global allocator for large buffers (see the module docs).
//!
//! Large buffers are carved from chunks of address space mapped once. A freed buffer's range
//! stays in the chunk, merged with free neighbours, and serves any later request it is large
//! enough for: its pages were written, so reusing them faults in nothing. Pages are given back
//! to the system (`MADV_DONTNEED`) only when fresh memory would take the process past the cap
//! of the runs under way; a range given back reads as zeros and faults its pages in again when
//! used. Written ranges are preferred, the smallest that fits first.

use super::fork_guard::guard_forks;
use super::leases::cap_in_force;
use super::page_size::page_size;
use super::resident::resident_bytes;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The smallest size the cache serves (smaller requests go to the system allocator).
const MIN_BLOCK: usize = 1 << 20;

/// Address space mapped at once (a larger request maps a chunk of its own size).
const CHUNK: usize = 64 << 20;

/// Large buffers carved from mapped chunks, the rest from the system allocator.
pub struct BlockCache;

/// A free range of a chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Free {
    /// Bytes in the range.
    len: usize,
    /// True when its pages are not resident (never written, or given back): reading it gives
    /// zeros, and using it faults its pages in.
    fresh: bool,
}

/// The chunks and their free ranges.
pub(super) struct Arena {
    /// Free ranges by start address.
    free: BTreeMap<usize, Free>,
    /// The same ranges as (fresh, length, start): written ones first, smallest first.
    by_fit: BTreeSet<(bool, usize, usize)>,
    /// Chunks mapped: start → length.
    chunks: BTreeMap<usize, usize>,
}

static ARENA: Mutex<Arena> = Mutex::new(Arena {
    free: BTreeMap::new(),
    by_fit: BTreeSet::new(),
    chunks: BTreeMap::new(),
});
static LIVE: AtomicUsize = AtomicUsize::new(0);
static CACHED: AtomicUsize = AtomicUsize::new(0);
static MAPPED: AtomicUsize = AtomicUsize::new(0);
static UNMAPPED: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Blocks this thread took from fresh memory since it last took the count.
    static MAPPED_HERE: Cell<usize> = const { Cell::new(0) };
}

/// What the block cache holds and has done.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheStats {
    /// Bytes of blocks in use.
    pub live_bytes: usize,
    /// Bytes of freed blocks kept written for reuse.
    pub cached_bytes: usize,
    /// Blocks served from fresh memory so far (their pages faulted in anew).
    pub mapped: usize,
    /// Free ranges given back to the system so far to stay within the cap.
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

/// Blocks the calling thread took from fresh memory (not reused) since it last asked: the
/// count starts again from zero. How a task's fresh memory is counted (its primitive counts
/// carry it to the trace).
pub fn take_mapped_here() -> usize {
    MAPPED_HERE.try_with(Cell::take).unwrap_or(0)
}

/// True when the cache serves this request.
fn cached_kind(layout: Layout) -> bool {
    layout.size() >= MIN_BLOCK && layout.align() <= page_size()
}

/// `size` rounded up to whole pages (every range starts and ends on a page boundary).
fn pages(size: usize) -> usize {
    size.next_multiple_of(page_size())
}

impl Arena {
    /// Adds the free range at `start`, merged with free neighbours of the same kind in its
    /// chunk.
    fn insert(&mut self, mut start: usize, mut range: Free) {
        let (chunk_start, chunk_len) = self.chunk_of(start);
        let before = self.free.range(..start).next_back().map(|(&s, &f)| (s, f));
        if let Some((s, f)) = before {
            if s + f.len == start && s >= chunk_start && f.fresh == range.fresh {
                self.remove(s);
                start = s;
                range.len += f.len;
            }
        }
        let end = start + range.len;
        if let Some(&after) = self.free.get(&end) {
            if end < chunk_start + chunk_len && after.fresh == range.fresh {
                self.remove(end);
                range.len += after.len;
            }
        }
        if !range.fresh {
            CACHED.fetch_add(range.len, Ordering::Relaxed);
        }
        self.free.insert(start, range);
        self.by_fit.insert((range.fresh, range.len, start));
    }

    /// Takes the free range at `start` out.
    fn remove(&mut self, start: usize) -> Free {
        let range = self.free.remove(&start).expect("a free range starts there");
        self.by_fit.remove(&(range.fresh, range.len, start));
        if !range.fresh {
            CACHED.fetch_sub(range.len, Ordering::Relaxed);
        }
        range
    }

    /// The chunk holding `address`: its start and length.
    fn chunk_of(&self, address: usize) -> (usize, usize) {
        self.chunks
            .range(..=address)
            .next_back()
            .map_or((address, 0), |(&s, &l)| (s, l))
    }

    /// The start of the smallest free range of the kind `fresh` that holds `size` bytes.
    fn fit(&self, fresh: bool, size: usize) -> Option<usize> {
        let (_, _, start) = *self
            .by_fit
            .range((fresh, size, 0)..=(fresh, usize::MAX, usize::MAX))
            .next()?;
        Some(start)
    }

    /// `size` bytes from the free range at `start`, the rest of it left free.
    fn carve(&mut self, start: usize, size: usize) {
        let range = self.remove(start);
        if range.len > size {
            let rest = Free {
                len: range.len - size,
                fresh: range.fresh,
            };
            self.insert(start + size, rest);
        }
    }

    /// Gives written free ranges back to the system, the largest first, until `bytes` more fit
    /// under `cap` with `resident` bytes held (or none is left).
    fn give_back_for(&mut self, bytes: usize, cap: usize, mut resident: usize) {
        while resident + bytes > cap {
            let Some(len) = self.give_back_largest() else {
                break;
            };
            resident = resident_bytes().unwrap_or_else(|| resident.saturating_sub(len));
        }
    }

    /// Gives the largest written free range back to the system; its length, or `None` when
    /// there is none.
    fn give_back_largest(&mut self) -> Option<usize> {
        let &(_, len, start) = self.by_fit.range(..(true, 0, 0)).next_back()?;
        self.remove(start);
        // SAFETY: the range lies in a chunk this cache mapped and no block uses it; its pages
        // read as zeros after.
        unsafe { libc::madvise(start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
        UNMAPPED.fetch_add(1, Ordering::Relaxed);
        self.insert(start, Free { len, fresh: true });
        Some(len)
    }

    /// A block of `size` bytes (whole pages), and whether it reads as zeros.
    fn take(&mut self, size: usize) -> Option<(*mut u8, bool)> {
        if let Some(start) = self.fit(false, size) {
            self.carve(start, size);
            return Some((start as *mut u8, false));
        }
        // Fresh memory grows the process: within the cap in force, written free ranges are
        // given back first (blocks in use are never touched, so the cap never fails a request).
        let cap = cap_in_force();
        if cap != usize::MAX {
            self.give_back_for(size, cap, resident_bytes().unwrap_or(0));
        }
        let start = match self.fit(true, size) {
            Some(start) => start,
            None => self.map_chunk(size)?,
        };
        self.carve(start, size);
        MAPPED.fetch_add(1, Ordering::Relaxed);
        let _ = MAPPED_HERE.try_with(|mapped| mapped.set(mapped.get() + 1));
        Some((start as *mut u8, true))
    }

    /// Maps a chunk that holds `size` bytes, free and fresh; its start.
    fn map_chunk(&mut self, size: usize) -> Option<usize> {
        let len = size.max(CHUNK);
        // SAFETY: an anonymous private mapping with no address hint.
        let ptr = unsafe {
            libc::mmap(
                null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return None;
        }
        let start = ptr as usize;
        self.chunks.insert(start, len);
        self.insert(start, Free { len, fresh: true });
        Some(start)
    }
}

/// True when every page of the `len` bytes from `start` is resident. A freed block is kept as
/// written (reusing it adds nothing to resident memory) only if it is: a block may have been
/// reserved and written only in part (a GEMM library's workspace, a vector that grew by
/// doubling), and reusing its untouched pages would grow the process past the cap unseen;
/// such a block is given back whole.
fn all_resident(start: usize, len: usize) -> bool {
    const PAGES_PER_CALL: usize = 4096;
    let page = page_size();
    let mut status = [0u8; PAGES_PER_CALL];
    (start..start + len)
        .step_by(PAGES_PER_CALL * page)
        .all(|from| {
            let bytes = (start + len - from).min(PAGES_PER_CALL * page);
            // SAFETY: the range lies in a mapping of this cache; `status` holds one byte per
            // page of it.
            let read =
                unsafe { libc::mincore(from as *mut libc::c_void, bytes, status.as_mut_ptr()) };
            read == 0 && status[..bytes.div_ceil(page)].iter().all(|&s| s & 1 == 1)
        })
}

/// The arena, even if a thread panicked while holding it (it stays consistent), guarded across
/// forks.
pub(super) fn lock_arena() -> std::sync::MutexGuard<'static, Arena> {
    guard_forks();
    ARENA.lock().unwrap_or_else(|e| e.into_inner())
}

/// A block of `size` bytes from the arena, counted as live, and whether it reads as zeros.
fn taken(size: usize) -> Option<(*mut u8, bool)> {
    let block = lock_arena().take(size)?;
    LIVE.fetch_add(size, Ordering::Relaxed);
    Some(block)
}

unsafe impl GlobalAlloc for BlockCache {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !cached_kind(layout) {
            // SAFETY: forwarded with the caller's layout.
            return unsafe { System.alloc(layout) };
        }
        taken(pages(layout.size())).map_or(null_mut(), |(block, _)| block)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !cached_kind(layout) {
            // SAFETY: forwarded with the caller's layout.
            return unsafe { System.alloc_zeroed(layout) };
        }
        match taken(pages(layout.size())) {
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
        let size = pages(layout.size());
        let fresh = !all_resident(ptr as usize, size);
        if fresh {
            // SAFETY: the block is ours again and no longer used; its pages read as zeros after.
            unsafe { libc::madvise(ptr.cast(), size, libc::MADV_DONTNEED) };
        }
        lock_arena().insert(ptr as usize, Free { len: size, fresh });
        LIVE.fetch_sub(size, Ordering::Relaxed);
    }
}

/// Gives every written free range back and unmaps the chunks no block uses: what the process
/// no longer holds for a run once none is under way ([`super::CapLease`] calls it when the
/// last lease ends).
pub(super) fn release_cached() {
    let mut arena = lock_arena();
    while arena.give_back_largest().is_some() {}
    let chunks: Vec<(usize, usize)> = arena.chunks.iter().map(|(&s, &l)| (s, l)).collect();
    for (start, len) in chunks {
        if arena.free.get(&start).is_some_and(|f| f.len == len) {
            arena.remove(start);
            arena.chunks.remove(&start);
            // SAFETY: the whole chunk is free: no block uses it.
            unsafe { libc::munmap(start as *mut libc::c_void, len) };
        }
    }
}
