//! Prefetch policies: when a fetch task (disk → host, host → device) may start.
//!
//! The dispatcher asks the policy about the lowest-step ready fetch of each fetch lane. Fetches
//! always start in the order their data is needed, and only within the policy's window of
//! steps (which the planner reserves memory for) or into memory the plan leaves free until the
//! data is used, so a prefetch never displaces data needed sooner; the fetch for the step
//! compute is at may always start.

use srcflow_tensor::error::{Error, Result};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

/// What a policy sees about one fetch that could start now.
#[derive(Clone, Copy, Debug)]
pub struct FetchView {
    /// Sweep step of the task that needs the data.
    pub step: usize,
    /// Lowest sweep step with unfinished compute.
    pub frontier: usize,
    /// Estimated seconds this fetch can wait before it, or a fetch queued behind it on the same
    /// lane, arrives late: the least, over the lane's pending fetches, of the compute left before
    /// the step that needs one less the time to fetch it and those ahead of it (`None` before
    /// compute and the lanes crossed have been measured).
    pub spare_seconds: Option<f64>,
    /// Estimated seconds to bring this fetch's data all the way to the device (`None` before
    /// the lanes it crosses have been measured).
    pub seconds_to_fetch: Option<f64>,
}

/// Decides when a fetch starts.
pub trait PrefetchPolicy: Send + Sync + fmt::Debug {
    /// Seconds from now until the fetch described by `view` should start (zero or less: now),
    /// or `None` to decide again at the next completion.
    fn start_in(&self, view: &FetchView) -> Option<f64>;
    /// How many steps ahead of compute it may fetch into memory the planner reserves for it.
    fn window_steps(&self) -> usize;
    /// The windows a plan may reserve memory for, widest first and none wider than `most`
    /// (a sweep's steps: a wider window reserves no more); the planner keeps the first that
    /// fits the budgets. By default only its own.
    fn windows_to_try(&self, most: usize) -> Vec<usize> {
        vec![self.window_steps().min(most)]
    }
    /// The policy with its window narrowed to at most `steps`, the one the plan kept (`None`:
    /// it keeps its own window).
    fn within(&self, steps: usize) -> Option<Arc<dyn PrefetchPolicy>> {
        let _ = steps;
        None
    }
}

/// The policies users choose with `--prefetch`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Prefetch {
    /// Fetch on demand: only when compute has reached the step that needs the data.
    None,
    /// Fetch up to K steps ahead of compute.
    Lookahead(usize),
    /// Start each fetch when its spare time (see [`FetchView`]) has shrunk to `margin − 1` times
    /// the time the fetch takes, from rates measured during the run (the default).
    BandwidthAware {
        /// Safety factor on the estimated fetch time.
        margin: f64,
        /// Steps ahead it may fetch into reserved memory.
        window: usize,
    },
}

impl Default for Prefetch {
    fn default() -> Self {
        Prefetch::BandwidthAware {
            margin: 2.0,
            window: 2,
        }
    }
}

impl PrefetchPolicy for Prefetch {
    fn start_in(&self, view: &FetchView) -> Option<f64> {
        let now_if = |yes: bool| yes.then_some(0.0);
        if view.step <= view.frontier {
            return Some(0.0);
        }
        match *self {
            Prefetch::None => None,
            Prefetch::Lookahead(k) => now_if(view.step <= view.frontier.saturating_add(k)),
            Prefetch::BandwidthAware { margin, .. } => {
                match (view.spare_seconds, view.seconds_to_fetch) {
                    (Some(spare), Some(fetch)) => Some(spare - (margin - 1.0) * fetch),
                    _ => now_if(view.step <= view.frontier.saturating_add(1)),
                }
            }
        }
    }

    fn window_steps(&self) -> usize {
        match *self {
            Prefetch::None => 0,
            Prefetch::Lookahead(k) => k,
            Prefetch::BandwidthAware { window, .. } => window,
        }
    }

    /// The bandwidth-aware policy narrows its window when a wider one does not fit the budgets
    /// (prefetches then use only the memory the plan leaves free); the others keep theirs.
    fn windows_to_try(&self, most: usize) -> Vec<usize> {
        match *self {
            Prefetch::BandwidthAware { window, .. } => (0..=window.min(most)).rev().collect(),
            _ => vec![self.window_steps().min(most)],
        }
    }

    fn within(&self, steps: usize) -> Option<Arc<dyn PrefetchPolicy>> {
        match *self {
            Prefetch::BandwidthAware { margin, window } => {
                Some(Arc::new(Prefetch::BandwidthAware {
                    margin,
                    window: window.min(steps),
                }))
            }
            _ => None,
        }
    }
}

impl FromStr for Prefetch {
    type Err = Error;

    /// Parses `none`, `lookahead:K` or `bandwidth` (optionally `bandwidth:WINDOW`).
    fn from_str(text: &str) -> Result<Self> {
        let bad = || {
            Error::Invalid(format!(
                "unknown prefetch policy '{text}': expected none, lookahead:K (K ≥ 1) \
                 or bandwidth[:WINDOW]"
            ))
        };
        let (name, arg) = text
            .split_once(':')
            .map_or((text, None), |(n, a)| (n, Some(a)));
        let number = |a: Option<&str>| a.and_then(|a| a.parse::<usize>().ok()).filter(|&k| k >= 1);
        match (name, arg) {
            ("none", None) => Ok(Prefetch::None),
            ("lookahead", arg) => number(arg).map(Prefetch::Lookahead).ok_or_else(bad),
            ("bandwidth", None) => Ok(Prefetch::default()),
            ("bandwidth", arg) => {
                let window = number(arg).ok_or_else(bad)?;
                Ok(Prefetch::BandwidthAware {
                    margin: 2.0,
                    window,
                })
            }
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for Prefetch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Prefetch::None => write!(f, "none"),
            Prefetch::Lookahead(k) => write!(f, "lookahead:{k}"),
            Prefetch::BandwidthAware { window, .. } => write!(f, "bandwidth:{window}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(step: usize, spare: Option<f64>, fetch: Option<f64>) -> FetchView {
        FetchView {
            step,
            frontier: 10,
            spare_seconds: spare,
            seconds_to_fetch: fetch,
        }
    }

    #[test]
    fn policies_parse_and_decide() {
        let none: Prefetch = "none".parse().unwrap();
        let ahead: Prefetch = "lookahead:3".parse().unwrap();
        let bandwidth: Prefetch = "bandwidth".parse().unwrap();
        assert_eq!(none.start_in(&view(10, None, None)), Some(0.0));
        assert_eq!(none.start_in(&view(11, None, None)), None);
        assert_eq!(ahead.start_in(&view(13, None, None)), Some(0.0));
        assert_eq!(ahead.start_in(&view(14, None, None)), None);
        let due = bandwidth.start_in(&view(15, Some(0.6), Some(0.4))).unwrap();
        assert!(
            (due - 0.2).abs() < 1e-12,
            "starts with one fetch time to spare: {due}"
        );
        assert_eq!(bandwidth.start_in(&view(12, None, None)), None);
        assert_eq!(bandwidth.start_in(&view(11, None, None)), Some(0.0));
        for bad in ["lookahead", "lookahead:0", "fast", "none:2", "bandwidth:x"] {
            assert!(bad.parse::<Prefetch>().is_err(), "{bad}");
        }
    }
}
