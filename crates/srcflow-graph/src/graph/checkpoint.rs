//! Checkpoints in the sweep graph: the tasks that keep a run's finished values, and the graph
//! that resumes a run from the values a checkpoint kept.

use super::{DataId, Lane, Op, Shared, Stage, SweepGraph, Task};
use petgraph::stable_graph::NodeIndex;
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use srcflow_tensor::tensor::Work;
use std::collections::HashSet;
use std::sync::Arc;

impl DataId {
    /// The value whose data this one holds: the environment for each of its spilled copies,
    /// the value itself otherwise. A checkpoint keeps values under this name.
    pub fn content(&self) -> DataId {
        match *self {
            DataId::Spilled { site, cols, .. } => DataId::Env { site, cols },
            id => id,
        }
    }

    /// True for a projected environment S, whole or a device's part.
    pub fn is_projection(&self) -> bool {
        matches!(
            self,
            DataId::Proj { .. }
                | DataId::Part {
                    of: Shared::Proj { .. },
                    ..
                }
        )
    }

    /// True for the values a checkpoint keeps, from which a run resumes: the environments of
    /// the left-to-right pass, the projected environments S (whole, or a device's part) that the
    /// right-to-left pass carries, and the output cores η.
    pub fn is_checkpointed(&self) -> bool {
        matches!(self, DataId::Env { .. } | DataId::Basis { .. }) || self.is_projection()
    }
}

/// What a resumed run does not do again: the tasks it skipped, and the values it reads back
/// from the checkpoint in their place.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct Resumed {
    /// Tasks of the whole run that the resumed one skips (checkpoint writes not counted).
    pub skipped_tasks: usize,
    /// Their real floating-point operations.
    pub skipped_flops: f64,
    /// Values read back from the checkpoint.
    pub restored: usize,
    /// Their bytes.
    pub restored_bytes: u64,
}

impl SweepGraph {
    /// The graph with a checkpoint task after every value a checkpoint keeps
    /// ([`DataId::is_checkpointed`]): every output core, and the environments and projected
    /// environments of every `every`-th site (0, `every`, 2·`every`, …; a resumed run makes
    /// those between again from them). Each task reads its value's longest-lived copy: an
    /// environment spilled to disk needs none (its spill writes it into the checkpoint, at any
    /// site), one spilled to host memory is written from there, any other value from where its
    /// task made it.
    pub fn with_checkpoint_writes(&self, every: usize) -> SweepGraph {
        let mut graph = self.clone();
        let due = |id: &DataId, site: usize| {
            matches!(id, DataId::Basis { .. }) || site % every.max(1) == 0
        };
        let mut made: Vec<(DataId, Vec<NodeIndex>)> = Vec::new();
        for node in self.graph.node_indices() {
            let task = &self.graph[node];
            let kept = task.outputs.iter().filter(|id| id.is_checkpointed());
            for &id in kept.filter(|id| task.lane == Lane::Compute && due(id, task.site)) {
                match made.iter_mut().find(|(made_id, _)| *made_id == id) {
                    Some((_, makers)) => makers.push(node),
                    None => made.push((id, vec![node])),
                }
            }
        }
        for (id, makers) in made {
            if let Some((from, copy)) = self.copy_to_checkpoint(&makers, id) {
                graph.add_checkpoint_write(&from, copy);
            }
        }
        graph
    }

    /// The copy of `id` (made by `makers`: one task, or the batches that each write a slice of
    /// it) that a checkpoint task reads, with the tasks that make that copy: the last of its
    /// spill chain, or `None` when that chain ends on disk (the spill is the write).
    fn copy_to_checkpoint(
        &self,
        makers: &[NodeIndex],
        id: DataId,
    ) -> Option<(Vec<NodeIndex>, DataId)> {
        let (mut from, mut copy) = (makers.to_vec(), id);
        while let Some(spill) = self
            .graph
            .edges_directed(from[0], Direction::Outgoing)
            .filter(|e| *e.weight() == copy)
            .map(|e| e.target())
            .find(|&t| matches!(self.graph[t].op, Op::Spill { .. }))
        {
            (from, copy) = (vec![spill], self.graph[spill].outputs[0]);
        }
        let on_disk = matches!(
            copy,
            DataId::Spilled {
                stage: Stage::Disk,
                ..
            }
        );
        (!on_disk).then_some((from, copy))
    }

