//! `SimulatedPool`: a caching device allocator like the CUDA ones, on the CPU.
//!
//! Requests are rounded up to 512 bytes and served from the smallest cached free piece that
//! is at most twice their size; failing that from a new segment of the request's size; and
//! only when the device has no room for one, by cutting the smallest larger piece (as caching
//! allocators avoid splitting large blocks for small requests, which fragments them). Freed blocks stay in their segment, merged with free
//! neighbours, so "free" (capacity less reserved) and "allocatable" (what one request can get)
//! differ as on a GPU: a segment part of which is still in use cannot go back. Only wholly
//! unused segments return to the device, on [`MemoryPool::release_cache`].

use super::{Block, MemoryPool, OutOfMemory, PoolUsage};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};

/// Every block is a multiple of this many bytes.
const ROUND: u64 = 512;
/// The most segments `--fragment` may cut the device into.
const MAX_FRAGMENTS: u64 = 1 << 16;

/// How to set up a simulated device.
#[derive(Clone, Debug, Default)]
pub struct PoolConfig {
    /// Bytes the device has (`None`: unlimited).
    pub capacity: Option<u64>,
    /// Pre-fragments the whole device into segments of this size, each pinned in its middle by
    /// a block that is never freed, so no request larger than half a piece can be served.
    pub fragment: Option<u64>,
}

/// A device memory pool that keeps freed blocks cached (see the module documentation).
pub struct SimulatedPool {
    state: Arc<Mutex<PoolState>>,
}

/// Segments by id, the device's capacity, and an index of the cached pieces, so that a request
/// or a usage report costs a lookup rather than a walk over every block (`fits` still walks
/// the cached pieces, once per request it is asked about).
struct PoolState {
    capacity: u64,
    reserved: u64,
    segments: BTreeMap<u64, Segment>,
    next_segment: u64,
    /// Every cached (free) piece as (size, segment, offset): smallest first.
    cached: BTreeSet<(u64, u64, u64)>,
    /// Bytes of the cached pieces.
    cached_bytes: u64,
    /// Bytes of the segments no block of which is in use.
    unused_bytes: u64,
}

/// Memory reserved from the device in one piece, cut into blocks by offset.
struct Segment {
    size: u64,
    pieces: BTreeMap<u64, Piece>,
    /// Blocks of it in use.
    in_use: usize,
}

/// Part of a segment, in use or cached.
#[derive(Clone, Copy)]
struct Piece {
    size: u64,
    used: bool,
}

impl SimulatedPool {
    /// A pool for a device set up by `config`; fails when a fragmented device has no
    /// capacity or would be cut into more than 65536 segments.
    pub fn new(config: PoolConfig) -> crate::Result<Self> {
        let mut state = PoolState {
            capacity: config.capacity.unwrap_or(u64::MAX),
            reserved: 0,
            segments: BTreeMap::new(),
            next_segment: 0,
            cached: BTreeSet::new(),
            cached_bytes: 0,
            unused_bytes: 0,
        };
        if let Some(given) = config.fragment {
            let piece = round_up(given.max(4 * ROUND), ROUND);
            let segments = config.capacity.map(|c| c / piece);
            if segments.is_none_or(|n| n > MAX_FRAGMENTS) {
                return Err(crate::Error::Invalid(format!(
                    "`DeviceOptions::fragment` {} (segments of {piece} bytes: at least {}, in \
                     steps of {ROUND}) would cut the device into {} segments; at most \
                     {MAX_FRAGMENTS}: give a larger size or a smaller `Budgets::device`",
                    crate::ByteSize(given),
                    4 * ROUND,
                    segments.map_or("unlimited".into(), |n| n.to_string())
                )));
            }
            state.fragment(piece);
        }
        Ok(SimulatedPool {
            state: Arc::new(Mutex::new(state)),
        })
    }

