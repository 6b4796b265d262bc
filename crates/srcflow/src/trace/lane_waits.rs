//! `lane_waits`: for each task of a run, when its lane came free and which of its inputs
//! arrived last. The trace draws a "waited for" arrow where the input came after the lane was
//! free, and records a compute task's dispatch gap where it did not: the dispatcher's own time,
//! which a performance model charges every compute task (`srcflow calibrate` reads it).

use srcflow_graph::graph::{Lane, SweepGraph};
use srcflow_sched::sched::{RunLog, TaskEvent};
use std::collections::HashMap;

/// One task with the moment its lane came free and its input that arrived last.
pub(super) struct LaneWait<'a> {
    /// The task.
    pub event: &'a TaskEvent,
    /// The end of the task before it on its lane (`None` for a lane's first task).
    pub lane_free: Option<f64>,
    /// Its input that ended last (`None` for a task without inputs).
    pub last_input: Option<&'a TaskEvent>,
}

impl LaneWait<'_> {
    /// True when its last input arrived after its lane came free.
    pub fn waited(&self) -> bool {
        let free = self.lane_free.unwrap_or(0.0);
        self.last_input.is_some_and(|input| input.end > free)
    }

    /// For a compute task that did not wait for an input, the seconds from its lane coming
    /// free to its start.
    pub fn dispatch_gap(&self) -> Option<f64> {
        if self.event.lane != Lane::Compute || self.waited() {
            return None;
        }
        Some((self.event.start - self.lane_free?).max(0.0))
    }
}

/// Every task of `log` (the run of `graph`) with its lane's free moment and last input, in
/// order of start.
pub(super) fn lane_waits<'a>(graph: &SweepGraph, log: &'a RunLog) -> Vec<LaneWait<'a>> {
    let by_node: HashMap<_, &TaskEvent> = log.events.iter().map(|e| (e.node, e)).collect();
    let mut lane_free: HashMap<(Lane, usize, usize), f64> = HashMap::new();
    let mut ordered: Vec<&TaskEvent> = log.events.iter().collect();
    ordered.sort_by(|a, b| a.start.total_cmp(&b.start));
    ordered
        .into_iter()
        .map(|event| LaneWait {
            event,
            lane_free: lane_free.insert((event.lane, event.rank, event.device), event.end),
            last_input: graph
                .incoming(event.node)
                .filter_map(|edge| by_node.get(&edge.from).copied())
                .max_by(|a, b| a.end.total_cmp(&b.end)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::lane_waits;
    use crate::{Engine, Options};
    use srcflow_graph::gen::{generate, ProblemKind, ProblemSpec};
    use srcflow_graph::graph::{GraphOptions, Lane, SweepGraph};
    use srcflow_sched::sim::MachineModel;

    #[test]
    fn each_ranks_shared_lanes_come_free_on_their_own() {
        let spec = ProblemSpec {
            sites: 8,
            bond: 16,
            ..ProblemSpec::default()
        };
        let stack = generate(ProblemKind::Random, &spec).unwrap().shape();
        let options = Options::new(16).with_graph(GraphOptions::new(16).with_devices(2));
        let graph = SweepGraph::build(&stack, &options.graph).unwrap();
        let ranked = srcflow_sched::ranks::across_nodes(&graph, 2).unwrap();
        let mut machine: MachineModel = serde_json::from_str(include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../graphs/leonardo-a100.json"
        )))
        .unwrap();
        machine.bytes_per_s.insert("io".into(), 1e6);
        let (_, log) = Engine::new(options)
            .unwrap()
            .simulate_across_nodes(&ranked, &machine)
            .unwrap();
        let shared = |lane: Lane| !lane.per_device();
        let waits = lane_waits(&ranked.graph, &log);
        let on_shared = waits.iter().filter(|w| shared(w.event.lane));
        for wait in on_shared {
            let free = wait.lane_free.unwrap_or(0.0);
            assert!(free <= wait.event.start + 1e-9, "{:?}", wait.event);
        }
    }
}
