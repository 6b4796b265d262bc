//! `CheckpointEvery`: how often a checkpoint keeps a site's environments and projected
//! environments, by sites or by time, and `SitePacing`, which decides it site by site for the
//! time-paced kind.

use crate::error::{Error, Result};
use crate::graph::DataId;
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a checkpoint keeps the environments and projected environments S of a site.
/// Output cores are kept at every site, and so are environments spilled to disk (their spill
/// is their write); a resumed run makes those between the sites kept again.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CheckpointEvery {
    /// At every N-th site (0, N, 2N, …) of each pass.
    Sites(usize),
    /// At the first site of a pass that a run reaches once this long has passed since it last
    /// kept one: at most this much work is lost to a kill, whatever a site costs.
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
        if let Ok(sites) = text.parse::<usize>() {
            let every = CheckpointEvery::Sites(sites);
            return every.check().map(|()| every).map_err(|_| refused());
        }
        let units = [("s", 1.0), ("m", 60.0), ("h", 3600.0)];
        let (number, unit) = units
            .iter()
            .find_map(|&(suffix, unit)| Some((text.strip_suffix(suffix)?, unit)))
            .ok_or_else(refused)?;
        let seconds = number.trim().parse::<f64>().map_err(|_| refused())? * unit;
        let interval = Duration::try_from_secs_f64(seconds).map_err(|_| refused())?;
        let every = CheckpointEvery::Interval(interval);
        every.check().map(|()| every).map_err(|_| refused())
    }
}

impl std::fmt::Display for CheckpointEvery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckpointEvery::Sites(sites) => write!(f, "{sites} site(s)"),
            CheckpointEvery::Interval(t) => write!(f, "{} s", t.as_secs_f64()),
        }
    }
}

/// Which sites a checkpoint kept by time keeps: the first value of a site (its environment
/// or its S) that comes once the interval has passed since the last site kept decides for
/// every value of that site and kind.
#[derive(Debug)]
pub struct SitePacing {
    interval: Duration,
    state: Mutex<Decided>,
}

/// What a [`SitePacing`] decided so far.
#[derive(Debug)]
struct Decided {
    /// When it last chose to keep a site (or when the run started).
    last: Instant,
    /// Whether each site of each kind (true for S) is kept.
    sites: HashMap<(bool, usize), bool>,
}

impl SitePacing {
    /// Pacing by `interval`, from now.
    pub fn new(interval: Duration) -> Self {
        SitePacing {
            interval,
            state: Mutex::new(Decided {
                last: Instant::now(),
                sites: HashMap::new(),
            }),
        }
    }

    /// True when `value` (an environment or a projected environment, whole or a part) is to
    /// be kept, deciding for its site now when none of its kind was decided before.
    pub fn due(&self, value: DataId, site: usize) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let key = (value.is_projection(), site);
        if let Some(&decided) = state.sites.get(&key) {
            return decided;
        }
        let now = Instant::now();
        let due = now.duration_since(state.last) >= self.interval;
        if due {
            state.last = now;
        }
        state.sites.insert(key, due);
        due
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Cols, Shared};

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

    #[test]
    fn a_site_is_kept_once_the_interval_has_passed_and_for_all_its_values() {
        let pacing = SitePacing::new(Duration::from_millis(300));
        let env = |site, start| DataId::Env {
            site,
            cols: Cols {
                start,
                end: start + 4,
            },
        };
        let part = |site, device| DataId::Part {
            of: Shared::Proj { site },
            device,
        };
        assert!(!pacing.due(env(0, 0), 0), "kept before the interval");
        std::thread::sleep(Duration::from_millis(350));
        assert!(pacing.due(env(1, 0), 1));
        assert!(pacing.due(env(1, 4), 1), "another part of a kept site");
        assert!(!pacing.due(env(2, 0), 2), "the interval starts again");
        assert!(!pacing.due(env(0, 4), 0), "a site decided stays decided");
        std::thread::sleep(Duration::from_millis(350));
        assert!(pacing.due(part(5, 0), 5));
        assert!(pacing.due(part(5, 1), 5));
        assert!(
            !pacing.due(env(5, 0), 5),
            "S and environments are decided apart"
        );
    }
}