    fn state(&self) -> MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl MemoryPool for SimulatedPool {
    fn allocate(&self, bytes: u64) -> Result<Block, OutOfMemory> {
        let size = round_up(bytes.max(1), ROUND);
        let mut state = self.state();
        let (segment, offset) = state.take(size).ok_or_else(|| OutOfMemory {
            usage: state.usage(),
            injected: false,
        })?;
        let pool = Arc::clone(&self.state);
        Ok(Block::new(size, move || {
            let mut state = pool.lock().unwrap_or_else(|e| e.into_inner());
            state.give_back(segment, offset);
        }))
    }

    fn fits(&self, bytes: &[u64]) -> bool {
        let state = self.state();
        let mut cached: Vec<u64> = state.cached.iter().map(|&(size, ..)| size).collect();
        let mut free = state.capacity.saturating_sub(state.reserved);
        for size in bytes.iter().map(|&b| round_up(b.max(1), ROUND)) {
            let smallest = |limit: u64| {
                (0..cached.len())
                    .filter(|&i| cached[i] >= size && cached[i] <= limit)
                    .min_by_key(|&i| cached[i])
            };
            let close = smallest(2 * size);
            if close.is_none() && free >= size {
                free -= size;
                continue;
            }
            match close.or_else(|| smallest(u64::MAX)) {
                Some(i) => cached[i] -= size,
                None => return false,
            }
        }
        true
    }

    fn release_cache(&self) -> u64 {
        let mut state = self.state();
        let unused: Vec<u64> = state
            .segments
            .iter()
            .filter(|(_, s)| s.in_use == 0)
            .map(|(&id, _)| id)
            .collect();
        unused.into_iter().map(|id| state.remove(id)).sum()
    }

    fn set_capacity(&self, bytes: u64) {
        self.state().capacity = bytes;
    }

    fn usage(&self) -> PoolUsage {
        self.state().usage()
    }
}

impl PoolState {
    fn usage(&self) -> PoolUsage {
        PoolUsage {
            capacity: self.capacity,
            reserved: self.reserved,
            allocated: self.reserved - self.cached_bytes,
            cached: self.cached_bytes,
            largest_cached: self.cached.last().map_or(0, |&(size, ..)| size),
            releasable: self.unused_bytes,
        }
    }

    /// Sets `size` bytes aside: a cached piece at most twice as large, else a new segment,
    /// else the smallest larger cached piece.
    fn take(&mut self, size: u64) -> Option<(u64, u64)> {
        let (segment, offset) = match self.smallest_piece(size, 2 * size) {
            Some(found) => found,
            None => match self.reserve(size) {
                Some(id) => (id, 0),
                None => self.smallest_piece(size, u64::MAX)?,
            },
        };
        self.cut(segment, offset, size);
        Some((segment, offset))
    }

    /// The smallest free piece of `size` to `limit` bytes, as (segment, offset); of equal
    /// ones, the first by segment and offset.
    fn smallest_piece(&self, size: u64, limit: u64) -> Option<(u64, u64)> {
        let &(found, segment, offset) = self.cached.range((size, 0, 0)..).next()?;
        (found <= limit).then_some((segment, offset))
    }

    /// A new segment of `size` bytes, if the device has them.
    fn reserve(&mut self, size: u64) -> Option<u64> {
        if self.capacity.saturating_sub(self.reserved) < size {
            return None;
        }
        self.reserved += size;
        let id = self.next_segment;
        self.next_segment += 1;
        let free = Piece { size, used: false };
        let segment = Segment {
            size,
            pieces: BTreeMap::from([(0, free)]),
            in_use: 0,
        };
        self.segments.insert(id, segment);
        self.index(id, 0, size);
        self.unused_bytes += size;
        Some(id)
    }

    /// Gives segment `id`, no block of which is in use, back to the device; returns its size.
    fn remove(&mut self, id: u64) -> u64 {
        let Some(segment) = self.segments.remove(&id) else {
            return 0;
        };
        for (&offset, piece) in &segment.pieces {
            self.unindex(id, offset, piece.size);
        }
        self.reserved -= segment.size;
        self.unused_bytes -= segment.size;
        segment.size
    }

