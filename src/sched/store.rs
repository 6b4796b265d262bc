//! The dispatcher's store: values alive between their producer and their last consumer.

use crate::graph::{DataId, SweepGraph, Task};
use crate::tensor::Tensor;
use std::collections::HashMap;
use std::sync::Arc;

/// Values by name, each with the number of consumers still to read it.
pub(super) struct Store {
    values: HashMap<DataId, Arc<Tensor>>,
    readers_left: HashMap<DataId, usize>,
}

impl Store {
    /// An empty store that knows how many tasks read each value of `graph`.
    pub fn new(graph: &SweepGraph) -> Self {
        let mut readers_left = HashMap::new();
        for task in graph.graph.node_weights() {
            for &id in &task.inputs {
                *readers_left.entry(id).or_default() += 1;
            }
        }
        Store {
            values: HashMap::new(),
            readers_left,
        }
    }

    /// The inputs of `task`, in its order.
    pub fn inputs(&self, task: &Task) -> Vec<Arc<Tensor>> {
        task.inputs
            .iter()
            .map(|id| Arc::clone(&self.values[id]))
            .collect()
    }

    /// Keeps `task`'s outputs and drops inputs nobody else will read.
    pub fn finish(&mut self, task: &Task, outputs: Vec<Tensor>) {
        for (&id, value) in task.outputs.iter().zip(outputs) {
            if self.readers_left.get(&id).copied().unwrap_or(0) > 0 {
                self.values.insert(id, Arc::new(value));
            }
        }
        for id in &task.inputs {
            let left = self.readers_left.get_mut(id).expect("counted");
            *left -= 1;
            if *left == 0 {
                self.values.remove(id);
            }
        }
    }
}
