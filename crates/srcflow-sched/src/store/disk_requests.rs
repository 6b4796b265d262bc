//! `DiskRequests`: a filesystem as requests see it — each waits a latency, then moves at most a
//! stream's bandwidth, all together at most a total — parsed from `--disk-emulate`, fitted by
//! `srcflow calibrate`, and timed the same way by the emulated disk and the simulator.

use super::SpillFile;
use serde::{Deserialize, Serialize};
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::Bandwidth;
use std::fmt;
use std::str::FromStr;

/// Latency, bandwidth per request and bandwidth of all requests together of a filesystem.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskRequests {
    /// Seconds each request waits before its bytes move.
    pub latency_s: f64,
    /// Bytes per second one request moves at most.
    pub stream_bytes_per_s: f64,
    /// Bytes per second all requests in flight move together at most.
    pub total_bytes_per_s: f64,
}

/// The shared link all requests cross, on a clock of seconds: it moves one request's bytes at
/// a time, in the order the requests reached it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Link {
    /// When the link has moved every byte reserved so far.
    free_at: f64,
}

impl Link {
    /// Reserves the link for a request of `bytes` issued at `issued`: the moment it ends, after
    /// its latency, no sooner than its stream's bandwidth allows, and after the link has
    /// moved the bytes of the requests before it and its own.
    pub fn request(&mut self, disk: &DiskRequests, issued: f64, bytes: u64) -> f64 {
        let moving = issued + disk.latency_s;
        let bytes = bytes as f64;
        self.free_at = self.free_at.max(moving) + bytes / disk.total_bytes_per_s;
        self.free_at.max(moving + bytes / disk.stream_bytes_per_s)
    }
}

impl DiskRequests {
    /// Seconds one transfer of `bytes` takes alone on this filesystem with `depth` requests in
    /// flight: its requests (as [`SpillFile`] cuts them) issued in order, each as soon as one
    /// of the `depth` before it has ended.
    pub fn transfer_seconds(&self, bytes: u64, depth: usize) -> f64 {
        let request = SpillFile::request_bytes(bytes, depth) as u64;
        let mut link = Link::default();
        let mut slots = vec![0.0_f64; depth.max(1)];
        let mut left = SpillFile::length_holding(bytes);
        let mut end = 0.0_f64;
        while left > 0 {
            let this = request.min(left);
            let slot = slots
                .iter_mut()
                .min_by(|a, b| a.total_cmp(b))
                .expect("a slot");
            *slot = link.request(self, *slot, this);
            end = end.max(*slot);
            left -= this;
        }
        end
    }

    /// Fails unless every number is positive and finite (latency may be zero); the error
    /// names the one that is not.
    pub fn check(&self) -> Result<()> {
        let rates = [
            ("stream bandwidth", self.stream_bytes_per_s),
            ("total bandwidth", self.total_bytes_per_s),
        ];
        for (what, rate) in rates {
            if !(rate.is_finite() && rate >= SLOWEST) {
                return Err(Error::Invalid(format!(
                    "disk requests: the {what} {} is not a finite rate of at least {}",
                    Bandwidth(rate),
                    Bandwidth(SLOWEST)
                )));
            }
        }
        if !(self.latency_s.is_finite() && (0.0..=MOST_LATENCY_S).contains(&self.latency_s)) {
            return Err(Error::Invalid(format!(
                "disk requests: latency {} s is not between 0 and {MOST_LATENCY_S} s",
                self.latency_s
            )));
        }
        Ok(())
    }
}

/// The slowest rate an emulated or modelled disk may have (as `--disk-bandwidth`'s floor).
const SLOWEST: f64 = 1e6;

/// The longest latency a request may have.
const MOST_LATENCY_S: f64 = 10.0;

impl FromStr for DiskRequests {
    type Err = Error;

    /// Reads `LAT,STREAM,TOTAL`: `20ms,10MiB/s,40MiB/s`.
    fn from_str(text: &str) -> Result<Self> {
        let bad = |why: String| {
            Error::Invalid(format!(
                "cannot read disk requests '{text}': {why}; expected LAT,STREAM,TOTAL such as \
                 20ms,10MiB/s,40MiB/s (each request waits LAT, then moves at most STREAM; all \
                 requests together move at most TOTAL)"
            ))
        };
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let [latency, stream, total] = parts[..] else {
            return Err(bad(format!("{} parts, not 3", parts.len())));
        };
        let rate = |part: &str| part.parse::<Bandwidth>().map_err(|e| bad(e.to_string()));
        let requests = DiskRequests {
            latency_s: seconds(latency).ok_or_else(|| bad(format!("'{latency}' is no latency")))?,
            stream_bytes_per_s: rate(stream)?.0,
            total_bytes_per_s: rate(total)?.0,
        };
        requests.check().map_err(|e| bad(e.to_string()))?;
        Ok(requests)
    }
}

/// Seconds from a time with its unit ([`srcflow_tensor::size::seconds`]), or `0`.
fn seconds(text: &str) -> Option<f64> {
    match text.parse::<f64>() {
        Ok(0.0) => Some(0.0),
        _ => srcflow_tensor::size::seconds(text),
    }
}

impl fmt::Display for DiskRequests {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}ms,{},{}",
            self.latency_s * 1e3,
            Bandwidth(self.stream_bytes_per_s),
            Bandwidth(self.total_bytes_per_s)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = 1024.0 * 1024.0;

    #[test]
    fn requests_parse_and_bad_ones_are_named() {
        let disk: DiskRequests = "20ms,10MiB/s,40MiB/s".parse().unwrap();
        assert_eq!(disk.latency_s, 0.02);
        assert_eq!(disk.stream_bytes_per_s, 10.0 * MIB);
        assert_eq!(disk.total_bytes_per_s, 40.0 * MIB);
        let again: DiskRequests = disk.to_string().parse().unwrap();
        assert!((again.latency_s - disk.latency_s).abs() < 1e-12);
        for (text, culprit) in [
            ("20ms,10MiB/s", "2 parts"),
            ("20,10MiB/s,40MiB/s", "'20' is no latency"),
            ("20ms,fast,40MiB/s", "'fast'"),
            ("20ms,10kB/s,40MiB/s", "stream bandwidth"),
            ("20s,10MiB/s,40MiB/s", "latency 20 s"),
        ] {
            let err = text.parse::<DiskRequests>().unwrap_err().to_string();
            assert!(
                err.contains(culprit) && err.contains("LAT,STREAM,TOTAL"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn depth_buys_bandwidth_up_to_the_total() {
        let disk: DiskRequests = "20ms,10MiB/s,40MiB/s".parse().unwrap();
        let bytes = 64 * MIB as u64;
        let alone = disk.transfer_seconds(bytes, 1);
        // Eight 8 MiB requests one after another: each 20 ms and 0.8 s.
        assert!((alone - 8.0 * (0.02 + 0.8)).abs() < 1e-9, "{alone}");
        let four = disk.transfer_seconds(bytes, 4);
        assert!((four - 2.0 * (0.02 + 0.8)).abs() < 1e-9, "{four}");
        // Past four requests the total bounds it: 64 MiB at 40 MiB/s after one latency.
        let eight = disk.transfer_seconds(bytes, 8);
        assert!((eight - (0.02 + 1.6)).abs() < 1e-9, "{eight}");
        assert!(disk.transfer_seconds(bytes, 32) >= eight - 1e-9);
    }
}
