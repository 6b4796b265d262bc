//! The data movement between the devices of a node: parts of input cores uploaded from the
//! host, parts joined by all-gathers, sketch blocks gathered for the QR and basis rows
//! scattered for the projection. What each does to a tensor; the backend makes the copies.

use srcflow_graph::graph::{share, DataId, Op, Shared, SweepGraph, Task};
use srcflow_tensor::backend::{Backend, DeviceTensor};
use srcflow_tensor::error::{Error, Result};
use srcflow_tensor::tensor::AnyTensor;

/// The part of the host core `core` that `task` (an upload of a part) puts on its device: the
/// device's share of the core's elements, cut on the host so that only it is copied.
pub(crate) fn upload_part(graph: &SweepGraph, task: &Task, core: &AnyTensor) -> Result<AnyTensor> {
    match task.outputs[0] {
        DataId::Part {
            device,
            of: Shared::Core { site, pass, .. },
        } => {
            let len = core.shape().iter().product();
            let flat = core.clone().reshape(vec![len]);
            let cut = share(len, graph.core_readers(site, pass), device);
            Ok(flat.leading_rows(cut.start..cut.end))
        }
        _ => Err(not_a_move(task)),
    }
}

/// The tensor `task` (an all-gather, a gather or a scatter) puts on its device, from its
/// `inputs` (in the task's input order, already on the task's `backend`).
pub fn collect(
    graph: &SweepGraph,
    task: &Task,
    backend: &dyn Backend,
    inputs: &[DeviceTensor],
) -> Result<DeviceTensor> {
    match (task.op, task.outputs[0]) {
        (Op::AllGather, DataId::Replica { of, .. }) => all_gather(graph, task, backend, of, inputs),
        (Op::Gather, _) => Ok(inputs[0].clone()),
        (Op::Scatter, _) => {
            let rows = graph.device_rows(task.site, task.device);
            backend.slice(&inputs[0], 0, rows.start..rows.end)
        }
        _ => Err(not_a_move(task)),
    }
}

/// Joins the parts of `of`, one per device in device order: the flat pieces of a core, or
/// the row blocks of S (along its first axis, `OutLeft`).
fn all_gather(
    graph: &SweepGraph,
    task: &Task,
    backend: &dyn Backend,
    of: Shared,
    parts: &[DeviceTensor],
) -> Result<DeviceTensor> {
    match of {
        Shared::Core { layer, site, .. } => {
            let flat = backend.join(parts, 0)?;
            let shape = graph.stack.layers[layer].cores[site].to_vec();
            Ok(flat.reshaped(shape))
        }
        Shared::Proj { .. } => backend.join(parts, 0),
        _ => Err(Error::Invalid(format!(
            "task {task} all-gathers a value that has no parts"
        ))),
    }
}

/// The error for a task that is not a move between devices.
fn not_a_move(task: &Task) -> Error {
    Error::Invalid(format!("task {task} is not a move between devices"))
}
