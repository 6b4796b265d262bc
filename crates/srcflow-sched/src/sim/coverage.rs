//! `coverage`: for each kernel of a simulated graph, whether the machine model has seen tasks
//! like its tasks, so `srcflow simulate` can say where its prediction extrapolates.

use super::compute_model::Reach;
use super::machine::MachineModel;
use serde::Serialize;
use srcflow_graph::graph::{Lane, SweepGraph};
use std::collections::BTreeMap;

/// How well a model knows the tasks of one kernel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelCoverage {
    /// The kernel.
    pub kernel: String,
    /// Its tasks in the graph.
    pub tasks: usize,
    /// Those outside the shapes the model was fitted on.
    pub extrapolated: usize,
    /// Why the first of them is outside, or what the model times them by.
    pub note: Option<String>,
}

/// The coverage of each kernel of `graph` by `machine`, for devices with `threads_per_device`
/// kernel threads.
pub fn coverage(
    machine: &MachineModel,
    graph: &SweepGraph,
    threads_per_device: &[usize],
) -> Vec<KernelCoverage> {
    let mut kernels: BTreeMap<&str, KernelCoverage> = BTreeMap::new();
    for task in graph.tasks() {
        if task.lane != Lane::Compute {
            continue;
        }
        let kernel = task.op.name();
        let threads = threads_per_device.get(task.device).copied().unwrap_or(1);
        let reach = match (machine.assumed, machine.compute_for(threads)) {
            (true, _) => Reach::Extrapolated("the model's rates are assumed, not measured".into()),
            (false, None) => Reach::Extrapolated(
                "the model rates kernels by flops alone (no shapes fitted)".into(),
            ),
            (false, Some(model)) if model.threads != threads => Reach::Extrapolated(format!(
                "fitted for {} thread(s) per device, the run has {threads}",
                model.threads
            )),
            (false, Some(model)) => model.reach(kernel, &task.work),
        };
        let entry = kernels.entry(kernel).or_insert(KernelCoverage {
            kernel: kernel.to_string(),
            tasks: 0,
            extrapolated: 0,
            note: None,
        });
        entry.tasks += 1;
        if let Reach::Extrapolated(why) = reach {
            entry.extrapolated += 1;
            entry.note.get_or_insert(why);
        }
    }
    kernels.into_values().collect()
}
