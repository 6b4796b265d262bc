//! The data movement between the devices of a node: parts of input cores uploaded from the
//! host, parts joined by all-gathers, sketch blocks gathered for the QR and basis rows
//! scattered for the projection. What each does to a tensor; the backend makes the copies.

use crate::error::{Error, Result};
use crate::graph::{share, DataId, Op, Shared, SweepGraph, Task};
use crate::tensor::AnyTensor;

/// The tensor `task` (an upload of a part, an all-gather, a gather or a scatter) puts on its
/// device, from its `inputs` (in the task's input order).
pub fn collect(graph: &SweepGraph, task: &Task, inputs: &[AnyTensor]) -> Result<AnyTensor> {
    let output = task.outputs[0];
    match (task.op, output) {
        (
            Op::UploadPart,
            DataId::Part {
                device,
                of: Shared::Core { site, pass, .. },
            },
        ) => {
            let flat = flatten(&inputs[0]);
            let cut = share(flat.shape()[0], graph.core_readers(site, pass), device);
            Ok(flat.leading_rows(cut.start..cut.end))
        }
        (Op::AllGather, DataId::Replica { of, .. }) => all_gather(graph, task, of, inputs),
        (Op::Gather, _) => Ok(inputs[0].clone()),
        (Op::Scatter, _) => {
            let rows = graph.device_rows(task.site, task.device);
            Ok(inputs[0].leading_rows(rows.start..rows.end))
        }
        _ => Err(Error::Invalid(format!(
            "task {task} is not a move between devices"
        ))),
    }
}

/// Joins the parts of `of`, one per device in device order: the flat pieces of a core, or
/// the column blocks of S (along its last axis).
fn all_gather(
    graph: &SweepGraph,
    task: &Task,
    of: Shared,
    parts: &[AnyTensor],
) -> Result<AnyTensor> {
    match of {
        Shared::Core { layer, site, .. } => {
            let rows: Vec<AnyTensor> = parts
                .iter()
                .map(|p| p.clone().reshape(vec![1, p.shape()[0]]))
                .collect();
            let shape = graph.stack.layers[layer].cores[site].to_vec();
            Ok(AnyTensor::join_trailing(&rows).reshape(shape))
        }
        Shared::Proj { .. } => Ok(AnyTensor::join_trailing(parts)),
        _ => Err(Error::Invalid(format!(
            "task {task} all-gathers a value that has no parts"
        ))),
    }
}

/// `tensor` as a vector of its elements.
fn flatten(tensor: &AnyTensor) -> AnyTensor {
    let len = tensor.shape().iter().product();
    tensor.clone().reshape(vec![len])
}
