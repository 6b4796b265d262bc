//! `MemoryProfile`: bytes on each tier at every compute task of a (placed) sweep graph, from
//! shapes alone — the planner's model of a run.
//!
//! Compute tasks run one after another in step order; every value lives from its producer to
//! its last consumer. I/O moves values early or late within the scheduler's limits: input
//! cores are read up to `read_ahead_steps` early, fetched environments arrive up to
//! `fetch_ahead_steps` early (every batch of those steps), and spills finish within
//! `spill_lag_steps`. While a task runs it holds its inputs plus its own peak (intermediates
//! and output). A fetched slice is counted on the host until its upload and on the device
//! from it, anywhere in its window; device and host together count it once, but for the one
//! slice being uploaded.

use crate::graph::{DataId, Lane, Shared, SweepGraph};
use petgraph::stable_graph::NodeIndex;
use petgraph::Direction;
use serde::Serialize;
use srcflow_tensor::Tier;
use std::collections::BTreeMap;

/// Memory the process needs besides the values of the sweep (code, libraries, thread stacks,
/// allocator slack); checked against measured peaks by `benches/out_of_core.sh`.
pub const PROCESS_BASELINE: u64 = 24 << 20;

/// How far the scheduler lets I/O drift from compute, in sweep steps.
#[derive(Clone, Copy, Debug)]
pub struct Drift {
    /// Input reads may run this many steps ahead.
    pub read_ahead_steps: usize,
    /// Parts of input cores may be uploaded to the devices this many steps ahead.
    pub upload_ahead_steps: usize,
    /// Fetches may run this many steps ahead.
    pub fetch_ahead_steps: usize,
    /// Spills may lag this many steps behind.
    pub spill_lag_steps: usize,
}

/// The peak of one tier and where it happens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Peak {
    /// Most bytes at once.
    pub bytes: u64,
    /// Site of the compute task running then.
    pub site: usize,
    /// Name of that task's kernel.
    pub kernel: &'static str,
}

/// Modelled peaks of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct MemoryProfile {
    /// Device memory.
    pub device: Peak,
    /// Host memory (values moved to the host tier).
    pub host: Peak,
    /// Device and host together (the whole process on the CPU backend, where both are RAM).
    pub combined: Peak,
    /// Scratch disk.
    pub disk: Peak,
    /// Device and host bytes at each sweep step (the most of the step's tasks).
    #[serde(skip)]
    pub in_memory_by_step: BTreeMap<usize, u64>,
    /// Device bytes at each sweep step (the most of the step's tasks).
    #[serde(skip)]
    pub device_by_step: BTreeMap<usize, u64>,
}

/// Memory a modelled run leaves unused below its own peaks at one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spare {
    /// Device and host memory together.
    pub memory: u64,
    /// Device memory alone.
    pub device: u64,
}

impl MemoryProfile {
    /// The process's modelled peak resident memory: host values plus the baseline, and the
    /// device values too when device memory is host memory (`shared_memory`).
    pub fn process_peak(&self, shared_memory: bool) -> u64 {
        let values = if shared_memory {
            self.combined.bytes
        } else {
            self.host.bytes
        };
        values + PROCESS_BASELINE
    }

    /// Memory the modelled run leaves unused per step: device and host together below
    /// `memory_allowed` (the budget, or the modelled peak where that is higher), the device
    /// alone below its modelled peak.
    pub fn spare_by_step(&self, memory_allowed: u64) -> BTreeMap<usize, Spare> {
        let memory_allowed = memory_allowed.max(self.combined.bytes);
        self.in_memory_by_step
            .iter()
            .map(|(&step, &bytes)| {
                let device = self.device_by_step.get(&step).copied().unwrap_or(0);
                let spare = Spare {
                    memory: memory_allowed - bytes,
                    device: self.device.bytes - device,
                };
                (step, spare)
            })
            .collect()
    }

    /// Models the run of `graph` with the given drift. When devices share the sweep, each
    /// device is modelled with its own compute order and values; the device peak is the
    /// largest device's, the host and disk peaks add up over the devices (which run in step).
    pub fn of(graph: &SweepGraph, drift: Drift) -> MemoryProfile {
        if graph.devices == 1 {
            return Self::of_device(graph, drift, None);
        }
        let mut total = MemoryProfile::default();
        for device in 0..graph.active_devices() {
            total.add_device(Self::of_device(graph, drift, Some(device)));
        }
        total
    }

    /// Adds the profile of one more device of a node.
    fn add_device(&mut self, other: MemoryProfile) {
        raise(&mut self.device, other.device);
        for (sum, part) in [
            (&mut self.host, other.host),
            (&mut self.combined, other.combined),
            (&mut self.disk, other.disk),
        ] {
            let bytes = sum.bytes + part.bytes;
            raise(sum, part);
            sum.bytes = bytes;
        }
        for (step, bytes) in other.in_memory_by_step {
            *self.in_memory_by_step.entry(step).or_default() += bytes;
        }
        for (step, bytes) in other.device_by_step {
            let most = self.device_by_step.entry(step).or_default();
            *most = (*most).max(bytes);
        }
    }

