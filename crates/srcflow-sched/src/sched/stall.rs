//! `StallClock`: why the compute lane sat idle — waiting for environments, for input cores,
//! for spills to drain, or for anything else — per pass.

use serde::Serialize;
use srcflow_graph::graph::Pass;
use std::time::Instant;

/// What idle compute was waiting for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StallCause {
    /// An environment fetch (host or disk).
    Environment,
    /// An input core read.
    InputCore,
    /// Earlier spills to finish (back-pressure on the left-to-right pass).
    Spill,
    /// Anything else (output writes, scheduling).
    Other,
}

/// Seconds of idle compute by cause, for one pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Stalls {
    /// Waiting for environments to be fetched.
    pub environments_s: f64,
    /// Waiting for input cores to be read.
    pub input_cores_s: f64,
    /// Waiting for spills to drain.
    pub spills_s: f64,
    /// Waiting for anything else.
    pub other_s: f64,
}

impl StallCause {
    /// A short name for reports and traces.
    pub fn name(&self) -> &'static str {
        match self {
            StallCause::Environment => "environments",
            StallCause::InputCore => "input cores",
            StallCause::Spill => "spills",
            StallCause::Other => "other",
        }
    }
}

/// One idle spell of the compute lane.
#[derive(Clone, Copy, Debug)]
pub struct StallSpell {
    /// When it began.
    pub start: Instant,
    /// When it ended.
    pub end: Instant,
    /// The pass it fell in.
    pub pass: Pass,
    /// What compute waited for.
    pub cause: StallCause,
}

impl Stalls {
    fn add(&mut self, cause: StallCause, seconds: f64) {
        let slot = match cause {
            StallCause::Environment => &mut self.environments_s,
            StallCause::InputCore => &mut self.input_cores_s,
            StallCause::Spill => &mut self.spills_s,
            StallCause::Other => &mut self.other_s,
        };
        *slot += seconds;
    }

    /// All idle seconds.
    pub fn total_s(&self) -> f64 {
        self.environments_s + self.input_cores_s + self.spills_s + self.other_s
    }
}

/// Times the compute lane's idle spells and books them by pass and cause.
#[derive(Debug, Default)]
pub(crate) struct StallClock {
    open: Option<(Instant, Pass, StallCause)>,
    /// Left-to-right pass.
    pub left_to_right: Stalls,
    /// Right-to-left pass.
    pub right_to_left: Stalls,
    /// Every closed spell.
    pub spells: Vec<StallSpell>,
}

impl StallClock {
    /// Compute is idle at `now`, waiting in `pass` for `cause` (a new cause closes the old
    /// spell).
    pub fn idle(&mut self, now: Instant, pass: Pass, cause: StallCause) {
        match self.open {
            Some((_, p, c)) if p == pass && c == cause => {}
            _ => {
                self.busy(now);
                self.open = Some((now, pass, cause));
            }
        }
    }

    /// Compute has work again at `end`: closes the open spell.
    pub fn busy(&mut self, end: Instant) {
        if let Some((since, pass, cause)) = self.open.take() {
            let seconds = end.duration_since(since).as_secs_f64();
            self.spells.push(StallSpell {
                start: since,
                end,
                pass,
                cause,
            });
            match pass {
                Pass::LeftToRight => self.left_to_right.add(cause, seconds),
                Pass::RightToLeft => self.right_to_left.add(cause, seconds),
            }
        }
    }
}
