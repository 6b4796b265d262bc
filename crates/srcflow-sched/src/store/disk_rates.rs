//! `DiskRates`: the caps of the disk reader and writer lanes, as `--disk-bandwidth` takes them.

use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::Bandwidth;
use std::fmt;
use std::str::FromStr;

/// Rate caps of the two disk lanes; `None` leaves a lane uncapped.
///
/// Parsed from `200MB/s` (both lanes), `read=40MB/s`, `write=1GB/s`, or both separated by a
/// comma: `read=40MB/s,write=400MB/s`. A filesystem whose reads are slower than its writes
/// (a write-back cache in front of a parallel filesystem) is `read=…` alone.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DiskRates {
    /// Cap of the reader lane (fetches from disk).
    pub read: Option<Bandwidth>,
    /// Cap of the writer lane (spills to disk).
    pub write: Option<Bandwidth>,
}

impl DiskRates {
    /// Both lanes capped at `rate`.
    pub fn both(rate: Bandwidth) -> Self {
        DiskRates {
            read: Some(rate),
            write: Some(rate),
        }
    }
}

impl FromStr for DiskRates {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        let rates = DiskRates::parse(text)?;
        rates.check()?;
        Ok(rates)
    }
}

/// The slowest disk rate a run accepts.
const SLOWEST: Bandwidth = Bandwidth(1e6);

impl DiskRates {
    /// Checks that every cap is a finite rate of at least 1 MB/s; the error names the rate.
    pub fn check(&self) -> Result<()> {
        for rate in [self.read, self.write].into_iter().flatten() {
            if !(rate.0 >= SLOWEST.0 && rate.0.is_finite()) {
                return Err(Error::Invalid(format!(
                    "`DiskIo::rates`: disk rate {rate} is not a finite rate of at least {SLOWEST} (a run spilling to so slow a disk would not finish)"
                )));
            }
        }
        Ok(())
    }

    /// Reads `text` as both lanes' rate, or as `read=` and `write=` rates.
    fn parse(text: &str) -> Result<Self> {
        if !text.contains('=') {
            return text.parse().map(DiskRates::both);
        }
        let mut rates = DiskRates::default();
        for part in text.split(',') {
            let (lane, rate) = part.split_once('=').ok_or_else(|| bad(text))?;
            let slot = match lane.trim() {
                "read" => &mut rates.read,
                "write" => &mut rates.write,
                _ => return Err(bad(text)),
            };
            if slot.replace(rate.parse()?).is_some() {
                return Err(bad(text));
            }
        }
        Ok(rates)
    }
}

/// The error for unreadable rate text.
fn bad(text: &str) -> Error {
    Error::Invalid(format!(
        "cannot read disk rates '{text}': expected a rate like 200MB/s, or read=RATE and/or \
         write=RATE separated by a comma"
    ))
}

impl fmt::Display for DiskRates {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |rate: Option<Bandwidth>| rate.map_or("uncapped".to_string(), |r| r.to_string());
        write!(f, "read {}, write {}", show(self.read), show(self.write))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rate_caps_both_lanes_and_named_rates_cap_one_each() {
        let rates = |t: &str| t.parse::<DiskRates>().unwrap();
        assert_eq!(rates("200MB/s"), DiskRates::both(Bandwidth(200e6)));
        assert_eq!(
            rates("read=40MB/s"),
            DiskRates {
                read: Some(Bandwidth(40e6)),
                write: None
            }
        );
        assert_eq!(
            rates("write=1GB/s, read=2MB/s"),
            DiskRates {
                read: Some(Bandwidth(2e6)),
                write: Some(Bandwidth(1e9))
            }
        );
    }

    #[test]
    fn bad_rates_are_refused_with_the_text() {
        // Each error quotes the part it could not read and says what a rate looks like.
        let rate = "expected a rate like 200MB/s";
        for (text, culprit) in [
            ("", "cannot read ''"),
            ("fast", "cannot read 'fast'"),
            ("read=", "cannot read ''"),
            ("read=1MB", "cannot read '1MB'"),
            ("seek=1MB/s", "cannot read disk rates 'seek=1MB/s'"),
            (
                "read=1MB/s,read=2MB/s",
                "disk rates 'read=1MB/s,read=2MB/s'",
            ),
        ] {
            let err = text.parse::<DiskRates>().unwrap_err().to_string();
            assert!(err.contains(culprit) && err.contains(rate), "{text}: {err}");
        }
    }
}