    /// Adds the task that writes `copy` into the checkpoint once every task of `from` (its
    /// maker, or the batches that each write a slice of it) is done, at the sweep step after
    /// its maker's: the disk writer takes the spill of the next environment (which the
    /// left-to-right pass waits for when it falls behind) before it.
    fn add_checkpoint_write(&mut self, from: &[NodeIndex], copy: DataId) {
        let maker = &self.graph[from[0]];
        let task = self.moving(Op::Checkpoint, maker, copy, maker.step + 1);
        let node = self.graph.add_node(Arc::new(task));
        for &maker in from {
            self.graph.add_edge(maker, node, copy);
        }
    }

    /// The graph that finishes this one's run from a checkpoint holding the values `kept`
    /// (by [`DataId::content`]): only the tasks whose results are still needed, each value they
    /// need from skipped tasks read back by one restore task instead (one for a value that
    /// several batches each wrote a slice of). A task is needed when it
    /// hands an output core to the sink, or feeds a needed task a value the checkpoint lacks; a
    /// checkpoint write is kept when its value is made again and the checkpoint lacks it.
    pub fn resumed(&self, kept: &HashSet<DataId>) -> (SweepGraph, Resumed) {
        let needed = self.needed_given(kept);
        let mut graph = self.clone();
        let mut resumed = Resumed::default();
        let mut restores: Vec<(NodeIndex, DataId, Vec<NodeIndex>)> = Vec::new();
        for node in self.graph.node_indices() {
            if needed.contains(&node) {
                continue;
            }
            let task = &self.graph[node];
            if task.op != Op::Checkpoint {
                resumed.skipped_tasks += 1;
                resumed.skipped_flops += task.flops;
            }
            for edge in self.graph.edges_directed(node, Direction::Outgoing) {
                if needed.contains(&edge.target()) {
                    let id = *edge.weight();
                    match restores.iter_mut().find(|(_, made, _)| *made == id) {
                        Some((_, _, readers)) if readers.contains(&edge.target()) => {}
                        Some((_, _, readers)) => readers.push(edge.target()),
                        None => restores.push((node, id, vec![edge.target()])),
                    }
                }
            }
            graph.graph.remove_node(node);
        }
        for (maker, id, readers) in restores {
            let maker = &self.graph[maker];
            resumed.restored += 1;
            resumed.restored_bytes += self.value_bytes(id);
            graph.add_restore(maker, id, &readers);
        }
        (graph, resumed)
    }

    /// The tasks a run from a checkpoint holding `kept` must still run, found from the last
    /// task back (in an order where every task comes after those it reads from: the sweep
    /// order is not one, as a fetch runs at the step of the sketch it feeds).
    fn needed_given(&self, kept: &HashSet<DataId>) -> HashSet<NodeIndex> {
        let mut needed = HashSet::new();
        let order =
            petgraph::algo::toposort(&self.graph, None).expect("a sweep graph has no cycle");
        for &node in order.iter().rev() {
            let task = &self.graph[node];
            let feeds_needed = || {
                self.graph
                    .edges_directed(node, Direction::Outgoing)
                    .any(|e| needed.contains(&e.target()) && !kept.contains(&e.weight().content()))
            };
            let hands_to_sink = matches!(task.op, Op::WriteSite | Op::StoreDraft);
            if task.op != Op::Checkpoint && (hands_to_sink || feeds_needed()) {
                needed.insert(node);
            }
        }
        let writes = self.graph.node_indices().filter(|&n| {
            let task = &self.graph[n];
            task.op == Op::Checkpoint
                && !kept.contains(&task.inputs[0].content())
                && self
                    .graph
                    .neighbors_directed(n, Direction::Incoming)
                    .all(|maker| needed.contains(&maker))
        });
        let writes: Vec<NodeIndex> = writes.collect();
        needed.extend(writes);
        needed
    }