    /// Marks `size` bytes at the start of the free piece at `offset` of `segment` as used.
    fn cut(&mut self, segment: u64, offset: u64, size: u64) {
        let s = self.segments.get_mut(&segment).expect("segment exists");
        let (whole, first) = (s.pieces[&offset].size, s.in_use == 0);
        let rest = s.cut(offset, size);
        let segment_size = s.size;
        self.unindex(segment, offset, whole);
        if let Some((at, bytes)) = rest {
            self.index(segment, at, bytes);
        }
        if first {
            self.unused_bytes -= segment_size;
        }
    }

    /// Returns the block at `offset` of `segment` to the cache.
    fn give_back(&mut self, segment: u64, offset: u64) {
        let Some(s) = self.segments.get_mut(&segment) else {
            return;
        };
        let Some(freed) = s.free(offset) else {
            return;
        };
        let (last, segment_size) = (s.in_use == 0, s.size);
        for (at, bytes) in freed.absorbed {
            self.unindex(segment, at, bytes);
        }
        self.index(segment, freed.start, freed.size);
        if last {
            self.unused_bytes += segment_size;
        }
    }

    /// Adds the free piece of `size` bytes at `offset` of `segment` to the index.
    fn index(&mut self, segment: u64, offset: u64, size: u64) {
        self.cached.insert((size, segment, offset));
        self.cached_bytes += size;
    }

    /// Takes the free piece of `size` bytes at `offset` of `segment` out of the index (a
    /// piece in use is not in it).
    fn unindex(&mut self, segment: u64, offset: u64, size: u64) {
        if self.cached.remove(&(size, segment, offset)) {
            self.cached_bytes -= size;
        }
    }

    /// Reserves the whole device as segments of `piece` bytes, each pinned in the middle.
    fn fragment(&mut self, piece: u64) {
        while let Some(id) = self.reserve(piece) {
            let middle = piece / 2 / ROUND * ROUND;
            self.cut(id, 0, middle);
            self.cut(id, middle, ROUND);
            self.give_back(id, 0);
        }
    }
}

/// What freeing a block did to its segment's free pieces.
struct Freed {
    /// Offset of the merged free piece.
    start: u64,
    /// Its size.
    size: u64,
    /// The free neighbours merged into it, as (offset, size).
    absorbed: Vec<(u64, u64)>,
}

impl Segment {
    /// Marks `size` bytes at the start of the free piece at `offset` as used; returns the free
    /// rest of the piece, if any, as (offset, size).
    fn cut(&mut self, offset: u64, size: u64) -> Option<(u64, u64)> {
        let piece = self.pieces[&offset];
        debug_assert!(!piece.used && piece.size >= size);
        self.pieces.insert(offset, Piece { size, used: true });
        self.in_use += 1;
        (piece.size > size).then(|| {
            let rest = piece.size - size;
            self.pieces.insert(
                offset + size,
                Piece {
                    size: rest,
                    used: false,
                },
            );
            (offset + size, rest)
        })
    }

