//! `OomFault`: injected allocation failures (`--inject-oom RATE[:SEED]`), to prove recovery.

use crate::error::{Error, Result};
use crate::fault_spec::head_and_tail;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

/// Fails each device allocation with probability `rate`, drawn from `seed` and the allocation's
/// position in the run, so a seed replays the same failures for the same order of allocations.
#[derive(Debug)]
pub struct OomFault {
    rate: f64,
    seed: u64,
    allocations: AtomicU64,
}

impl OomFault {
    /// A fault that fails a fraction `rate` (0 to 1) of allocations.
    pub fn new(rate: f64, seed: u64) -> Result<Self> {
        if !(0.0..=1.0).contains(&rate) {
            return Err(Error::Invalid(format!(
                "the injected out-of-memory rate must be between 0 and 1, found {rate}"
            )));
        }
        Ok(OomFault {
            rate,
            seed,
            allocations: AtomicU64::new(0),
        })
    }

    /// True when this allocation is one chosen to fail.
    pub fn strikes(&self) -> bool {
        let n = self.allocations.fetch_add(1, Ordering::Relaxed);
        let draw = splitmix64(self.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        ((draw >> 11) as f64) / ((1u64 << 53) as f64) < self.rate
    }
}

impl Clone for OomFault {
    /// A fault with the same rate and seed that starts counting allocations afresh.
    fn clone(&self) -> Self {
        OomFault {
            rate: self.rate,
            seed: self.seed,
            allocations: AtomicU64::new(0),
        }
    }
}

impl FromStr for OomFault {
    type Err = Error;

    /// Parses `RATE` or `RATE:SEED` (seed 0 by default).
    fn from_str(text: &str) -> Result<Self> {
        let bad = || {
            Error::Invalid(format!(
                "cannot read out-of-memory fault '{text}': expected RATE[:SEED], a rate from 0 to 1"
            ))
        };
        let (rate, seed) = head_and_tail(text, 0).ok_or_else(bad)?;
        let rate: f64 = rate.parse().map_err(|_| bad())?;
        OomFault::new(rate, seed)
    }
}

/// One step of the SplitMix64 generator: a well-mixed 64-bit value from `x`.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strikes_about_the_rate_asked() {
        let fault: OomFault = "0.2:7".parse().unwrap();
        let hits = (0..10_000).filter(|_| fault.strikes()).count();
        assert!((1_800..2_200).contains(&hits), "{hits} of 10000");
        let never: OomFault = "0".parse().unwrap();
        assert!((0..1000).all(|_| !never.strikes()));
    }

    #[test]
    fn bad_rates_are_refused_by_name() {
        // Each error names the culprit: the rate out of range, or the text it could not read.
        for (text, culprit) in [
            ("1.5", "must be between 0 and 1, found 1.5"),
            ("-0.1", "must be between 0 and 1, found -0.1"),
            (
                "x",
                "cannot read out-of-memory fault 'x': expected RATE[:SEED]",
            ),
            ("0.1:y", "cannot read out-of-memory fault '0.1:y'"),
        ] {
            let err = text.parse::<OomFault>().unwrap_err().to_string();
            assert!(err.contains(culprit), "{text}: {err}");
        }
    }
}
