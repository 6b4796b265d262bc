//! `MemoryReport`: what the memory governor did in a run and what it cost.

use serde::Serialize;
use srcflow_sched::sched::{MemoryEvent, MemoryEventKind, RunLog};
use srcflow_tensor::ByteSize;
use std::collections::BTreeMap;
use std::fmt;

/// The governor's refusals, failures, releases and rewrites, and their cost.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MemoryReport {
    /// Tasks admission held back for lack of device memory.
    pub refusals: usize,
    /// Allocations that failed inside a task.
    pub out_of_memory: usize,
    /// How many of those `--inject-oom` caused.
    pub injected: usize,
    /// Times the pool's cache was handed back to the device.
    pub releases: usize,
    /// Bytes those releases gave back.
    pub bytes_released: u64,
    /// Nodes rewritten into two half-batch nodes.
    pub rewrites: usize,
    /// Tasks run again after a failed allocation.
    pub retries: usize,
    /// Seconds spent recovering: failed attempts and cache releases.
    pub recovery_s: f64,
    /// Seconds the half-batch nodes computed.
    pub half_batch_s: f64,
    /// The finest batch each kernel was split to for lack of memory.
    pub finest_batch: BTreeMap<String, usize>,
    /// Every event, in order.
    pub events: Vec<MemoryEvent>,
}

impl MemoryReport {
    /// Sums the governor's part of `log`.
    pub fn of(log: &RunLog) -> Self {
        let events = &log.governor.events;
        let count = |kind| events.iter().filter(|e| e.kind == kind).count();
        MemoryReport {
            refusals: count(MemoryEventKind::Refused),
            out_of_memory: count(MemoryEventKind::OutOfMemory),
            injected: events
                .iter()
                .filter(|e| e.kind == MemoryEventKind::OutOfMemory && e.injected)
                .count(),
            releases: count(MemoryEventKind::Released),
            bytes_released: events
                .iter()
                .filter(|e| e.kind == MemoryEventKind::Released)
                .map(|e| e.bytes)
                .sum(),
            rewrites: count(MemoryEventKind::Rewritten),
            retries: count(MemoryEventKind::Retried),
            recovery_s: log.governor.recovery_s,
            half_batch_s: log.busy(|e| e.within.is_some()),
            finest_batch: log.governor.finest_batch.clone(),
            events: events.clone(),
        }
    }

    /// True when the governor had nothing to do.
    pub fn is_quiet(&self) -> bool {
        self.events.is_empty()
    }
}

impl fmt::Display for MemoryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} refused, {} out of memory ({} injected), {} retried, {} cache releases ({}), \
             {} half-batch rewrites; recovery {:.3} s, half batches computed {:.3} s",
            self.refusals,
            self.out_of_memory,
            self.injected,
            self.retries,
            self.releases,
            ByteSize(self.bytes_released),
            self.rewrites,
            self.recovery_s,
            self.half_batch_s
        )?;
        if !self.finest_batch.is_empty() {
            let finest: Vec<String> = self
                .finest_batch
                .iter()
                .map(|(kernel, cols)| format!("{kernel} {cols}"))
                .collect();
            write!(f, "; finest batch {}", finest.join(", "))?;
        }
        Ok(())
    }
}
