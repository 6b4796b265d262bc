//! `TaskRouter`: sends each task to the backend, the input source, the output sink or the disk,
//! with the device blocks the scheduler allocated for it.

use super::backend_values::BackendValues;
use super::output_slots::{OutputSlots, SlicePlace};
use super::{collective, CoreSink, CoreSource};
use crate::checkpoint::{Checkpoint, KillFault};
use crossbeam_channel::Sender;
use srcflow_graph::graph::{Cols, Lane, Op, SweepGraph, Task};
use srcflow_sched::ranks::Post;
use srcflow_sched::sched::Executor;
use srcflow_sched::store::{DiskTier, InMemory, Value};
use srcflow_tensor::backend::{
    add_primitive_times, take_primitive_times, Backend, BackendTensor, DeviceTensor,
    PrimitiveTimes, Stream,
};
use srcflow_tensor::device::{Block, DeviceFault};
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::{AnyTensor, Meter};
use srcflow_tensor::Tier;
use std::sync::{Arc, Mutex};

/// Routes tasks: reads to the source, writes to the sink, copies to the backend or the disk
/// tier, and the kernels to the backend.
pub(super) struct TaskRouter<'a> {
    pub graph: &'a SweepGraph,
    /// Where send tasks post values for other ranks (runs of several ranks only).
    pub posts: Option<Sender<Post>>,
    /// The backend of each device.
    pub backends: &'a [Arc<dyn Backend>],
    /// The seed of the sketches.
    pub seed: u64,
    /// A device failure to inject.
    pub fault: Option<DeviceFault>,
    pub source: &'a dyn CoreSource,
    pub sink: &'a dyn CoreSink,
    pub disk: Option<&'a DiskTier<'a>>,
    /// The checkpoint the run keeps, which disk spills are written into.
    pub checkpoint: Option<&'a Checkpoint>,
    /// Kills the process at a chosen task (tests of resuming).
    pub kill: Option<&'a KillFault>,
    pub slots: OutputSlots,
    /// The bond right of each output core written so far (0 until written).
    pub bonds: Mutex<Vec<usize>>,
}

impl Executor for TaskRouter<'_> {
    /// Runs `task` within its device's backend, on the stream of its lane; an error that does
    /// not say which task failed is prefixed with it. The time its primitives took is counted
    /// on the calling thread, wherever the backend ran them.
    fn execute(&self, task: &Task, inputs: Vec<Value>, blocks: Vec<Block>) -> Result<Vec<Value>> {
        let mut given = Some((inputs, blocks));
        let mut outputs = None;
        let mut spent = PrimitiveTimes::default();
        let mut work = || {
            let (inputs, blocks) = given.take().expect("the backend runs a task once");
            let before = take_primitive_times();
            outputs = Some(self.route(task, inputs, blocks));
            self.kill_after(task);
            spent = take_primitive_times();
            add_primitive_times(before);
        };
        self.backend(task).within(stream_of(task.op), &mut work);
        add_primitive_times(spent);
        outputs
            .expect("the backend ran the task")
            .map_err(|error| naming(task, error))
    }
}

/// The stream of a device that runs a task of `op`: its lane's, with reads and writes of the
/// input and output cores on the upload and download streams.
fn stream_of(op: Op) -> Stream {
    match op.lane() {
        Lane::Compute => Stream::Compute,
        Lane::Collective | Lane::Network => Stream::Peer,
        Lane::Upload | Lane::DiskRead => Stream::Upload,
        Lane::Download | Lane::DiskWrite => Stream::Download,
        Lane::Io if matches!(op, Op::ReadSite { .. } | Op::LoadDraft) => Stream::Upload,
        Lane::Io => Stream::Download,
    }
}

/// `error`, prefixed with the site and kernel of `task` where its message does not say
/// already where it happened (a read or write names its train or file and site itself); a
/// device allocator's out-of-memory becomes the task's, which the memory governor recovers from.
fn naming(task: &Task, error: Error) -> Error {
    let name = task.to_string();
    let names_itself = matches!(task.op, Op::ReadSite { .. } | Op::WriteSite);
    let named = |message: String| {
        if names_itself || message.contains(&name) {
            message
        } else {
            format!("site {}, {} kernel: {message}", task.site, task.op.name())
        }
    };
    match error {
        Error::DeviceOutOfMemory { bytes, said } => Error::OutOfMemory {
            task: name,
            site: task.site,
            kernel: task.op.name(),
            needed: bytes,
            available: format!("the device's allocator said {said}"),
            why: String::new(),
            injected: false,
        },
        Error::Invalid(message) => Error::Invalid(named(message)),
        Error::Shape(message) => Error::Shape(named(message)),
        Error::Numeric(message) => Error::Numeric(named(message)),
        other => other,
    }
}

