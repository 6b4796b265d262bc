//! `Tier`: where an environment lives between the two passes.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A memory tier, fastest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Tier {
    /// Device memory (a GPU, or a capped arena of host memory on the CPU backend).
    Device,
    /// Host memory.
    Host,
    /// A file in the run's scratch directory.
    Disk,
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Tier::Device => "device",
            Tier::Host => "host",
            Tier::Disk => "disk",
        })
    }
}
