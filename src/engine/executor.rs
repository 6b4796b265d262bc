//! `TaskRouter`: sends each task to the backend, the input source, the output sink or the disk,
//! with the device blocks the scheduler allocated for it.

use super::backend_values::BackendValues;
use super::output_slots::OutputSlots;
use super::{collective, CoreSink, CoreSource};
use crate::backend::{Backend, BackendTensor};
use crate::device::{Block, DeviceFault};
use crate::error::{Error, Result};
use crate::graph::{Cols, Op, SweepGraph, Task};
use crate::sched::Executor;
use crate::store::{DiskTier, Value};
use crate::tensor::{AnyTensor, Meter};
use crate::Tier;
use std::sync::{Arc, Mutex};

/// Routes tasks: reads to the source, writes to the sink, copies to the backend or the disk
/// tier, and the kernels to the backend.
pub(super) struct TaskRouter<'a> {
    pub graph: &'a SweepGraph,
    /// The backend of each device.
    pub backends: &'a [Box<dyn Backend>],
    /// The seed of the sketches.
    pub seed: u64,
    /// A device failure to inject.
    pub fault: Option<DeviceFault>,
    pub source: &'a dyn CoreSource,
    pub sink: &'a dyn CoreSink,
    pub disk: Option<&'a DiskTier<'a>>,
    pub slots: OutputSlots,
    /// The bond right of each output core written so far (0 until written).
    pub bonds: Mutex<Vec<usize>>,
}

impl Executor for TaskRouter<'_> {
    fn execute(&self, task: &Task, inputs: Vec<Value>, blocks: Vec<Block>) -> Result<Vec<Value>> {
        match task.op {
            Op::ReadSite { layer, .. } => {
                let core = self.source.read(layer, task.site)?;
                Ok(vec![on_device(core.cast(self.graph.dtype), blocks)])
            }
            Op::WriteSite => {
                let core = train_form(&inputs[0].in_memory(task)?);
                if let Some(bond) = self.lock_bonds().get_mut(task.site) {
                    *bond = core.shape()[1];
                }
                self.sink.write(task.site, core)?;
                Ok(vec![])
            }
            Op::StoreDraft => {
                let core = train_form(&inputs[0].in_memory(task)?);
                self.sink.keep_draft(task.site, core)?;
                Ok(vec![Value::InSink])
            }
            Op::LoadDraft => {
                let core = self.sink.take_draft(task.site)?;
                Ok(vec![on_device(basis_form(core), blocks)])
            }
            Op::Spill { to: Tier::Disk } => {
                let file = self.disk()?.write(task, &inputs[0].in_memory(task)?)?;
                Ok(vec![Value::File(Arc::new(file))])
            }
            Op::Fetch { from: Tier::Disk } => {
                let tensor = self.disk()?.read(&*inputs[0].on_disk(task)?)?;
                Ok(vec![Value::tensor(tensor)])
            }
            Op::Spill { .. } => {
                let tensor = self.through_device(task, &inputs[0].in_memory(task)?)?;
                Ok(vec![Value::tensor(tensor)])
            }
            Op::Fetch { .. } => {
                let tensor = self.through_device(task, &inputs[0].in_memory(task)?)?;
                Ok(vec![on_device(tensor, blocks)])
            }
            Op::UploadPart | Op::AllGather | Op::Gather | Op::Scatter => {
                let tensors = self.in_memory(task, &inputs)?;
                let moved = collective::collect(self.graph, task, &tensors)?;
                let copy = self.through_device(task, &moved)?;
                Ok(vec![on_device(copy, blocks)])
            }
            _ => {
                if let Some(fault) = &self.fault {
                    fault.on_task(task)?;
                }
                let tensors = self.in_memory(task, &inputs)?;
                match (task.within, task.cols) {
                    (Some(within), Some(cols)) => {
                        self.compute_slice(task, tensors, blocks, within, cols)
                    }
                    _ => self.compute(task, tensors, blocks),
                }
            }
        }
    }
}

