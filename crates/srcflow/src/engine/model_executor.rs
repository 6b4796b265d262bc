//! `ModelExecutor`: "runs" a task of a simulated sweep by making outputs of the right size,
//! holding the device blocks the scheduler allocated, without computing anything.

use srcflow_graph::graph::{DataId, SweepGraph, Task};
use srcflow_sched::sched::Executor;
use srcflow_sched::store::Value;
use srcflow_tensor::device::Block;
use srcflow_tensor::error::Result;
use std::collections::HashMap;
use std::sync::Mutex;

/// Makes modelled outputs; half-batch nodes fill one output between them, as in real runs.
pub struct ModelExecutor<'g> {
    graph: &'g SweepGraph,
    /// Outputs being filled by half-batch nodes: entries written so far, and the block.
    slots: Mutex<HashMap<DataId, (usize, Option<Block>)>>,
}

impl<'g> ModelExecutor<'g> {
    /// An executor for the tasks of `graph`.
    pub fn new(graph: &'g SweepGraph) -> Self {
        ModelExecutor {
            graph,
            slots: Mutex::new(HashMap::new()),
        }
    }

    fn output(&self, id: DataId, block: Option<Block>) -> Value {
        Value::modelled(self.graph.value_bytes(id), block)
    }
}

impl Executor for ModelExecutor<'_> {
    fn execute(&self, task: &Task, _inputs: Vec<Value>, blocks: Vec<Block>) -> Result<Vec<Value>> {
        let mut blocks = blocks.into_iter();
        let (Some(within), Some(cols)) = (task.within, task.cols) else {
            let outputs = task.outputs.iter();
            return Ok(outputs.map(|&id| self.output(id, blocks.next())).collect());
        };
        let id = task.outputs[0];
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        let slot = slots.entry(id).or_insert_with(|| (0, blocks.next()));
        slot.0 += cols.len();
        if slot.0 < within.len() {
            return Ok(vec![]);
        }
        let (_, block) = slots.remove(&id).expect("present");
        Ok(vec![self.output(id, block)])
    }
}
