//! `SitePacing`: which sites a checkpoint kept by time keeps, decided site by site as the run
//! goes.

use srcflow_graph::graph::DataId;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Which sites a checkpoint kept by time keeps: the first value of a site (its environment
/// or its S) that comes once the interval has passed since the last site kept decides for
/// every value of that site and kind.
#[derive(Debug)]
pub(crate) struct SitePacing {
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
        self.due_at(value, site, Instant::now())
    }

    /// [`SitePacing::due`] at the moment `now`.
    fn due_at(&self, value: DataId, site: usize, now: Instant) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let key = (value.is_projection(), site);
        if let Some(&decided) = state.sites.get(&key) {
            return decided;
        }
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
    use srcflow_graph::graph::{Cols, Shared};

    #[test]
    fn a_site_is_kept_once_the_interval_has_passed_and_for_all_its_values() {
        let pacing = SitePacing::new(Duration::from_secs(10));
        let start = pacing.state.lock().unwrap().last;
        let at = |seconds| start + Duration::from_secs(seconds);
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
        assert!(
            !pacing.due_at(env(0, 0), 0, at(3)),
            "kept before the interval"
        );
        assert!(pacing.due_at(env(1, 0), 1, at(11)));
        assert!(
            pacing.due_at(env(1, 4), 1, at(30)),
            "another part of a kept site"
        );
        assert!(
            !pacing.due_at(env(2, 0), 2, at(15)),
            "the interval starts again"
        );
        assert!(
            !pacing.due_at(env(0, 4), 0, at(40)),
            "a site decided stays decided"
        );
        assert!(pacing.due_at(part(5, 0), 5, at(21)));
        assert!(pacing.due_at(part(5, 1), 5, at(22)));
        assert!(
            !pacing.due_at(env(5, 0), 5, at(23)),
            "S and environments are decided apart"
        );
    }
}
