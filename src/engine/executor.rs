//! `TaskRouter`: sends each task to the backend, the input source or the output sink.

use super::{CoreSink, CoreSource};
use crate::backend::Backend;
use crate::error::Result;
use crate::graph::{Op, SweepGraph, Task};
use crate::kernels::legs;
use crate::sched::Executor;
use crate::tensor::{Labeled, Meter, Operand, Tensor};
use std::sync::Arc;

/// Routes tasks: reads to the source, writes to the sink, the rest to the backend.
pub(super) struct TaskRouter<'a> {
    pub graph: &'a SweepGraph,
    pub backend: &'a dyn Backend,
    pub source: &'a dyn CoreSource,
    pub sink: &'a dyn CoreSink,
}

impl Executor for TaskRouter<'_> {
    fn execute(&self, task: &Task, inputs: Vec<Arc<Tensor>>) -> Result<Vec<Tensor>> {
        match task.op {
            Op::ReadSite { layer, .. } => Ok(vec![self.source.read(layer, task.site)?]),
            Op::WriteSite => {
                let basis = Labeled {
                    legs: legs::basis(),
                    value: Arc::clone(&inputs[0]),
                };
                let core = basis
                    .arrange(&legs::out_core(), &mut Meter::default())
                    .value;
                self.sink.write(task.site, Arc::unwrap_or_clone(core))?;
                Ok(vec![])
            }
            _ => self.backend.compute(self.graph, task, inputs),
        }
    }
}
