//! `Rates`: compute and lane speeds measured during the run, for the bandwidth-aware policy.
//! A disk transfer's time is a latency plus its bytes at a bandwidth: both are fitted to the
//! transfers measured, and known beforehand where the filesystem is emulated.

use crate::store::{DiskIo, DiskRequests};
use srcflow_graph::graph::Lane;
use std::collections::HashMap;

/// Work done and time taken, per lane; the caps some lanes are known to run under; the
/// emulated filesystem, if any, with the requests in flight per transfer.
#[derive(Debug, Default)]
pub(crate) struct Rates {
    done: HashMap<Lane, Measured>,
    caps: HashMap<Lane, f64>,
    emulated: Option<(DiskRequests, usize)>,
}

/// Sums over the tasks of one lane, for a least-squares line of seconds against amount.
#[derive(Clone, Copy, Debug, Default)]
struct Measured {
    tasks: f64,
    amount: f64,
    seconds: f64,
    amount_squared: f64,
    amount_seconds: f64,
    smallest: f64,
    largest: f64,
}

impl Measured {
    /// Adds a task that did `amount` in `seconds`.
    fn add(&mut self, amount: f64, seconds: f64) {
        self.smallest = if self.tasks == 0.0 {
            amount
        } else {
            self.smallest.min(amount)
        };
        self.largest = self.largest.max(amount);
        self.tasks += 1.0;
        self.amount += amount;
        self.seconds += seconds;
        self.amount_squared += amount * amount;
        self.amount_seconds += amount * seconds;
    }

    /// The fitted seconds every task costs beyond its amount, and amount per second: a
    /// least-squares line once tasks of sizes at least [`SPREAD`] apart were measured (a
    /// latency of 0 or more), else none and the mean rate.
    fn line(&self) -> Option<(f64, f64)> {
        if self.seconds <= 0.0 {
            return None;
        }
        let spread = self.tasks * self.amount_squared - self.amount * self.amount;
        let mean_rate = (0.0, self.amount / self.seconds);
        if self.largest < SPREAD * self.smallest || spread <= 0.0 {
            return Some(mean_rate);
        }
        let slope = (self.tasks * self.amount_seconds - self.amount * self.seconds) / spread;
        let latency = (self.seconds - slope * self.amount) / self.tasks;
        match slope > 0.0 && latency >= 0.0 {
            true => Some((latency, 1.0 / slope)),
            false => Some(mean_rate),
        }
    }
}

/// How many times the smallest task the largest must be before a latency is fitted: sizes
/// closer than that leave the line's intercept to noise.
const SPREAD: f64 = 2.0;

impl Rates {
    /// No measurements yet; the disk lanes known to be capped (a throttle) and the emulated
    /// filesystem, as `disk` says.
    pub fn for_disk(disk: &DiskIo) -> Self {
        let caps = [
            (Lane::DiskRead, disk.rates.read),
            (Lane::DiskWrite, disk.rates.write),
        ]
        .into_iter()
        .filter_map(|(lane, cap)| Some((lane, cap?.0)))
        .collect();
        Rates {
            done: HashMap::new(),
            caps,
            emulated: disk.emulate.map(|requests| (requests, disk.depth)),
        }
    }

    /// Records that a task on `lane` did `amount` (flops or bytes) in `seconds`.
    pub fn record(&mut self, lane: Lane, amount: f64, seconds: f64) {
        if amount > 0.0 {
            self.done.entry(lane).or_default().add(amount, seconds);
        }
    }

    /// Measured amount per second on `lane`, once anything has been measured.
    pub fn per_second(&self, lane: Lane) -> Option<f64> {
        self.done
            .get(&lane)
            .filter(|m| m.seconds > 0.0)
            .map(|m| m.amount / m.seconds)
    }

    /// Estimated seconds to move `bytes` across every lane of `lanes` in turn. A lane not yet
    /// measured is estimated by its opposite direction (reads by writes, uploads by
    /// downloads), which the left-to-right pass has measured by the time fetches begin, or,
    /// for a disk lane, by the emulated filesystem; never as faster than its cap.
    pub fn seconds_to_move(&self, bytes: u64, lanes: &[Lane]) -> Option<f64> {
        lanes.iter().map(|&lane| self.seconds_on(lane, bytes)).sum()
    }

