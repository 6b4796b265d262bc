//! `even_share`: items cut into contiguous parts as evenly as possible (sketch columns between
//! devices, kernel threads between the devices of a process).

use std::ops::Range;

/// Share `part` of `total` items cut into `parts` contiguous shares whose sizes differ by at
/// most one (the first shares are the larger; the last are empty when `total < parts`).
pub fn even_share(total: usize, parts: usize, part: usize) -> Range<usize> {
    (part * total).div_ceil(parts)..((part + 1) * total).div_ceil(parts)
}

#[cfg(test)]
mod tests {
    use super::even_share as share;

    #[test]
    fn shares_are_contiguous_balanced_and_cover_everything() {
        for total in 0..20 {
            for parts in 1..6 {
                let sizes: Vec<usize> = (0..parts).map(|p| share(total, parts, p).len()).collect();
                assert_eq!(sizes.iter().sum::<usize>(), total);
                let (lo, hi) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
                assert!(hi - lo <= 1, "{total} in {parts}: {sizes:?}");
                for p in 1..parts {
                    assert_eq!(share(total, parts, p).start, share(total, parts, p - 1).end);
                }
            }
        }
    }
}
