//! `Rates`: compute and lane speeds measured during the run, for the bandwidth-aware policy.

use crate::graph::Lane;
use crate::store::DiskRates;
use std::collections::HashMap;

/// Work done and time taken, per lane, and the caps some lanes are known to run under.
#[derive(Debug, Default)]
pub(crate) struct Rates {
    done: HashMap<Lane, (f64, f64)>,
    caps: HashMap<Lane, f64>,
}

impl Rates {
    /// No measurements yet; the disk lanes known to be capped at `disk` (a throttle).
    pub fn capped(disk: DiskRates) -> Self {
        let caps = [(Lane::DiskRead, disk.read), (Lane::DiskWrite, disk.write)]
            .into_iter()
            .filter_map(|(lane, cap)| Some((lane, cap?.0)))
            .collect();
        Rates {
            done: HashMap::new(),
            caps,
        }
    }

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
    /// downloads), which the left-to-right pass has measured by the time fetches begin, and
    /// never as faster than its cap.
    pub fn seconds_to_move(&self, bytes: u64, lanes: &[Lane]) -> Option<f64> {
        lanes
            .iter()
            .map(|&lane| Some(bytes as f64 / self.estimate(lane)?))
            .sum()
    }

    /// The rate expected of `lane`: measured (or its opposite's), within its cap.
    fn estimate(&self, lane: Lane) -> Option<f64> {
        let measured = self
            .per_second(lane)
            .or_else(|| self.per_second(opposite(lane)?));
        let cap = self.caps.get(&lane).copied();
        match (measured, cap) {
            (Some(rate), Some(cap)) => Some(rate.min(cap)),
            (rate, cap) => rate.or(cap),
        }
    }
}

/// The lane moving data the other way between the same tiers.
fn opposite(lane: Lane) -> Option<Lane> {
    match lane {
        Lane::DiskRead => Some(Lane::DiskWrite),
        Lane::DiskWrite => Some(Lane::DiskRead),
        Lane::Upload => Some(Lane::Download),
        Lane::Download => Some(Lane::Upload),
        Lane::Compute | Lane::Io | Lane::Collective | Lane::Network => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Bandwidth;

    #[test]
    fn an_unmeasured_lane_is_estimated_by_its_opposite_within_its_cap() {
        let mut rates = Rates::capped(DiskRates {
            read: Some(Bandwidth(10.0)),
            write: None,
        });
        assert_eq!(rates.seconds_to_move(100, &[Lane::DiskRead]), Some(10.0));
        assert_eq!(rates.seconds_to_move(100, &[Lane::DiskWrite]), None);
        rates.record(Lane::DiskWrite, 1000.0, 1.0);
        assert_eq!(rates.seconds_to_move(100, &[Lane::DiskRead]), Some(10.0));
        assert_eq!(rates.seconds_to_move(100, &[Lane::DiskWrite]), Some(0.1));
        rates.record(Lane::DiskRead, 5.0, 1.0);
        assert_eq!(rates.seconds_to_move(100, &[Lane::DiskRead]), Some(20.0));
    }
}
