//! The half-batch rewrite: an env, sketch or project node becomes two nodes over half its
//! batch each, writing their slices of the same output (what the memory governor does when a
//! batch does not fit the device). The batch of env and sketch tasks is their sketch columns;
//! that of a project task is the rows of its basis, which are the rows of the S it makes.

use super::{Cols, DataId, Op, SweepGraph, Task, TaskId};
use petgraph::stable_graph::NodeIndex;
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use srcflow_tensor::error::{Error, Result};
use std::sync::Arc;

impl SweepGraph {
    /// The batch a half-batch rewrite splits (see the module documentation); `None` for
    /// tasks without one.
    pub fn batch_of(&self, task: &Task) -> Option<Cols> {
        match task.op {
            Op::Env | Op::Sketch => task.cols,
            Op::Project => Some(task.cols.unwrap_or(Cols {
                start: 0,
                end: self.out_bond_left(task.site),
            })),
            _ => None,
        }
    }

    /// True when `node` has a batch of at least two to split.
    pub fn can_split(&self, node: TaskId) -> bool {
        self.batch_of(&self[node])
            .is_some_and(|cols| cols.len() > 1)
    }

    /// Replaces `node` by two nodes over the two halves of its columns; returns them. Both read
    /// what it read and write slices of its output (the whole batch is kept in
    /// [`Task::within`]), so its consumers now wait for both and read one joined value.
    pub fn split_in_halves(&mut self, node: TaskId) -> Result<[TaskId; 2]> {
        let node = node.0;
        let task = self.graph[node].clone();
        let cols = self
            .batch_of(&task)
            .filter(|cols| cols.len() > 1)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "task {task} cannot be split: only env, sketch and project tasks with a \
                     batch of 2 or more can"
                ))
            })?;
        let edges = |direction| -> Vec<(NodeIndex, DataId)> {
            self.graph
                .edges_directed(node, direction)
                .map(|e| match direction {
                    Direction::Incoming => (e.source(), *e.weight()),
                    Direction::Outgoing => (e.target(), *e.weight()),
                })
                .collect()
        };
        let (incoming, outgoing) = (edges(Direction::Incoming), edges(Direction::Outgoing));
        self.graph.remove_node(node);
        let middle = cols.start + cols.len() / 2;
        let halves = [
            Cols {
                start: cols.start,
                end: middle,
            },
            Cols {
                start: middle,
                end: cols.end,
            },
        ];
        let mut nodes = [node; 2];
        for (slot, half) in nodes.iter_mut().zip(halves) {
            let batch = self
                .batch_task(task.op, task.site, half.len())
                .expect("env and sketch have a batch task");
            let part = self.graph.add_node(Arc::new(Task {
                cols: Some(half),
                within: Some(task.within.unwrap_or(cols)),
                flops: batch.flops,
                work: batch.work,
                orders: batch.orders,
                peak_bytes: batch.peak_bytes,
                ..(*task).clone()
            }));
            for &(source, id) in &incoming {
                self.graph.add_edge(source, part, id);
            }
            for &(target, id) in &outgoing {
                self.graph.add_edge(part, target, id);
            }
            *slot = part;
        }
        Ok(nodes.map(TaskId))
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::{test_shapes, GraphOptions, Op, SweepGraph, TaskId};

    /// The graph of compressing a 7-site MPS of bond 8 (ranks up to 8) to χ̄ = 8 in one batch.
    fn graph() -> SweepGraph {
        SweepGraph::build(&test_shapes::mps(7, 8, 2), &GraphOptions::new(8)).unwrap()
    }

    /// The first node whose task `pick` selects.
    fn node(g: &SweepGraph, pick: impl Fn(&crate::graph::Task) -> bool) -> TaskId {
        g.task_ids().find(|&n| pick(&g[n])).unwrap()
    }

    #[test]
    fn halves_share_inputs_and_consumers_and_split_the_flops() {
        let mut g = graph();
        let env = node(&g, |t| t.op == Op::Env && t.site == 1);
        let (flops, preds, succs) = (
            g[env].flops,
            g.predecessors(env).count(),
            g.successors(env).count(),
        );
        let halves = g.split_in_halves(env).unwrap();
        let widths: Vec<usize> = halves.iter().map(|&h| g[h].cols.unwrap().len()).collect();
        assert_eq!(widths, [4, 4]);
        let total: f64 = halves.iter().map(|&h| g[h].flops).sum();
        assert!((total - flops).abs() <= 1e-9 * flops);
        for h in halves {
            assert_eq!(g[h].within.unwrap().len(), 8);
            assert_eq!(g.predecessors(h).count(), preds);
            assert_eq!(g.successors(h).count(), succs);
        }
        let quarter = g.split_in_halves(halves[1]).unwrap();
        assert_eq!(g[quarter[0]].within.unwrap().len(), 8, "kept the whole");
    }

    #[test]
    fn only_batched_tasks_split() {
        let mut g = graph();
        let qr = node(&g, |t| t.op == Op::Qr);
        assert!(!g.can_split(qr));
        let err = g.split_in_halves(qr).unwrap_err().to_string();
        assert!(err.contains("qr"), "{err}");
    }
}
