//! `DeviceRequest`: the device blocks a task allocates when it starts, from the graph alone,
//! so that admission (before) and allocation (inside the task) ask for the same bytes.

use srcflow_graph::graph::{DeviceMemory, SweepGraph, Task};
use srcflow_tensor::Tier;

/// The blocks one task allocates on the device: its outputs, then its workspace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct DeviceRequest {
    /// Bytes of each block.
    pub blocks: Vec<u64>,
}

impl DeviceRequest {
    /// What `task` allocates on its device (input cores read for several devices stay on the
    /// host); `slot_open` says whether the output of a half-batch node has
    /// already been allocated by an earlier slice.
    pub fn of(graph: &SweepGraph, task: &Task, slot_open: bool) -> Self {
        match task.op.profile().device_memory {
            DeviceMemory::Nothing => DeviceRequest::default(),
            DeviceMemory::Outputs => Self::output(graph, task),
            DeviceMemory::OutputsUnlessCoresOnHost if graph.cores_tier() != Tier::Device => {
                DeviceRequest::default()
            }
            DeviceMemory::OutputsUnlessCoresOnHost => Self::output(graph, task),
            DeviceMemory::OutputsOnDevice
                if task
                    .outputs
                    .first()
                    .is_some_and(|id| id.tier() == Tier::Device) =>
            {
                Self::output(graph, task)
            }
            DeviceMemory::OutputsOnDevice => DeviceRequest::default(),
            DeviceMemory::MovedBytes => DeviceRequest {
                blocks: vec![task.moved_bytes],
            },
            DeviceMemory::OutputsAndWorkspace if task.within.is_some() => {
                Self::slice(graph, task, task.peak_bytes, slot_open)
            }
            DeviceMemory::OutputsAndWorkspace => Self::whole(graph, task),
        }
    }

    /// What `task` would allocate as a half-batch node over `width` of its columns (`None` for
    /// tasks without a batch); `slot_open` as for [`DeviceRequest::of`].
    pub fn at_width(
        graph: &SweepGraph,
        task: &Task,
        width: usize,
        slot_open: bool,
    ) -> Option<Self> {
        let peak = graph.batch_task(task.op, task.site, width)?.peak_bytes;
        Some(Self::slice(graph, task, peak, slot_open))
    }

    /// Bytes of all blocks.
    pub fn total(&self) -> u64 {
        self.blocks.iter().sum()
    }

    fn output(graph: &SweepGraph, task: &Task) -> Self {
        DeviceRequest {
            blocks: task
                .outputs
                .iter()
                .map(|&id| graph.value_bytes(id))
                .collect(),
        }
    }

    /// Outputs plus a workspace: the kernel's peak less its inputs and outputs.
    fn whole(graph: &SweepGraph, task: &Task) -> Self {
        let inputs: u64 = task.inputs.iter().map(|&id| graph.value_bytes(id)).sum();
        let mut request = Self::output(graph, task);
        let workspace = task.peak_bytes.saturating_sub(inputs + request.total());
        request.blocks.extend((workspace > 0).then_some(workspace));
        request
    }

    /// The whole output (unless a slice allocated it) plus the workspace of a slice whose
    /// kernel peaks at `peak` bytes: that peak less the inputs it shares with the other slices
    /// (the rows it cuts from its sliced input and its own output are copies it makes).
    fn slice(graph: &SweepGraph, task: &Task, peak: u64, slot_open: bool) -> Self {
        let shared: u64 = task
            .inputs
            .iter()
            .filter(|id| !task.slices_input(id))
            .map(|&id| graph.value_bytes(id))
            .sum();
        let mut blocks = if slot_open {
            vec![]
        } else {
            Self::output(graph, task).blocks
        };
        let workspace = peak.saturating_sub(shared);
        blocks.extend((workspace > 0).then_some(workspace));
        DeviceRequest { blocks }
    }
}
