//! The `HEAD[:TAIL]` form of every injected fault on the command line (`enospc:3`, `1:2`,
//! `0.05:7`): what fails, and which occurrence or which seed.

use std::str::FromStr;

/// `text` split at its first `:` into the head and the tail parsed as `T` (`default` when
/// there is no `:`); `None` when the tail does not parse.
pub(crate) fn head_and_tail<T: FromStr>(text: &str, default: T) -> Option<(&str, T)> {
    match text.split_once(':') {
        Some((head, tail)) => Some((head, tail.parse().ok()?)),
        None => Some((text, default)),
    }
}

/// `HEAD[:N]`: the head and which occurrence strikes, N ≥ 1 (the first by default).
pub fn head_and_nth(text: &str) -> Option<(&str, usize)> {
    head_and_tail(text, 1).filter(|&(_, nth)| nth >= 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_is_optional_and_must_parse() {
        assert_eq!(head_and_nth("eio"), Some(("eio", 1)));
        assert_eq!(head_and_nth("eio:3"), Some(("eio", 3)));
        assert_eq!(head_and_nth("eio:0"), None);
        assert_eq!(head_and_nth("eio:x"), None);
        assert_eq!(head_and_tail("0.5", 0u64), Some(("0.5", 0)));
        assert_eq!(head_and_tail("0.5:9", 0u64), Some(("0.5", 9)));
    }
}
