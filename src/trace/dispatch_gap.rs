//! Dispatch gaps: for a compute task whose inputs were all ready when the task before it on its
//! device ended, the seconds between that end and its start — the dispatcher's own time, which a
//! performance model charges every compute task (`srcflow calibrate` measures it from traces).

use crate::graph::{Lane, SweepGraph};
use crate::sched::{RunLog, TaskEvent};
use petgraph::stable_graph::NodeIndex;
use petgraph::Direction;
use std::collections::{BTreeMap, HashMap};

/// The dispatch gap of each compute task of `log` (the run of `graph`) that had one.
pub fn dispatch_gaps(graph: &SweepGraph, log: &RunLog) -> HashMap<NodeIndex, f64> {
    let ends: HashMap<NodeIndex, f64> = log.events.iter().map(|e| (e.node, e.end)).collect();
    let mut by_device: BTreeMap<usize, Vec<&TaskEvent>> = BTreeMap::new();
    for e in log.events.iter().filter(|e| e.lane == Lane::Compute) {
        by_device.entry(e.device).or_default().push(e);
    }
    let mut gaps = HashMap::new();
    for events in by_device.values_mut() {
        events.sort_by(|a, b| a.start.total_cmp(&b.start));
        for pair in events.windows(2) {
            let (done, next) = (pair[0], pair[1]);
            let mut inputs = graph
                .graph
                .neighbors_directed(next.node, Direction::Incoming);
            if inputs.all(|input| ends.get(&input).is_some_and(|&end| end <= done.end)) {
                gaps.insert(next.node, (next.start - done.end).max(0.0));
            }
        }
    }
    gaps
}
