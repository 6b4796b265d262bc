//! Where values live between their producer and their last consumer: memory tiers and the
//! scratch disk, with the bytes each tier holds.

mod checksum;
mod direct_io;
mod disk_io;
mod disk_rates;
mod disk_requests;
mod disk_tier;
mod emulated_disk;
mod fault;
mod scratch;
mod spill_file;
mod throttle;
mod value;

pub use direct_io::DirectIo;
pub use disk_io::{DiskAccess, DiskIo, DEFAULT_IO_DEPTH, MOST_IO_DEPTH};
pub use disk_rates::DiskRates;
pub use disk_requests::DiskRequests;
pub use disk_tier::DiskTier;
pub use emulated_disk::EmulatedDisk;
pub use fault::DiskFault;
pub use scratch::try_lock;
pub use scratch::{clean_stale, ScratchDir, RUN_SCRATCH};
pub use spill_file::SpillFile;
pub use throttle::Throttle;
pub use value::{InMemory, Value};

use srcflow_graph::graph::{DataId, SweepGraph, Task};
use srcflow_tensor::Tier;
use std::collections::HashMap;

/// Values by name, each with the number of consumers still to read it, and bytes per tier.
pub(crate) struct Store {
    values: HashMap<DataId, Value>,
    readers_left: HashMap<DataId, usize>,
    /// True when input cores stay in host memory (several devices upload their parts).
    cores_on_host: bool,
    in_use: TierBytes,
    peak: TierBytes,
}

/// Bytes held on each tier.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct TierBytes {
    /// Device memory.
    pub device: u64,
    /// Host memory.
    pub host: u64,
    /// Scratch disk.
    pub disk: u64,
}

impl TierBytes {
    /// The count for `tier`.
    pub fn get_mut(&mut self, tier: Tier) -> &mut u64 {
        match tier {
            Tier::Device => &mut self.device,
            Tier::Host => &mut self.host,
            Tier::Disk => &mut self.disk,
        }
    }
}

impl Store {
    /// An empty store that knows how many tasks read each value of `graph`.
    pub fn new(graph: &SweepGraph) -> Self {
        let mut readers_left = HashMap::new();
        for task in graph.tasks() {
            for &id in &task.inputs {
                *readers_left.entry(id).or_default() += 1;
            }
        }
        Store {
            values: HashMap::new(),
            readers_left,
            cores_on_host: graph.cores_tier() == Tier::Host,
            in_use: TierBytes::default(),
            peak: TierBytes::default(),
        }
    }

    /// The inputs of `task`, in its order.
    pub fn inputs(&self, task: &Task) -> Vec<Value> {
        task.inputs
            .iter()
            .map(|id| self.values[id].clone())
            .collect()
    }

    /// True when the value `id` has been produced and is held.
    pub fn holds(&self, id: &DataId) -> bool {
        self.values.contains_key(id)
    }

    /// Counts one more reader of `id` (a node was split into two that both read it).
    pub fn add_reader(&mut self, id: DataId) {
        *self.readers_left.entry(id).or_default() += 1;
    }

    /// Hands `from` readers' reads of `id` to `to` readers (a node was rewritten into others).
    pub fn pass_reads(&mut self, id: DataId, from: usize, to: usize) {
        let left = self.readers_left.entry(id).or_default();
        *left = (*left + to).saturating_sub(from);
    }

    /// Keeps `task`'s outputs and drops inputs nobody else will read.
    pub fn finish(&mut self, task: &Task, outputs: Vec<Value>) {
        for (&id, value) in task.outputs.iter().zip(outputs) {
            if self.readers_left.get(&id).copied().unwrap_or(0) > 0 {
                let tier = self.tier_of(id);
                *self.in_use.get_mut(tier) += value.bytes();
                let now = *self.in_use.get_mut(tier);
                let peak = self.peak.get_mut(tier);
                *peak = (*peak).max(now);
                self.values.insert(id, value);
            }
        }
        for id in &task.inputs {
            let left = self.readers_left.get_mut(id).expect("counted");
            *left -= 1;
            if *left == 0 {
                if let Some(value) = self.values.remove(id) {
                    *self.in_use.get_mut(self.tier_of(*id)) -= value.bytes();
                }
            }
        }
    }

    /// The tier value `id` lives on.
    fn tier_of(&self, id: DataId) -> Tier {
        match id {
            DataId::Core { .. } if self.cores_on_host => Tier::Host,
            _ => id.tier(),
        }
    }

    /// Bytes held on each tier now.
    pub fn in_use(&self) -> TierBytes {
        self.in_use
    }

    /// The most bytes each tier has held.
    pub fn peak(&self) -> TierBytes {
        self.peak
    }
}