    /// Frees the piece at `offset`, merging it with free neighbours; `None` when no block in
    /// use starts there.
    fn free(&mut self, offset: u64) -> Option<Freed> {
        let piece = self.pieces.get_mut(&offset).filter(|p| p.used)?;
        piece.used = false;
        self.in_use -= 1;
        let mut start = offset;
        let mut size = piece.size;
        let mut absorbed = Vec::new();
        if let Some(next) = self.pieces.get(&(offset + size)).copied() {
            if !next.used {
                self.pieces.remove(&(offset + size));
                absorbed.push((offset + size, next.size));
                size += next.size;
            }
        }
        let previous = self
            .pieces
            .range(..offset)
            .next_back()
            .map(|(&b, &p)| (b, p));
        if let Some((before, prev)) = previous {
            if !prev.used && before + prev.size == offset {
                self.pieces.remove(&offset);
                absorbed.push((before, prev.size));
                start = before;
                size += prev.size;
            }
        }
        self.pieces.insert(start, Piece { size, used: false });
        Some(Freed {
            start,
            size,
            absorbed,
        })
    }
}

/// `bytes` rounded up to a multiple of `unit`.
fn round_up(bytes: u64, unit: u64) -> u64 {
    bytes.div_ceil(unit).saturating_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn pool(capacity: u64, fragment: Option<u64>) -> SimulatedPool {
        SimulatedPool::new(PoolConfig {
            capacity: Some(capacity),
            fragment,
        })
        .unwrap()
    }

    #[test]
    fn freed_blocks_stay_cached_until_released() {
        let pool = pool(64 * MIB, None);
        let block = pool.allocate(3 * MIB + 1).unwrap();
        assert_eq!(block.bytes(), 3 * MIB + ROUND);
        drop(block);
        let usage = pool.usage();
        assert_eq!((usage.allocated, usage.reserved), (0, 3 * MIB + ROUND));
        assert_eq!(usage.cached, 3 * MIB + ROUND);
        assert_eq!(pool.release_cache(), 3 * MIB + ROUND);
        assert_eq!(pool.usage().reserved, 0);
    }

    #[test]
    fn a_cached_piece_serves_smaller_requests_and_merges_back() {
        let pool = pool(64 * MIB, None);
        drop(pool.allocate(2 * MIB).unwrap());
        let a = pool.allocate(MIB).unwrap();
        let b = pool.allocate(MIB).unwrap();
        assert_eq!(pool.usage().reserved, 2 * MIB, "both came from the cache");
        drop(a);
        drop(b);
        assert_eq!(pool.usage().largest_cached, 2 * MIB, "neighbours merged");
        let small = pool.allocate(MIB / 4).unwrap();
        assert_eq!(
            pool.usage().reserved,
            2 * MIB + MIB / 4,
            "a small request gets its own"
        );
        drop(small);
    }

    #[test]
    fn a_fragmented_pool_has_free_memory_it_cannot_allocate() {
        let pool = pool(64 * MIB, Some(4 * MIB));
        let usage = pool.usage();
        assert_eq!(usage.reserved, 64 * MIB);
        assert!(usage.cached > 63 * MIB);
        assert!(!pool.fits(&[3 * MIB]), "no piece holds 3 MiB");
        assert!(pool.allocate(3 * MIB).is_err());
        assert!(pool.fits(&[MIB, MIB, MIB]));
        assert_eq!(pool.usage().releasable, 0);
        assert_eq!(pool.release_cache(), 0, "pinned segments stay");
    }

    #[test]
    fn fragmenting_needs_a_capacity_and_not_too_many_segments() {
        let unlimited = PoolConfig {
            fragment: Some(MIB),
            ..PoolConfig::default()
        };
        assert!(SimulatedPool::new(unlimited).is_err());
        let err = SimulatedPool::new(PoolConfig {
            capacity: Some(1 << 40),
            fragment: Some(4096),
        })
        .err()
        .unwrap();
        assert!(
            err.to_string().contains("`DeviceOptions::fragment`"),
            "{err}"
        );
    }

    #[test]
    fn a_piece_partly_in_use_cannot_be_released() {
        let pool = pool(4 * MIB, None);
        drop(pool.allocate(3 * MIB).unwrap());
        let filler = pool.allocate(MIB).unwrap();
        let held = pool.allocate(MIB).unwrap();
        drop(filler);
        assert!(
            !pool.fits(&[2 * MIB + MIB / 2]),
            "2 MiB and 1 MiB cached, in two pieces"
        );
        assert_eq!(
            pool.release_cache(),
            MIB,
            "only the wholly unused segment goes"
        );
        drop(held);
        assert_eq!(pool.release_cache(), 3 * MIB);
        assert!(pool.fits(&[4 * MIB]));
    }

    #[test]
    fn a_shrunk_device_refuses_new_segments() {
        let pool = pool(64 * MIB, None);
        let held = pool.allocate(8 * MIB).unwrap();
        pool.set_capacity(8 * MIB);
        assert!(!pool.fits(&[MIB]));
        let err = pool.allocate(MIB).unwrap_err();
        assert!(!err.injected);
        assert_eq!(err.usage.capacity, 8 * MIB);
        drop(held);
        assert!(pool.fits(&[MIB]), "the cache still serves it");
    }
}