    /// Models the run of the tasks of `device` (all tasks when `None`): its compute tasks one
    /// after another, and the values its tasks make.
    fn of_device(graph: &SweepGraph, drift: Drift, device: Option<usize>) -> MemoryProfile {
        let mine = |task: &crate::graph::Task| device.is_none_or(|d| task.device == d);
        let order = compute_order(graph, device);
        if order.is_empty() {
            // A device with no compute task (a resumed rank that only restores values to
            // send) holds them only in passing; the model has no point to place them at.
            return MemoryProfile::default();
        }
        let steps: Vec<usize> = order.iter().map(|&n| graph.graph[n].step).collect();
        let first_at = |step: usize| steps.partition_point(|&s| s < step).min(steps.len() - 1);
        let last_at = |step: usize| steps.partition_point(|&s| s <= step).saturating_sub(1);
        let mut position =
            vec![usize::MAX; petgraph::visit::NodeIndexable::node_bound(&graph.graph)];
        for (k, &node) in order.iter().enumerate() {
            position[node.index()] = k;
        }
        let when = |node: NodeIndex, birth: bool| -> usize {
            let task = &graph.graph[node];
            match (task.lane, birth) {
                (Lane::Compute, _) if mine(task) => position[node.index()],
                (Lane::Io, true) => first_at(task.step.saturating_sub(drift.read_ahead_steps)),
                (_, true) if moves_core(task) => {
                    first_at(task.step.saturating_sub(drift.upload_ahead_steps))
                }
                (Lane::Upload | Lane::DiskRead, true) => {
                    first_at(task.step.saturating_sub(drift.fetch_ahead_steps))
                }
                (Lane::Upload | Lane::DiskRead, false) => first_at(task.step),
                (_, true) => first_at(task.step),
                (_, false) => last_at(task.step + drift.spill_lag_steps.max(1) - 1),
            }
        };
        let k = order.len();
        let mut held = [vec![0i128; k + 1], vec![0i128; k + 1], vec![0i128; k + 1]];
        for node in graph.graph.node_indices() {
            let task = &graph.graph[node];
            if !mine(task) {
                continue;
            }
            if task
                .within
                .is_some_and(|w| task.cols.is_some_and(|c| c.start != w.start))
            {
                continue; // a later slice of an output its first slice holds
            }
            for &id in &task.outputs {
                let readers = graph
                    .graph
                    .edges_directed(node, Direction::Outgoing)
                    .filter(|e| *e.weight() == id)
                    .map(|e| when(petgraph::visit::EdgeRef::target(&e), false));
                let (birth, death) = (when(node, true), readers.max().unwrap_or(when(node, true)));
                let bytes = graph.value_bytes(id) as i128;
                let lane = &mut held[tier_index(graph.tier_of(id))];
                lane[birth.min(death)] += bytes;
                lane[death.max(birth) + 1] -= bytes;
            }
        }
        let uploads = graph
            .graph
            .node_indices()
            .filter(|&n| mine(&graph.graph[n]) && is_upload(&graph.graph[n]));
        let mut both_copies = vec![Vec::new(); k + 1];
        for node in uploads {
            let bytes = graph.graph[node].moved_bytes;
            let (from, to) = (when(node, true), when(node, false));
            for copies in &mut both_copies[from.min(to)..=to.max(from)] {
                copies.push(bytes);
            }
        }
        for lane in held.iter_mut() {
            for i in 1..=k {
                lane[i] += lane[i - 1];
            }
        }
        let mut profile = MemoryProfile::default();
        for (pos, &node) in order.iter().enumerate() {
            let task = &graph.graph[node];
            let own: u64 = task.outputs.iter().map(|&id| graph.value_bytes(id)).sum();
            let device = (held[0][pos] as u64).saturating_sub(own) + own.max(task.peak_bytes);
            let host = held[1][pos] as u64;
            let at = |bytes| Peak {
                bytes,
                site: task.site,
                kernel: task.op.name(),
            };
            raise(&mut profile.device, at(device));
            raise(&mut profile.host, at(host));
            let combined = device + host - counted_twice(&both_copies[pos]);
            raise(&mut profile.combined, at(combined));
            let step = profile.in_memory_by_step.entry(task.step).or_default();
            *step = (*step).max(combined);
            let step = profile.device_by_step.entry(task.step).or_default();
            *step = (*step).max(device);
            raise(&mut profile.disk, at(held[2][pos] as u64));
        }
        profile
    }
}

/// True for the tasks that bring an input core to a device (its part's upload and the
/// all-gather): they run up to `upload_ahead_steps` early.
fn moves_core(task: &crate::graph::Task) -> bool {
    task.outputs.iter().any(|id| {
        matches!(
            id,
            DataId::Part {
                of: Shared::Core { .. },
                ..
            } | DataId::Replica {
                of: Shared::Core { .. },
                ..
            }
        )
    })
}

/// True for a fetch that uploads an environment slice from host memory to its device.
fn is_upload(task: &crate::graph::Task) -> bool {
    task.lane == Lane::Upload && matches!(task.op, crate::graph::Op::Fetch { .. })
}

/// Bytes the host and device tiers both count at one moment for slices whose upload may
/// happen then: each slice has a host copy until its upload and a device copy from it, so
/// only the one slice the upload lane moves at a time has both.
fn counted_twice(slices: &[u64]) -> u64 {
    slices.iter().sum::<u64>() - slices.iter().copied().max().unwrap_or(0)
}

/// Keeps the larger of two peaks.
fn raise(peak: &mut Peak, candidate: Peak) {
    if candidate.bytes > peak.bytes {
        *peak = candidate;
    }
}

/// Index of a tier in the profile's arrays.
fn tier_index(tier: Tier) -> usize {
    match tier {
        Tier::Device => 0,
        Tier::Host => 1,
        Tier::Disk => 2,
    }
}

/// Compute tasks of `device` (of every device when `None`) in the order its compute lane
/// runs them.
fn compute_order(graph: &SweepGraph, device: Option<usize>) -> Vec<NodeIndex> {
    let mut order: Vec<NodeIndex> = graph
        .graph
        .node_indices()
        .filter(|&n| {
            let task = &graph.graph[n];
            task.lane == Lane::Compute && device.is_none_or(|d| task.device == d)
        })
        .collect();
    order.sort_by_key(|&n| (graph.graph[n].step, n.index()));
    order
}
