//! `Progress`: how a caller hears that a run moves on (the CLI draws a progress bar with it).

use srcflow_graph::graph::{Pass, Task};
use srcflow_tensor::ByteSize;

/// Told of every finished task.
pub trait Progress: Send + Sync {
    /// `task` of `pass` finished; `done` of `total` tasks are done (the total grows when the
    /// memory governor splits a node) and `written` bytes have been written to the disk tier so
    /// far (at the end, the report's `written_to_disk_bytes`).
    fn task_done(&self, task: &Task, pass: Pass, done: usize, total: usize, written: u64);
}

/// What a progress display says after its numbers: the pass (→ or ←), the site and the bytes
/// written to disk, named as the report names them.
pub fn progress_message(pass: Pass, site: usize, written: u64) -> String {
    let arrow = match pass {
        Pass::LeftToRight => "→",
        Pass::RightToLeft => "←",
    };
    format!("{arrow} site {site}, {} written to disk", ByteSize(written))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_pass_the_site_and_the_bytes_written_to_disk() {
        assert_eq!(
            progress_message(Pass::RightToLeft, 17, 2_500_000),
            "← site 17, 2.50 MB written to disk"
        );
        assert_eq!(
            progress_message(Pass::LeftToRight, 0, 0),
            "→ site 0, 0 B written to disk"
        );
    }
}