    /// Adds the task that reads `id` (made by `maker` in the whole run) back from the
    /// checkpoint for `readers`, at the step of the first of them.
    fn add_restore(&mut self, maker: &Task, id: DataId, readers: &[NodeIndex]) {
        let step = readers.iter().map(|&r| self.graph[r].step).min();
        let task = self.moving(Op::Restore, maker, id, step.unwrap_or(maker.step));
        let node = self.graph.add_node(Arc::new(task));
        for &reader in readers {
            self.graph.add_edge(node, reader, id);
        }
    }

    /// A task of `op` that moves the value `id` (made by `maker`) into the checkpoint (a
    /// checkpoint write, reading it) or out of it (a restore, making it), at sweep `step`.
    fn moving(&self, op: Op, maker: &Task, id: DataId, step: usize) -> Task {
        let bytes = self.value_bytes(id);
        let (inputs, outputs) = match op {
            Op::Restore => (vec![], vec![id]),
            _ => (vec![id], vec![]),
        };
        Task {
            op,
            site: maker.site,
            cols: maker.within.or(maker.cols),
            within: None,
            inputs,
            outputs,
            flops: 0.0,
            work: Work::default(),
            orders: Default::default(),
            peak_bytes: bytes,
            moved_bytes: bytes,
            lane: op.lane(),
            device: maker.device,
            rank: maker.rank,
            step,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{test_shapes, Cols, GraphOptions};
    use srcflow_tensor::Tier;

    /// The graph of compressing a 6-site MPS of bond 8 to χ̄ = 8 on `devices` devices.
    fn graph(devices: usize) -> SweepGraph {
        batched(devices, None)
    }

    /// Like [`graph`], with `batch` sketch columns per env, sketch and projection task.
    fn batched(devices: usize, batch: Option<usize>) -> SweepGraph {
        let mut options = GraphOptions::new(8);
        options.devices = devices;
        options.batch_cols = batch;
        SweepGraph::build(&test_shapes::mps(6, 8, 2), &options).unwrap()
    }

    fn count(graph: &SweepGraph, op: Op) -> usize {
        graph.graph.node_weights().filter(|t| t.op == op).count()
    }

    /// The values the checkpoint tasks of `graph` keep, by content.
    fn written(graph: &SweepGraph) -> HashSet<DataId> {
        let writes = graph.graph.node_weights();
        let writes = writes.filter(|t| t.op == Op::Checkpoint);
        writes.map(|t| t.inputs[0].content()).collect()
    }

    #[test]
    fn every_environment_projection_and_output_core_is_written_once() {
        for devices in [1, 2] {
            let plain = graph(devices);
            let checkpointed = plain.with_checkpoint_writes(1);
            let kept: Vec<DataId> = plain
                .graph
                .node_weights()
                .flat_map(|t| t.outputs.clone())
                .filter(DataId::is_checkpointed)
                .collect();
            assert_eq!(count(&checkpointed, Op::Checkpoint), kept.len());
            assert_eq!(written(&checkpointed), kept.into_iter().collect());
        }
    }

    #[test]
    fn a_value_that_batches_write_slices_of_is_written_and_restored_once_all_are_done() {
        let whole = batched(2, Some(2)).with_checkpoint_writes(1);
        let writes = whole.graph.node_indices();
        let writes: Vec<NodeIndex> = writes
            .filter(|&n| whole.graph[n].op == Op::Checkpoint)
            .collect();
        assert_eq!(writes.len(), written(&whole).len(), "one write per value");
        let sliced = writes.iter().find(|&&n| {
            let makers = whole.graph.neighbors_directed(n, Direction::Incoming);
            makers.count() > 1
        });
        let sliced = *sliced.expect("a projection's part is made by two batches");
        let makers = whole.graph.neighbors_directed(sliced, Direction::Incoming);
        let value = whole.graph[sliced].inputs[0];
        for maker in makers {
            assert!(whole.graph[maker].outputs.contains(&value));
        }
        let (resumed, skipped) = whole.resumed(&written(&whole));
        assert_eq!(skipped.restored, whole.sites());
        assert_eq!(count(&resumed, Op::Restore), whole.sites());
    }

    #[test]
    fn an_environment_spilled_to_disk_is_written_by_its_spill_one_on_host_from_there() {
        let mut plain = graph(1);
        let tiers = [Tier::Disk, Tier::Host, Tier::Device, Tier::Disk, Tier::Host];
        plain.place_environments(&tiers).unwrap();
        let checkpointed = plain.with_checkpoint_writes(1);
        let envs = checkpointed.graph.node_weights().filter(|t| {
            t.op == Op::Checkpoint && matches!(t.inputs[0].content(), DataId::Env { .. })
        });
        let mut read: Vec<(usize, DataId)> = envs.map(|t| (t.site, t.inputs[0])).collect();
        read.sort_by_key(|&(site, _)| site);
        let sites: Vec<usize> = read.iter().map(|&(site, _)| site).collect();
        assert_eq!(sites, [1, 2, 4]);
        assert!(matches!(
            read[0].1,
            DataId::Spilled {
                stage: Stage::Host,
                ..
            }
        ));
        assert!(matches!(read[1].1, DataId::Env { .. }));
    }

    #[test]
    fn a_resumed_run_with_spilled_environments_restores_only_what_was_kept() {
        let mut plain = graph(1);
        let tiers = [Tier::Disk, Tier::Host, Tier::Device, Tier::Disk, Tier::Host];
        plain.place_environments(&tiers).unwrap();
        let whole = plain.with_checkpoint_writes(1);
        let spills = whole.graph.node_weights();
        let spills = spills.filter(|t| t.op == Op::Spill { to: Tier::Disk });
        let mut kept: HashSet<DataId> = spills.map(|t| t.outputs[0].content()).collect();
        kept.extend(written(&whole));
        kept.retain(|id| match *id {
            DataId::Env { site, .. } => site == 0,
            DataId::Basis { site } | DataId::Proj { site } => site >= 4,
            _ => false,
        });
        let (resumed, _) = whole.resumed(&kept);
        let restores = resumed.graph.node_weights().filter(|t| t.op == Op::Restore);
        let restored: HashSet<DataId> = restores.map(|t| t.outputs[0].content()).collect();
        assert!(
            restored.is_subset(&kept),
            "{restored:?} not all in {kept:?}"
        );
        let envs = resumed.graph.node_weights().filter(|t| t.op == Op::Env);
        let mut sites: Vec<usize> = envs.map(|t| t.site).collect();
        sites.sort();
        assert_eq!(sites, [1, 2]);
    }

    #[test]
    fn every_kth_site_keeps_its_environments_and_projections_and_every_site_its_core() {
        let sparse = graph(1).with_checkpoint_writes(3);
        let writes = sparse
            .graph
            .node_weights()
            .filter(|t| t.op == Op::Checkpoint);
        let mut kept: Vec<(usize, &str)> = writes
            .map(|t| match t.inputs[0] {
                DataId::Env { site, .. } => (site, "env"),
                DataId::Proj { site } => (site, "proj"),
                DataId::Basis { site } => (site, "core"),
                other => panic!("{other} is not checkpointed"),
            })
            .collect();
        kept.sort();
        let cores = (0..6).map(|site| (site, "core"));
        let mut expected: Vec<(usize, &str)> = cores.collect();
        expected.extend([(0, "env"), (3, "env"), (3, "proj")]);
        expected.sort();
        assert_eq!(kept, expected);
    }

    #[test]
    fn with_nothing_kept_the_resumed_graph_is_the_whole_one() {
        let whole = graph(2).with_checkpoint_writes(1);
        let (resumed, skipped) = whole.resumed(&HashSet::new());
        assert_eq!(resumed.graph.node_count(), whole.graph.node_count());
        assert_eq!(skipped, Resumed::default());
    }

    #[test]
    fn with_everything_kept_only_the_output_cores_are_handed_over_again() {
        for devices in [1, 2] {
            let whole = graph(devices).with_checkpoint_writes(1);
            let (resumed, skipped) = whole.resumed(&written(&whole));
            let ops: HashSet<Op> = resumed.graph.node_weights().map(|t| t.op).collect();
            assert_eq!(ops, HashSet::from([Op::Restore, Op::WriteSite]));
            assert_eq!(count(&resumed, Op::Restore), whole.sites());
            assert_eq!(skipped.restored, whole.sites());
            assert_eq!(skipped.skipped_flops, whole.total_flops());
            // Devices with no compute task left: the memory model covers them (it indexed
            // past the end of their empty compute order before).
            let drift = crate::plan::Drift {
                read_ahead_steps: 1,
                upload_ahead_steps: 1,
                fetch_ahead_steps: 1,
                spill_lag_steps: 1,
            };
            crate::plan::MemoryProfile::of(&resumed, drift);
        }
    }

    #[test]
    fn a_run_killed_midway_resumes_from_its_last_environment_and_projection() {
        for devices in [1, 2] {
            let whole = graph(devices).with_checkpoint_writes(1);
            let kept: HashSet<DataId> = written(&whole)
                .into_iter()
                .filter(|id| match *id {
                    DataId::Env { site, .. } => site <= 4,
                    DataId::Basis { site } | DataId::Proj { site } => site >= 3,
                    DataId::Part { of, .. } => of == Shared::Proj { site: 3 },
                    _ => false,
                })
                .collect();
            let (resumed, skipped) = whole.resumed(&kept);
            let compute = |op| {
                let tasks = resumed.graph.node_weights();
                let mut sites: Vec<usize> = tasks.filter(|t| t.op == op).map(|t| t.site).collect();
                sites.sort();
                sites.dedup();
                sites
            };
            assert_eq!(compute(Op::Env), Vec::<usize>::new());
            assert_eq!(compute(Op::Qr), [1, 2]);
            assert_eq!(compute(Op::WriteSite), [0, 1, 2, 3, 4, 5]);
            assert_eq!(compute(Op::Restore), [0, 1, 3, 4, 5]);
            assert_eq!(count(&resumed, Op::Checkpoint), 2 * devices + 3);
            assert!(skipped.skipped_tasks > 0 && skipped.skipped_flops > 0.0);
            let order = resumed.nodes_in_order();
            assert_eq!(order.len(), resumed.graph.node_count());
        }
    }

    #[test]
    fn a_missing_environment_is_made_again_from_the_last_one_kept_before_it() {
        let whole = graph(1).with_checkpoint_writes(1);
        let kept: HashSet<DataId> = written(&whole)
            .into_iter()
            .filter(|id| matches!(*id, DataId::Env { site, .. } if site != 3))
            .collect();
        let (resumed, _) = whole.resumed(&kept);
        let envs: Vec<usize> = resumed
            .graph
            .node_weights()
            .filter(|t| t.op == Op::Env)
            .map(|t| t.site)
            .collect();
        assert_eq!(envs, [3]);
        let rewritten = resumed
            .graph
            .node_weights()
            .filter(|t| t.op == Op::Checkpoint);
        let rewritten: Vec<DataId> = rewritten.map(|t| t.inputs[0]).collect();
        assert!(rewritten.contains(&DataId::Env {
            site: 3,
            cols: Cols { start: 0, end: 8 }
        }));
    }
}
