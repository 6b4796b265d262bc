//! `Rates`: compute and lane speeds measured during the run, for the bandwidth-aware policy.

use crate::graph::Lane;
use std::collections::HashMap;

/// Work done and time taken, per lane.
#[derive(Debug, Default)]
pub struct Rates {
    done: HashMap<Lane, (f64, f64)>,
}

impl Rates {
    /// Records that a task on `lane` did `amount` (flops or bytes) in `seconds`.
    pub fn record(&mut self, lane: Lane, amount: f64, seconds: f64) {
        if amount > 0.0 {
            let entry = self.done.entry(lane).or_default();
            entry.0 += amount;
            entry.1 += seconds;
        }
    }

    /// Measured amount per second on `lane`, once anything has been measured.
    pub fn per_second(&self, lane: Lane) -> Option<f64> {
        self.done
            .get(&lane)
            .filter(|(_, seconds)| *seconds > 0.0)
            .map(|(amount, seconds)| amount / seconds)
    }

    /// Estimated seconds to move `bytes` across every lane of `lanes` in turn. A lane not yet
    /// measured is estimated by its opposite direction (reads by writes, uploads by
    /// downloads), which the left-to-right pass has measured by the time fetches begin.
    pub fn seconds_to_move(&self, bytes: u64, lanes: &[Lane]) -> Option<f64> {
        lanes
            .iter()
            .map(|&lane| {
                let rate = self
                    .per_second(lane)
                    .or_else(|| self.per_second(opposite(lane)?))?;
                Some(bytes as f64 / rate)
            })
            .sum()
    }
}

/// The lane moving data the other way between the same tiers.
fn opposite(lane: Lane) -> Option<Lane> {
    match lane {
        Lane::DiskRead => Some(Lane::DiskWrite),
        Lane::DiskWrite => Some(Lane::DiskRead),
        Lane::Upload => Some(Lane::Download),
        Lane::Download => Some(Lane::Upload),
        Lane::Compute | Lane::Io | Lane::Collective => None,
    }
}
