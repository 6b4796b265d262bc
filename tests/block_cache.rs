//! The block cache as this test binary's global allocator: it reuses freed blocks for requests
//! of any size they hold, hands out zeroed memory when asked, and gives cached memory back
//! rather than pass its cap.

use srcflow_tensor::alloc::{resident_bytes, stats, BlockCache, CapLease};

#[global_allocator]
static ALLOCATOR: BlockCache = BlockCache;

const MB: usize = 1 << 20;

#[test]
fn blocks_are_reused_zeroed_and_released_under_the_cap() {
    // One test: the cache and its counters are process-wide.
    let mut dirty = vec![7u8; 8 * MB];
    dirty[0] = 9;
    drop(dirty);
    let before = stats();
    let clean = vec![0u8; 8 * MB];
    assert!(
        clean.iter().all(|&b| b == 0),
        "a reused block is zeroed for vec![0; n]"
    );
    assert_eq!(stats().mapped, before.mapped, "the freed block was reused");
    drop(clean);
    let smaller = (vec![3u8; 5 * MB], vec![4u8; 2 * MB]);
    assert_eq!(
        stats().mapped,
        before.mapped,
        "a freed block serves smaller requests of other sizes"
    );
    drop(smaller);

    let cached_before = stats().cached_bytes;
    assert!(cached_before >= 8 * MB);
    let resident = resident_bytes().expect("Linux reports resident memory");
    let lease = CapLease::new(Some((resident + 2 * MB) as u64));
    let reused = vec![1u8; 5 * MB];
    assert_eq!(
        stats().unmapped,
        before.unmapped,
        "reusing cached memory adds nothing resident: nothing is given back"
    );
    let larger = vec![2u8; 16 * MB];
    drop(lease);
    assert!(
        stats().unmapped > before.unmapped,
        "cached memory was given back before fresh memory passed the cap"
    );
    assert!(stats().cached_bytes < cached_before);
    drop((reused, larger));
}
