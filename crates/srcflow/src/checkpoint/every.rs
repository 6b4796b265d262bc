//! `CheckpointEvery`: how often a checkpoint keeps a site's environments and projected
//! environments, by sites or by time.

use srcflow_tensor::error::{Error, Result};
use std::str::FromStr;
use std::time::Duration;

/// How often a checkpoint keeps the environments and projected environments S of a site.
/// Output cores are kept at every site, and so are environments spilled to disk (their spill
/// is their write); a resumed run makes those between the sites kept again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CheckpointEvery {
    /// At every N-th site (0, N, 2N, …) of each pass.
    Sites(usize),
    /// At the first site of a pass that a run reaches once this long has passed since it last
    /// kept one: a kill loses about this much of the pass under way (up to one site more).
    Interval(Duration),
}

impl Default for CheckpointEvery {
    /// Every site.
    fn default() -> Self {
        CheckpointEvery::Sites(1)
    }
}

impl CheckpointEvery {
    /// The sites apart that the sweep graph places checkpoint writes (every site for a time
    /// interval, whose writes are then made or skipped as the run goes).
    pub fn sites(self) -> usize {
        match self {
            CheckpointEvery::Sites(sites) => sites,
            CheckpointEvery::Interval(_) => 1,
        }
    }

    /// Refuses no site and no time.
    pub fn check(self) -> Result<()> {
        match self {
            CheckpointEvery::Sites(0) => Err(Error::Invalid(
                "a checkpoint must be kept every 1 site or more, found 0".into(),
            )),
            CheckpointEvery::Interval(t) if t.is_zero() => Err(Error::Invalid(
                "a checkpoint's interval must be longer than 0 s".into(),
            )),
            _ => Ok(()),
        }
    }
}

impl FromStr for CheckpointEvery {
    type Err = Error;

    /// `N` (sites), or a time: a number with `s`, `m` or `h` (`90s`, `10m`, `1.5h`).
    fn from_str(text: &str) -> Result<Self> {
        let refused = || {
            Error::Invalid(format!(
                "a checkpoint is kept every N sites (N >= 1) or every time (30s, 10m, 1.5h), \
                 found '{text}'"
            ))
        };
        let every = match text.parse::<usize>() {
            Ok(sites) => CheckpointEvery::Sites(sites),
            Err(_) => CheckpointEvery::Interval(interval(text).ok_or_else(refused)?),
        };
        every.check().map(|()| every).map_err(|_| refused())
    }
}

/// The time `text` names: a number with its unit ([`srcflow_tensor::size::seconds`]).
fn interval(text: &str) -> Option<Duration> {
    Duration::try_from_secs_f64(srcflow_tensor::size::seconds(text)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_is_sites_or_a_time_with_its_unit() {
        let parse = |t: &str| t.parse::<CheckpointEvery>();
        assert_eq!(parse("4").unwrap(), CheckpointEvery::Sites(4));
        let minutes = CheckpointEvery::Interval(Duration::from_secs(600));
        assert_eq!(parse("10m").unwrap(), minutes);
        let hours = CheckpointEvery::Interval(Duration::from_secs(5400));
        assert_eq!(parse("1.5h").unwrap(), hours);
        assert_eq!(parse("0.25s").unwrap().sites(), 1);
        for bad in ["0", "0s", "-3m", "ten", "5d", ""] {
            let error = parse(bad).unwrap_err().to_string();
            assert!(error.contains(&format!("'{bad}'")), "{error}");
        }
    }
}
