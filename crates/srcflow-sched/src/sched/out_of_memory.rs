//! The out-of-memory error a task reports: which task, how many bytes it needed and what its
//! device had then.

use srcflow_graph::graph::Task;
use srcflow_tensor::device::{OutOfMemory, PoolUsage};
use srcflow_tensor::{ByteSize, Error};

/// The error `task` reports when allocation failed with `oom` while it asked for `needed` bytes.
pub(crate) fn task_out_of_memory(oom: &OutOfMemory, task: &Task, needed: u64) -> Error {
    let mut error = out_of_memory(task, needed, &oom.usage, "");
    if let Error::OutOfMemory { why, injected, .. } = &mut error {
        *injected = oom.injected;
        if oom.injected {
            *why = " (injected by `DeviceOptions::inject_oom`)".into();
        }
    }
    error
}

/// The error for `task` needing `needed` bytes of a device in state `usage`; `why` (empty or
/// starting with a space) says why the governor gave up.
pub(crate) fn out_of_memory(task: &Task, needed: u64, usage: &PoolUsage, why: &str) -> Error {
    let capacity = if usage.capacity == u64::MAX {
        "unlimited".to_string()
    } else {
        ByteSize(usage.capacity).to_string()
    };
    Error::OutOfMemory {
        task: task.to_string(),
        site: task.site,
        kernel: task.op.name(),
        needed: ByteSize(needed),
        available: format!(
            "{} free and {} in the largest cached block (device capacity {capacity})",
            ByteSize(usage.physically_free()),
            ByteSize(usage.largest_cached),
        ),
        why: why.to_string(),
        injected: false,
    }
}
