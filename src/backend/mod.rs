//! Backends: where compute tasks run. `cpu` (faer + rayon) today; a CUDA backend (cudarc) next.
//!
//! A backend receives a task with its inputs and returns its outputs. Values are host tensors
//! for now; the CUDA backend will hand out device buffers, streams and events through the same
//! call, which is why the scheduler talks to a backend only through [`Backend::compute`].

mod cpu;

pub use cpu::CpuBackend;

use crate::error::Result;
use crate::graph::{SweepGraph, Task};
use crate::plan::Tier;
use crate::tensor::AnyTensor;

/// Runs the numerical tasks of a sweep graph.
pub trait Backend: Send + Sync {
    /// A short name for reports ("cpu", "cuda").
    fn name(&self) -> &'static str;
    /// Number of worker threads (or streams) a kernel may use.
    fn threads(&self) -> usize;
    /// Runs compute task `task` of `graph` on `inputs` (in the task's input order).
    fn compute(
        &self,
        graph: &SweepGraph,
        task: &Task,
        inputs: Vec<AnyTensor>,
    ) -> Result<Vec<AnyTensor>>;
    /// Copies `tensor` between the device and host memory: to `Tier::Host` is a download,
    /// to `Tier::Device` an upload.
    fn copy(&self, tensor: &AnyTensor, to: Tier) -> Result<AnyTensor>;
    /// True when device memory is host memory, so both count against the host budget.
    fn shares_host_memory(&self) -> bool;
}
