//! How many singular values a truncation keeps: the cap, the cutoff, and at least one.

/// The number of leading `singular` values (in decreasing order) to keep: at most `cap`, none
/// below `cutoff · σ_max` when `cutoff > 0`, and always at least one.
pub(crate) fn kept_rank(singular: &[f64], cap: usize, cutoff: f64) -> usize {
    let largest = singular.first().copied().unwrap_or(0.0);
    if cutoff > 0.0 && largest <= 0.0 {
        return 1;
    }
    let above = singular
        .iter()
        .take_while(|&&s| cutoff <= 0.0 || s >= cutoff * largest)
        .count();
    above.min(cap).max(1).min(singular.len().max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_and_the_cutoff_both_bind_and_one_value_always_stays() {
        let s = [4.0, 2.0, 1.0, 0.1, 0.01];
        assert_eq!(kept_rank(&s, 10, 0.0), 5);
        assert_eq!(kept_rank(&s, 3, 0.0), 3);
        assert_eq!(kept_rank(&s, 10, 0.25), 3);
        assert_eq!(kept_rank(&s, 2, 0.25), 2);
        assert_eq!(kept_rank(&s, 10, 0.999), 1);
        assert_eq!(kept_rank(&[0.0, 0.0], 10, 0.5), 1);
        assert_eq!(kept_rank(&[0.0, 0.0], 10, 0.0), 2);
    }
}