    /// Estimated seconds to move `bytes` on `lane`.
    fn seconds_on(&self, lane: Lane, bytes: u64) -> Option<f64> {
        let line = |lane: Lane| self.done.get(&lane).and_then(Measured::line);
        let measured = line(lane)
            .or_else(|| line(opposite(lane)?))
            .map(|(latency, rate)| latency + bytes as f64 / rate);
        let emulated = || {
            let (requests, depth) = self.emulated.filter(|_| is_disk(lane))?;
            Some(requests.transfer_seconds(bytes, depth))
        };
        let estimate = measured.or_else(emulated);
        let capped = self.caps.get(&lane).map(|cap| bytes as f64 / cap);
        match (estimate, capped) {
            (Some(seconds), Some(least)) => Some(seconds.max(least)),
            (seconds, least) => seconds.or(least),
        }
    }
}

/// True for the lanes between host memory and the scratch disk.
fn is_disk(lane: Lane) -> bool {
    matches!(lane, Lane::DiskRead | Lane::DiskWrite)
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
    use crate::store::DiskRates;
    use srcflow_tensor::Bandwidth;

    #[test]
    fn an_unmeasured_lane_is_estimated_by_its_opposite_within_its_cap() {
        let disk = DiskIo {
            rates: DiskRates {
                read: Some(Bandwidth(10.0)),
                write: None,
            },
            ..DiskIo::default()
        };
        let mut rates = Rates::for_disk(&disk);
        assert_eq!(rates.seconds_to_move(100, &[Lane::DiskRead]), Some(10.0));
        assert_eq!(rates.seconds_to_move(100, &[Lane::DiskWrite]), None);
        rates.record(Lane::DiskWrite, 1000.0, 1.0);
        assert_eq!(rates.seconds_to_move(100, &[Lane::DiskRead]), Some(10.0));
        assert_eq!(rates.seconds_to_move(100, &[Lane::DiskWrite]), Some(0.1));
        rates.record(Lane::DiskRead, 5.0, 1.0);
        assert_eq!(rates.seconds_to_move(100, &[Lane::DiskRead]), Some(20.0));
    }

    #[test]
    fn a_latency_is_fitted_from_transfers_of_different_sizes() {
        let mut rates = Rates::for_disk(&DiskIo::default());
        // 20 ms per transfer, then 100 bytes per second.
        for bytes in [100.0, 300.0, 200.0] {
            rates.record(Lane::DiskRead, bytes, 0.02 + bytes / 100.0);
        }
        let seconds = rates.seconds_to_move(1000, &[Lane::DiskRead]).unwrap();
        assert!((seconds - 10.02).abs() < 1e-9, "{seconds}");
    }

    #[test]
    fn sizes_too_close_for_a_latency_give_the_mean_rate() {
        let mut rates = Rates::for_disk(&DiskIo::default());
        // 2.0 and 2.1 MB in 20.0 and 20.2 ms: a line would say 16 ms and 500 MB/s.
        rates.record(Lane::DiskRead, 2.0e6, 0.0200);
        rates.record(Lane::DiskRead, 2.1e6, 0.0202);
        let seconds = rates
            .seconds_to_move(100_000_000, &[Lane::DiskRead])
            .unwrap();
        assert!((seconds - 1e8 * 0.0402 / 4.1e6).abs() < 1e-9, "{seconds}");
        // A lane measured at zero seconds is estimated by its opposite.
        rates.record(Lane::Upload, 1e6, 0.0);
        rates.record(Lane::Download, 1e6, 1.0);
        assert_eq!(rates.seconds_to_move(1000, &[Lane::Upload]), Some(1e-3));
    }

    #[test]
    fn an_emulated_filesystem_is_known_before_it_is_measured() {
        let disk = DiskIo {
            depth: 1,
            emulate: Some("20ms,10MiB/s,40MiB/s".parse().unwrap()),
            ..DiskIo::default()
        };
        let rates = Rates::for_disk(&disk);
        let bytes = 8 << 20;
        let seconds = rates.seconds_to_move(bytes, &[Lane::DiskRead]).unwrap();
        assert!((seconds - 0.82).abs() < 1e-9, "{seconds}");
        assert_eq!(rates.seconds_to_move(bytes, &[Lane::Upload]), None);
    }
}
