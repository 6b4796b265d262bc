//! Placing environments on tiers: spill and fetch tasks inserted between an env and its sketch.

use super::{Cols, DataId, Op, Stage, SweepGraph, Task};
use petgraph::stable_graph::NodeIndex;
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::Work;
use srcflow_tensor::Tier;
use std::sync::Arc;

impl SweepGraph {
    /// Bytes of the environment slice C_site\[cols\].
    pub fn env_bytes(&self, site: usize, cols: Cols) -> u64 {
        let bonds: usize = self.stack.site(site).iter().map(|s| s[1]).product();
        (cols.len() * bonds * self.dtype.bytes()) as u64
    }

    /// Moves environment `C_site` to `tiers[site]` between the passes: every slice not kept on
    /// the device gets spill tasks after its env task and fetch tasks before its sketch task.
    pub fn place_environments(&mut self, tiers: &[Tier]) -> Result<()> {
        let envs = self.environments();
        if tiers.len() != envs {
            return Err(Error::Invalid(format!(
                "placement names {} environment tiers, the graph has {envs} environments",
                tiers.len()
            )));
        }
        if self
            .graph
            .node_weights()
            .any(|t| matches!(t.op, Op::Spill { .. }))
        {
            return Err(Error::Invalid(
                "the graph's environments are already placed; place a fresh graph".into(),
            ));
        }
        let env_tasks: Vec<NodeIndex> = self
            .graph
            .node_indices()
            .filter(|&n| self.graph[n].op == Op::Env)
            .collect();
        for node in env_tasks {
            let task = &self.graph[node];
            let (site, cols) = (task.site, task.cols.expect("env tasks carry columns"));
            if tiers[site] != Tier::Device {
                self.spill_and_fetch(node, site, cols, tiers[site]);
            }
        }
        Ok(())
    }

    /// Inserts the tasks that carry `C_site[cols]` from its env task `made` to `tier` and back.
    fn spill_and_fetch(&mut self, made: NodeIndex, site: usize, cols: Cols, tier: Tier) {
        let env = DataId::Env { site, cols };
        let copy = |stage| DataId::Spilled { site, cols, stage };
        let (sketch, sketch_step) = self.sketch_reading(made, env);
        let (out_step, device) = (self.graph[made].step, self.graph[made].device);
        let chain: Vec<(Op, Stage, usize)> = match tier {
            Tier::Disk => vec![
                (Op::Spill { to: Tier::Host }, Stage::Host, out_step),
                (Op::Spill { to: Tier::Disk }, Stage::Disk, out_step),
                (
                    Op::Fetch { from: Tier::Disk },
                    Stage::HostReturn,
                    sketch_step,
                ),
                (Op::Fetch { from: Tier::Host }, Stage::Device, sketch_step),
            ],
            _ => vec![
                (Op::Spill { to: Tier::Host }, Stage::Host, out_step),
                (Op::Fetch { from: Tier::Host }, Stage::Device, sketch_step),
            ],
        };
        let bytes = self.env_bytes(site, cols);
        let (mut from, mut value) = (made, env);
        for (op, stage, step) in chain {
            let next = copy(stage);
            let node = self.graph.add_node(Arc::new(Task {
                op,
                site,
                cols: Some(cols),
                within: None,
                inputs: vec![value],
                outputs: vec![next],
                flops: 0.0,
                work: Work::default(),
                orders: Default::default(),
                peak_bytes: 2 * bytes,
                moved_bytes: bytes,
                lane: op.lane(),
                device,
                rank: 0,
                step,
            }));
            self.graph.add_edge(from, node, value);
            (from, value) = (node, next);
        }
        self.reroute(sketch, env, value, from);
    }

    /// The sketch task that reads `env` (made by `made`), and its step.
    fn sketch_reading(&self, made: NodeIndex, env: DataId) -> (NodeIndex, usize) {
        self.graph
            .edges_directed(made, Direction::Outgoing)
            .filter(|e| *e.weight() == env && self.graph[e.target()].op == Op::Sketch)
            .map(|e| (e.target(), self.graph[e.target()].step))
            .next()
            .expect("every environment is read by one sketch")
    }

    /// Makes `consumer` read `new` (made by `producer`) where it read `old`.
    fn reroute(&mut self, consumer: NodeIndex, old: DataId, new: DataId, producer: NodeIndex) {
        let stale: Vec<_> = self
            .graph
            .edges_directed(consumer, Direction::Incoming)
            .filter(|e| *e.weight() == old)
            .map(|e| e.id())
            .collect();
        for edge in stale {
            self.graph.remove_edge(edge);
        }
        for input in Arc::make_mut(&mut self.graph[consumer]).inputs.iter_mut() {
            if *input == old {
                *input = new;
            }
        }
        self.graph.add_edge(producer, consumer, new);
    }
}