impl TaskRouter<'_> {
    /// The bonds of the written output cores, one per cut.
    pub fn written_bonds(&self) -> Vec<usize> {
        self.lock_bonds().clone()
    }

    fn lock_bonds(&self) -> std::sync::MutexGuard<'_, Vec<usize>> {
        self.bonds.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The disk tier, which a graph with disk spills must have been given.
    fn disk(&self) -> Result<&DiskTier<'_>> {
        self.disk.ok_or_else(|| {
            Error::Invalid("the graph spills to disk but the run has no scratch directory".into())
        })
    }

    /// `tensor` uploaded to the device of `task` and downloaded again (values are host
    /// arrays between tasks; where device memory is host memory, neither copies).
    fn through_device(&self, task: &Task, tensor: &AnyTensor) -> Result<AnyTensor> {
        let backend = self.backend(task);
        backend.download(backend.upload(tensor)?)
    }

    /// Runs the kernel of compute task `task` on `inputs` on its device's backend.
    fn run_kernel(&self, task: &Task, inputs: Vec<AnyTensor>) -> Result<Vec<AnyTensor>> {
        let mut outputs = None;
        let mut work = || outputs = Some(self.kernel_on_backend(task, &inputs));
        self.backend(task).within(&mut work);
        outputs.expect("the backend ran the kernel")
    }

    /// [`Self::run_kernel`] within its backend's context.
    fn kernel_on_backend(&self, task: &Task, inputs: &[AnyTensor]) -> Result<Vec<AnyTensor>> {
        let backend = self.backend(task);
        let dtype = self.graph.dtype;
        let inputs = inputs
            .iter()
            .map(|input| {
                if input.dtype() != dtype {
                    return Err(Error::Invalid(format!(
                        "{task} computes in {dtype} but got {} data",
                        input.dtype()
                    )));
                }
                let tensor = backend.upload(input)?;
                Ok(BackendTensor { backend, tensor })
            })
            .collect::<Result<Vec<_>>>()?;
        let values = BackendValues {
            backend,
            dtype,
            seed: self.seed,
        };
        let outputs = self
            .graph
            .run_kernel(task, inputs, &values, &mut Meter::default())?;
        outputs
            .into_iter()
            .map(|output| backend.download(output.tensor))
            .collect()
    }

    /// The backend of the device `task` runs on.
    fn backend(&self, task: &Task) -> &dyn Backend {
        self.backends[task.device].as_ref()
    }

    /// The tensors of `inputs`, which must be in memory.
    fn in_memory(&self, task: &Task, inputs: &[Value]) -> Result<Vec<AnyTensor>> {
        inputs.iter().map(|v| v.in_memory(task)).collect()
    }

    /// Runs a whole kernel: its outputs keep their blocks, its workspace is freed after it.
    fn compute(
        &self,
        task: &Task,
        inputs: Vec<AnyTensor>,
        blocks: Vec<Block>,
    ) -> Result<Vec<Value>> {
        let mut blocks = blocks.into_iter();
        let outputs = self.run_kernel(task, inputs)?;
        Ok(outputs
            .into_iter()
            .map(|tensor| match blocks.next() {
                Some(block) => Value::on_device(tensor, block),
                None => Value::tensor(tensor),
            })
            .collect())
    }

    /// Runs a half-batch node over `cols` of the batch `within`: its batched input is cut to
    /// its rows, and its result is written into the output the first slice allocated (with the
    /// first of `blocks`). The slice that completes the output returns it; the others return
    /// nothing.
    fn compute_slice(
        &self,
        task: &Task,
        mut inputs: Vec<AnyTensor>,
        mut blocks: Vec<Block>,
        within: Cols,
        cols: Cols,
    ) -> Result<Vec<Value>> {
        let output = task.outputs[0];
        if !self.slots.is_open(&output) {
            self.slots.open(output, blocks.remove(0));
        }
        let rows = cols.start - within.start..cols.end - within.start;
        for (input, id) in inputs.iter_mut().zip(&task.inputs) {
            if task.slices_input(id) {
                *input = input.leading_rows(rows.clone());
            }
        }
        let part = self.run_kernel(task, inputs)?.remove(0);
        drop(blocks);
        let axis = task.op.slice_axis();
        let whole = self
            .slots
            .write(output, axis, rows.start, within.len(), &part);
        Ok(whole.into_iter().collect())
    }
}

/// An output core in basis form `[OutLeft, Up, Down, OutRight]` turned to train form
/// `[l, r, u, d]`.
fn train_form(basis: &AnyTensor) -> AnyTensor {
    basis.permute(&[0, 3, 1, 2])
}

/// An output core in train form `[l, r, u, d]` turned to basis form.
fn basis_form(core: AnyTensor) -> AnyTensor {
    core.permute(&[0, 2, 3, 1])
}

/// A tensor on the device holding the first of `blocks` (a plain value when there is none).
fn on_device(tensor: AnyTensor, blocks: Vec<Block>) -> Value {
    match blocks.into_iter().next() {
        Some(block) => Value::on_device(tensor, block),
        None => Value::tensor(tensor),
    }
}
