//! `Progress`: how a caller hears that a run moves on (the CLI draws a progress bar with it).

use crate::graph::{Pass, Task};
use crate::ByteSize;

/// Told of every finished task.
pub trait Progress: Send + Sync {
    /// `task` of `pass` finished; `done` of `total` tasks are done (the total grows when the
    /// memory governor splits a node) and `spilled` bytes have been moved off the device so far.
    fn task_done(&self, task: &Task, pass: Pass, done: usize, total: usize, spilled: u64);
}

/// What a progress display says after its numbers: the pass (→ or ←), the site and the bytes
/// spilled.
pub fn progress_message(pass: Pass, site: usize, spilled: u64) -> String {
    let arrow = match pass {
        Pass::LeftToRight => "→",
        Pass::RightToLeft => "←",
    };
    format!("{arrow} site {site}, {} spilled", ByteSize(spilled))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_pass_the_site_and_the_spill() {
        assert_eq!(
            progress_message(Pass::RightToLeft, 17, 2_500_000),
            "← site 17, 2.50 MB spilled"
        );
        assert_eq!(
            progress_message(Pass::LeftToRight, 0, 0),
            "→ site 0, 0 B spilled"
        );
    }
}
