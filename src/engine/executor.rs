//! `TaskRouter`: sends each task to the backend, the input source, the output sink or the disk.

use super::{CoreSink, CoreSource};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::graph::{Op, SweepGraph, Task};
use crate::kernels::legs;
use crate::plan::Tier;
use crate::sched::Executor;
use crate::store::{DiskTier, Value};
use crate::tensor::{Labeled, Meter, Operand};
use std::sync::Arc;

/// Routes tasks: reads to the source, writes to the sink, copies to the backend or the disk
/// tier, and the kernels to the backend.
pub(super) struct TaskRouter<'a> {
    pub graph: &'a SweepGraph,
    pub backend: &'a dyn Backend,
    pub source: &'a dyn CoreSource,
    pub sink: &'a dyn CoreSink,
    pub disk: Option<&'a DiskTier<'a>>,
}

impl Executor for TaskRouter<'_> {
    fn execute(&self, task: &Task, inputs: Vec<Value>) -> Result<Vec<Value>> {
        match task.op {
            Op::ReadSite { layer, .. } => {
                Ok(vec![Value::tensor(self.source.read(layer, task.site)?)])
            }
            Op::WriteSite => {
                let basis = Labeled {
                    legs: legs::basis(),
                    value: inputs[0].in_memory(task)?,
                };
                let core = basis
                    .arrange(&legs::out_core(), &mut Meter::default())
                    .value;
                self.sink.write(task.site, Arc::unwrap_or_clone(core))?;
                Ok(vec![])
            }
            Op::Spill { to: Tier::Disk } => {
                let file = self.disk()?.write(task, &*inputs[0].in_memory(task)?)?;
                Ok(vec![Value::File(Arc::new(file))])
            }
            Op::Fetch { from: Tier::Disk } => {
                let tensor = self.disk()?.read(&*inputs[0].on_disk(task)?)?;
                Ok(vec![Value::tensor(tensor)])
            }
            Op::Spill { .. } => self.copy(task, &inputs[0], Tier::Host),
            Op::Fetch { .. } => self.copy(task, &inputs[0], Tier::Device),
            _ => {
                let tensors = inputs
                    .iter()
                    .map(|v| v.in_memory(task))
                    .collect::<Result<Vec<_>>>()?;
                let outputs = self.backend.compute(self.graph, task, tensors)?;
                Ok(outputs.into_iter().map(Value::tensor).collect())
            }
        }
    }
}

impl TaskRouter<'_> {
    /// The disk tier, which a graph with disk spills must have been given.
    fn disk(&self) -> Result<&DiskTier<'_>> {
        self.disk.ok_or_else(|| {
            Error::Invalid("the graph spills to disk but the run has no scratch directory".into())
        })
    }

    /// A device ↔ host copy by the backend.
    fn copy(&self, task: &Task, value: &Value, to: Tier) -> Result<Vec<Value>> {
        let tensor = self.backend.copy(&*value.in_memory(task)?, to)?;
        Ok(vec![Value::tensor(tensor)])
    }
}
