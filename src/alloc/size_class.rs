//! Size classes of the block cache: eight per doubling, so a block is at most 12.5 % larger
//! than the request it serves (the excess is address space; only touched pages are resident).

/// The smallest size the cache serves (smaller requests go to the system allocator).
pub const MIN_BLOCK: usize = 1 << 20;
/// Classes per doubling of size.
const STEPS: usize = 8;
/// Number of classes: sizes up to 2^63 bytes.
pub const CLASSES: usize = (63 - MIN_BLOCK.trailing_zeros() as usize + 1) * STEPS;

/// The class serving `size` bytes (at least [`MIN_BLOCK`]).
pub fn class_of(size: usize) -> usize {
    let octave = (usize::BITS - 1 - size.leading_zeros()) as usize;
    let base = 1usize << octave;
    let step = base / STEPS;
    let within = (size - base).div_ceil(step);
    (octave - MIN_BLOCK.trailing_zeros() as usize) * STEPS + within
}

/// Bytes of a block of class `class`.
pub fn class_size(class: usize) -> usize {
    let octave = class / STEPS + MIN_BLOCK.trailing_zeros() as usize;
    let base = 1usize << octave;
    base + (class % STEPS) * (base / STEPS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_class_holds_its_requests_with_little_waste() {
        for size in [
            MIN_BLOCK,
            MIN_BLOCK + 1,
            3 << 20,
            16_777_216,
            16_777_217,
            1 << 33,
        ] {
            let block = class_size(class_of(size));
            assert!(
                block >= size && (block - size) * 8 <= size,
                "{size} → {block}"
            );
        }
        assert_eq!(class_of(MIN_BLOCK), 0);
        assert!(class_of(usize::MAX / 2) < CLASSES);
    }
}
