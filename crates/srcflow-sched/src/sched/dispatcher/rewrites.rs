//! The dispatcher's side of the memory governor's rewrites: a node that cannot get its memory
//! is queued again, split into two half-batch nodes, or (a fold) undone, and every count is
//! brought up to date.

use super::super::governor::Recovery;
use super::Dispatcher;
use srcflow_graph::graph::TaskId;
use srcflow_tensor::error::{Error, Result};

impl Dispatcher {
    /// Hands a failed allocation of `node` (after `seconds` of trying) to the governor and
    /// queues what it decides: the node again, or its two halves.
    pub(super) fn recover(&mut self, node: TaskId, oom: &Error, seconds: f64) -> Result<()> {
        let at = self.now_s();
        match self.governor.recover(&self.graph, node, oom, seconds, at)? {
            Recovery::Retry => self.make_ready(node),
            Recovery::Split => self.split(node),
        }
        Ok(())
    }

    /// Rewrites `node` into two half-batch nodes and brings every count up to date: the
    /// halves are ready, its consumers wait for one more producer, its inputs have one more
    /// reader.
    pub(super) fn split(&mut self, node: TaskId) {
        let start = self.clock.now();
        let old = self.graph[node].clone();
        let halves = self
            .graph
            .split_in_halves(node)
            .expect("the governor splits only tasks with a batch of 2 or more");
        self.rewrites += 1;
        let bound = self.graph.id_bound();
        self.waiting_on.resize(bound, 0);
        self.finished.resize(bound, false);
        self.left.remove_compute(old.step, node.index());
        let mut flops = -old.flops;
        for half in halves {
            self.waiting_on[half.index()] = 0;
            self.finished[half.index()] = false;
            self.left.add_compute(old.step, half.index());
            flops += self.graph[half].flops;
            self.make_ready(half);
        }
        self.left.add_flops(old.step, flops);
        let consumers: Vec<TaskId> = self.graph.successors(halves[1]).collect();
        for consumer in consumers {
            self.waiting_on[consumer.index()] += 1;
        }
        for id in &old.inputs {
            self.store.add_reader(*id);
        }
        let seconds = self.clock.now().saturating_duration_since(start);
        self.governor.charge_rewrite(seconds.as_secs_f64());
    }

    /// Removes the fold `node` and brings every count up to date: its readers wait for the
    /// producers of its inputs instead, with their unfolded flops, and those inputs have its
    /// readers as readers in its stead.
    pub(super) fn unfold(&mut self, node: TaskId) {
        let start = self.clock.now();
        let fold = self.graph[node].clone();
        let before: f64 = self
            .graph
            .successors(node)
            .map(|reader| self.graph[reader].flops)
            .sum();
        let readers = self
            .graph
            .unfold(node)
            .expect("the governor unfolds only fold tasks");
        self.rewrites += 1;
        self.left.remove_compute(fold.step, node.index());
        let after: f64 = readers.iter().map(|&r| self.graph[r].flops).sum();
        self.left.add_flops(fold.step, after - before - fold.flops);
        for &reader in &readers {
            let waiting = self
                .graph
                .predecessors(reader)
                .filter(|source| !self.finished[source.index()])
                .count();
            self.waiting_on[reader.index()] = waiting;
            if waiting == 0 {
                self.make_ready(reader);
            }
        }
        for &id in &fold.inputs {
            self.store.pass_reads(id, 1, readers.len());
        }
        let seconds = self.clock.now().saturating_duration_since(start);
        self.governor.charge_rewrite(seconds.as_secs_f64());
    }
}
