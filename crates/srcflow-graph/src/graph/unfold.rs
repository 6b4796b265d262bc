//! The unfold rewrite: a fold node whose W does not fit the device is removed, and the sketch
//! and project nodes of its site read the cores and S it would have read, contracting the
//! cores themselves (what the memory governor does when a fold does not fit).

use super::{DataId, Op, SweepGraph, TaskId};
use petgraph::stable_graph::NodeIndex;
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use srcflow_tensor::error::{Error, Result};
use std::sync::Arc;

impl SweepGraph {
    /// How many sites a fold task folds (none are left of a site the governor unfolded).
    pub fn folded_sites(&self) -> usize {
        self.tasks().filter(|t| t.op == Op::Fold).count()
    }

    /// Removes the fold node `node` and rewires its readers to its inputs, with the unfolded
    /// kernels' costs; returns the readers.
    pub fn unfold(&mut self, node: TaskId) -> Result<Vec<TaskId>> {
        let node = node.0;
        let fold = self.graph[node].clone();
        if fold.op != Op::Fold {
            return Err(Error::Invalid(format!(
                "task {fold} cannot be unfolded: only fold tasks can"
            )));
        }
        let incoming: Vec<(NodeIndex, DataId)> = self
            .graph
            .edges_directed(node, Direction::Incoming)
            .map(|e| (e.source(), *e.weight()))
            .collect();
        let mut readers: Vec<NodeIndex> = self
            .graph
            .neighbors_directed(node, Direction::Outgoing)
            .collect();
        readers.sort_unstable();
        readers.dedup();
        self.graph.remove_node(node);
        self.unfolded.insert(fold.site);
        for &reader in &readers {
            for &(source, id) in &incoming {
                self.graph.add_edge(source, reader, id);
            }
            let width = self.batch_width(&self.graph[reader]);
            let (op, site) = (self.graph[reader].op, self.graph[reader].site);
            let batch = self
                .batch_task(op, site, width)
                .expect("W is read by sketch and project tasks, which have a batch task");
            let task = Arc::make_mut(&mut self.graph[reader]);
            task.inputs
                .retain(|id| !matches!(id, DataId::Folded { .. }));
            task.inputs.extend(&fold.inputs);
            task.flops = batch.flops;
            task.work = batch.work;
            task.orders = batch.orders;
            task.peak_bytes = batch.peak_bytes;
        }
        Ok(readers.into_iter().map(TaskId).collect())
    }

    /// Columns (sketch) or basis rows (project) a task covers.
    fn batch_width(&self, task: &super::Task) -> usize {
        match task.cols {
            Some(cols) => cols.len(),
            None if task.op == Op::Project => self.out_bond_left(task.site),
            None => self.sketch,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::graph::{test_shapes, DataId, GraphOptions, Op, SweepGraph};

    /// Compressing a 6-site MPS of bond 8 and physical leg 2 to χ̄ = 8, in column batches of 4.
    fn graph() -> SweepGraph {
        let options = GraphOptions::new(8).with_batch_cols(4);
        SweepGraph::build(&test_shapes::mps(6, 8, 2), &options).unwrap()
    }

    #[test]
    fn readers_of_an_unfolded_site_read_its_cores_and_s_at_the_unfolded_cost() {
        let mut g = graph();
        let fold = g.task_ids().find(|&n| g[n].op == Op::Fold).unwrap();
        let (site, inputs) = (g[fold].site, g[fold].inputs.clone());
        let flops_before = g.total_flops();
        let of_site = g
            .tasks()
            .filter(|t| t.site == site && matches!(t.op, Op::Sketch | Op::Project))
            .count();
        let readers = g.unfold(fold).unwrap();
        assert_eq!(
            readers.len(),
            of_site,
            "every sketch batch and project block"
        );
        assert!(of_site >= 3, "two sketch batches and a project");
        assert!(!g.folds(site));
        for reader in readers {
            let task = &g[reader];
            assert!(!task
                .inputs
                .iter()
                .any(|id| matches!(id, DataId::Folded { .. })));
            assert!(inputs.iter().all(|id| task.inputs.contains(id)), "{task}");
            let sources: Vec<_> = g.predecessors(reader).collect();
            assert!(
                sources.len() >= task.inputs.len(),
                "{task}: an edge per input"
            );
        }
        assert!(g.total_flops() > flops_before, "folding saved flops");
        let sketch = g.task_ids().find(|&n| g[n].op == Op::Sketch).unwrap();
        assert!(g.unfold(sketch).unwrap_err().to_string().contains("sketch"));
    }
}
