//! `MemoryEvent`: what the memory governor did and what it cost, for reports and traces.

use serde::Serialize;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MemoryEventKind {
    /// Admission refused a task: its request did not fit the device now.
    Refused,
    /// An allocation inside a task failed.
    OutOfMemory,
    /// The pool's cache was handed back to the device.
    Released,
    /// A node was rewritten into two half-batch nodes.
    Rewritten,
    /// A task was run again after a failed allocation that a retry can cure.
    Retried,
    /// The device's capacity changed (`--shrink-device`).
    Capacity,
}

impl MemoryEventKind {
    /// A short name for reports and traces.
    pub fn name(&self) -> &'static str {
        match self {
            MemoryEventKind::Refused => "admission refused",
            MemoryEventKind::OutOfMemory => "out of memory",
            MemoryEventKind::Released => "cache released",
            MemoryEventKind::Rewritten => "half-batch rewrite",
            MemoryEventKind::Retried => "retried",
            MemoryEventKind::Capacity => "capacity changed",
        }
    }
}

/// One thing the governor did.
#[derive(Clone, Debug, Serialize)]
pub struct MemoryEvent {
    /// Seconds from the start of the run.
    pub at: f64,
    /// What happened.
    pub kind: MemoryEventKind,
    /// The task it concerns (empty for a capacity change).
    pub task: String,
    /// Bytes involved: asked for, released, or the new capacity.
    pub bytes: u64,
    /// Seconds it cost (a release, a failed attempt, the re-planning).
    pub seconds: f64,
    /// True when `--inject-oom` caused it.
    pub injected: bool,
}