/// Refuses the output core of `site` when it holds an infinity or a NaN: the inputs are
/// finite (their reads check), so the values overflowed on the way.
fn refuse_overflowed(site: usize, core: &AnyTensor) -> Result<()> {
    let Some(index) = core.first_non_finite() else {
        return Ok(());
    };
    Err(Error::Numeric(format!(
        "output site {site}: element {index} is infinite or NaN: the values overflowed, products \
         of the inputs beyond the largest number of their element type; scale the input cores \
         down (their norms near 1), and the output back up by the same factor"
    )))
}

impl TaskRouter<'_> {
    /// Sends `task` to the source, the sink, the disk or the backend.
    fn route(&self, task: &Task, inputs: Vec<Value>, blocks: Vec<Block>) -> Result<Vec<Value>> {
        match task.op {
            Op::ReadSite { layer, .. } => {
                let core = self.source.read(layer, task.site)?;
                Ok(vec![self.placed(
                    task,
                    core.cast(self.graph.dtype),
                    blocks,
                )?])
            }
            Op::WriteSite => {
                let core = train_form(&self.on_host(task, &inputs[0])?);
                refuse_overflowed(task.site, &core)?;
                if let Some(bond) = self.lock_bonds().get_mut(task.site) {
                    *bond = core.shape()[1];
                }
                self.sink.write(task.site, core)?;
                Ok(vec![])
            }
            Op::StoreDraft => {
                let core = train_form(&self.on_host(task, &inputs[0])?);
                self.sink.keep_draft(task.site, core)?;
                Ok(vec![Value::InSink])
            }
            Op::LoadDraft => {
                let core = self.sink.take_draft(task.site)?;
                Ok(vec![self.placed(task, basis_form(core), blocks)?])
            }
            Op::Spill { to: Tier::Disk } => {
                let tensor = self.on_host(task, &inputs[0])?;
                let file = match self.checkpoint {
                    Some(c) => {
                        let fault = self.disk()?.write_fault();
                        c.keep(task.op, task.outputs[0].content(), &tensor, fault)?
                    }
                    None => self.disk()?.write(task, &tensor)?,
                };
                Ok(vec![Value::File(Arc::new(file))])
            }
            Op::Checkpoint => {
                let (checkpoint, value) = (self.checkpoint()?, task.inputs[0].content());
                if checkpoint.due(value, task.site) {
                    let tensor = self.on_host(task, &inputs[0])?;
                    checkpoint.keep(task.op, value, &tensor, None)?;
                }
                Ok(vec![])
            }
            Op::Restore => self.restored(task, blocks),
            Op::Fetch { from: Tier::Disk } => {
                let tensor = self.disk()?.read(&*inputs[0].on_disk(task)?)?;
                Ok(vec![Value::Host(tensor)])
            }
            Op::Spill { .. } => Ok(vec![Value::Host(self.on_host(task, &inputs[0])?)]),
            Op::Fetch { .. } => {
                let tensor = self.on_host(task, &inputs[0])?;
                Ok(vec![self.placed(task, tensor, blocks)?])
            }
            Op::UploadPart => {
                let core = self.on_host(task, &inputs[0])?;
                let part = collective::upload_part(self.graph, task, &core)?;
                Ok(vec![self.placed(task, part, blocks)?])
            }
            Op::Send => {
                let posts = self
                    .posts
                    .as_ref()
                    .ok_or_else(|| Error::Invalid("a send task ran in a run of one rank".into()))?;
                let tensor = self.on_host(task, &inputs[0])?;
                posts
                    .send((task.inputs[0], tensor))
                    .map_err(|_| Error::Invalid("the network lane has stopped".into()))?;
                Ok(vec![])
            }
            Op::Receive => Err(Error::Invalid(
                "a receive task reached a compute lane (it is the network lane's)".into(),
            )),
            Op::AllGather | Op::Gather | Op::Scatter => {
                let tensors = self.on_backend(task, &inputs)?;
                let moved = collective::collect(self.graph, task, self.backend(task), &tensors)?;
                Ok(vec![self.kept(task, moved, blocks.into_iter().next())?])
            }
            _ => {
                if let Some(fault) = self.fault.as_ref().filter(|_| task.lane == Lane::Compute) {
                    fault.on_compute_task(task.device, task)?;
                }
                let tensors = self.on_backend(task, &inputs)?;
                match (task.within, task.cols) {
                    (Some(within), Some(cols)) => {
                        self.compute_slice(task, tensors, blocks, within, cols)
                    }
                    _ => self.compute(task, tensors, blocks),
                }
            }
        }
    }

    /// The bonds of the written output cores, one per cut.
    pub fn written_bonds(&self) -> Vec<usize> {
        self.lock_bonds().clone()
    }

    fn lock_bonds(&self) -> std::sync::MutexGuard<'_, Vec<usize>> {
        self.bonds.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Kills the process after `task` when the injected kill names it (a task that writes into
    /// the checkpoint is struck in the middle of its write instead).
    fn kill_after(&self, task: &Task) {
        let writes = matches!(task.op, Op::Checkpoint | Op::Spill { to: Tier::Disk });
        if let (Some(kill), false) = (self.kill, writes) {
            kill.strike(task.op.name());
        }
    }

    /// The checkpoint, which a graph with checkpoint tasks must have been given.
    fn checkpoint(&self) -> Result<&Checkpoint> {
        self.checkpoint.ok_or_else(|| {
            Error::Invalid("the graph has checkpoint tasks but the run keeps no checkpoint".into())
        })
    }

    /// The output of restore task `task`: its value read back from the checkpoint into its
    /// tier (the file itself, for a copy on disk).
    fn restored(&self, task: &Task, blocks: Vec<Block>) -> Result<Vec<Value>> {
        let id = task.outputs[0];
        let checkpoint = self.checkpoint()?;
        if id.tier() == Tier::Disk {
            return Ok(vec![Value::File(Arc::new(checkpoint.file(id.content())?))]);
        }
        let tensor = checkpoint.read(id.content())?;
        Ok(vec![self.placed(task, tensor, blocks)?])
    }

    /// The disk tier, which a graph with disk spills must have been given.
    fn disk(&self) -> Result<&DiskTier<'_>> {
        self.disk.ok_or_else(|| {
            Error::Invalid("the graph spills to disk but the run has no scratch directory".into())
        })
    }

    /// The backend of the device `task` runs on.
    fn backend(&self, task: &Task) -> &dyn Backend {
        self.backends[task.device].as_ref()
    }

    /// The tensor of `value` in host memory: downloaded from its device if it is on one.
    fn on_host(&self, task: &Task, value: &Value) -> Result<AnyTensor> {
        match value.in_memory(task)? {
            InMemory::Host(tensor) => Ok(tensor.clone()),
            InMemory::Device(v) => self.backends[v.device].download(v.tensor.clone()),
        }
    }

    /// The tensors of `values` on the device of `task`: uploaded from the host, or copied
    /// through the host from another device, where they are not there yet.
    fn on_backend(&self, task: &Task, values: &[Value]) -> Result<Vec<DeviceTensor>> {
        values
            .iter()
            .map(|value| match value.in_memory(task)? {
                InMemory::Device(v) if v.device == task.device => Ok(v.tensor.clone()),
                _ => self.backend(task).upload(&self.on_host(task, value)?),
            })
            .collect()
    }

    /// The host tensor `tensor` as the output of `task`: uploaded to its device into the
    /// first of `blocks`, or kept on the host when the task allocated none.
    fn placed(&self, task: &Task, tensor: AnyTensor, blocks: Vec<Block>) -> Result<Value> {
        match blocks.into_iter().next() {
            Some(block) => {
                let tensor = self.backend(task).upload(&tensor)?;
                Ok(Value::on_device(task.device, tensor, block))
            }
            None => Ok(Value::Host(tensor)),
        }
    }

    /// The device tensor `tensor` as an output of `task`: kept on its device with `block`, or
    /// downloaded to the host when the task allocated none for it.
    fn kept(&self, task: &Task, tensor: DeviceTensor, block: Option<Block>) -> Result<Value> {
        match block {
            Some(block) => Ok(Value::on_device(task.device, tensor, block)),
            None => Ok(Value::Host(self.backend(task).download(tensor)?)),
        }
    }

    /// Runs the kernel of compute task `task` on `inputs` (on its device).
    fn run_kernel(&self, task: &Task, inputs: &[DeviceTensor]) -> Result<Vec<DeviceTensor>> {
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
                Ok(BackendTensor::new(backend, input.clone()))
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
        outputs.iter().map(BackendTensor::materialized).collect()
    }

    /// Runs a whole kernel: its outputs keep their blocks, its workspace is freed after it.
    fn compute(
        &self,
        task: &Task,
        inputs: Vec<DeviceTensor>,
        blocks: Vec<Block>,
    ) -> Result<Vec<Value>> {
        let mut blocks = blocks.into_iter();
        let outputs = self.run_kernel(task, &inputs)?;
        outputs
            .into_iter()
            .map(|tensor| self.kept(task, tensor, blocks.next()))
            .collect()
    }

    /// Runs a half-batch node over `cols` of the batch `within`: its batched input is cut to
    /// its rows, and its result is written into the output the first slice allocated (with the
    /// first of `blocks`). The slice that completes the output returns it; the others return
    /// nothing.
    fn compute_slice(
        &self,
        task: &Task,
        mut inputs: Vec<DeviceTensor>,
        mut blocks: Vec<Block>,
        within: Cols,
        cols: Cols,
    ) -> Result<Vec<Value>> {
        let output = task.outputs[0];
        if !self.slots.is_open(&output) {
            self.slots.open(output, blocks.remove(0));
        }
        let backend = self.backend(task);
        let rows = cols.start - within.start..cols.end - within.start;
        for (input, id) in inputs.iter_mut().zip(&task.inputs) {
            if task.slices_input(id) {
                *input = backend.slice(input, 0, rows.clone())?;
            }
        }
        let part = self.run_kernel(task, &inputs)?.remove(0);
        drop(blocks);
        let place = SlicePlace {
            device: task.device,
            start: rows.start,
            total: within.len(),
        };
        let whole = self.slots.write(output, place, &part, backend)?;
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
