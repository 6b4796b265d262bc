//! `DataId`: the name of every value that flows along a graph edge.

use serde::{Deserialize, Serialize};
use srcflow_tensor::Tier;
use std::fmt;

/// A contiguous range `start..end` of sketch columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Cols {
    /// First column.
    pub start: usize,
    /// One past the last column.
    pub end: usize,
}

impl Cols {
    /// Number of columns.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// True for an empty range.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

impl fmt::Display for Cols {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// Which pass of the sweep a value belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Pass {
    /// Building the environments C_j.
    LeftToRight,
    /// Sketching, factoring and projecting.
    RightToLeft,
}

impl Pass {
    /// Every pass, in sweep order.
    pub const BOTH: [Pass; 2] = [Pass::LeftToRight, Pass::RightToLeft];

    /// A short name for reports and traces.
    pub fn name(&self) -> &'static str {
        match self {
            Pass::LeftToRight => "left-to-right",
            Pass::RightToLeft => "right-to-left",
        }
    }
}

/// The name of a value passed between tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DataId {
    /// An input core `[l, r, u, d]`, read once per pass so it need not stay resident between passes.
    Core {
        /// Layer index (0 = top).
        layer: usize,
        /// Site index.
        site: usize,
        /// Pass that reads it.
        pass: Pass,
    },
    /// The sketched left environment C_site (after absorbing `site`) for some columns.
    Env {
        /// Last site absorbed.
        site: usize,
        /// Sketch columns held.
        cols: Cols,
    },
    /// Columns of the sketch Y_site.
    Sketch {
        /// Site.
        site: usize,
        /// Sketch columns held.
        cols: Cols,
    },
    /// The output core η_site in basis form `[OutLeft, Up, Down, OutRight]`.
    Basis {
        /// Site.
        site: usize,
    },
    /// The projected right environment S_site.
    Proj {
        /// Site.
        site: usize,
    },
    /// The cores of `site` folded into S_{site+1}, `[Left.., Up, Down, OutRight]`: what the
    /// sketch and the projection of a folding site share.
    Folded {
        /// Site.
        site: usize,
    },
    /// Receipt for an output core η_site handed to the sink until the rounding sweep (it holds
    /// no data).
    Stored {
        /// Site.
        site: usize,
    },
    /// An output core η_site read back from the sink for the rounding sweep, in
    /// basis form.
    Draft {
        /// Site.
        site: usize,
    },
    /// What the rounding sweep carries from `site` to the next: Σ·Vᴴ `[kept, OutRight]`.
    Carry {
        /// Site.
        site: usize,
    },
    /// An output core after the rounding sweep, in basis form.
    Rounded {
        /// Site.
        site: usize,
    },
    /// A whole copy of a shared value on `device` (made by an all-gather, a gather or, for a
    /// basis, a scatter of the device's rows).
    Replica {
        /// The value copied.
        of: Shared,
        /// The device holding the copy.
        device: usize,
    },
    /// `device`'s share of a value, before an all-gather joins the shares.
    Part {
        /// The value shared.
        of: Shared,
        /// The device holding the share.
        device: usize,
    },
    /// A copy of the environment slice `Env { site, cols }` on its way off the device and back.
    Spilled {
        /// Last site absorbed.
        site: usize,
        /// Sketch columns held.
        cols: Cols,
        /// Which copy.
        stage: Stage,
    },
}

/// The values that several devices of a node need: what [`DataId::Replica`] and
/// [`DataId::Part`] hold copies and shares of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Shared {
    /// An input core, read once for the node ([`DataId::Core`]).
    Core {
        /// Layer index (0 = top).
        layer: usize,
        /// Site index.
        site: usize,
        /// Pass that reads it.
        pass: Pass,
    },
    /// Sketch columns gathered for the QR ([`DataId::Sketch`]).
    Sketch {
        /// Site.
        site: usize,
        /// Sketch columns held.
        cols: Cols,
    },
    /// A basis η_site ([`DataId::Basis`]).
    Basis {
        /// Site.
        site: usize,
    },
    /// A projected environment S_site ([`DataId::Proj`]).
    Proj {
        /// Site.
        site: usize,
    },
}

impl Shared {
    /// The name of the whole value.
    pub fn whole(&self) -> DataId {
        match *self {
            Shared::Core { layer, site, pass } => DataId::Core { layer, site, pass },
            Shared::Sketch { site, cols } => DataId::Sketch { site, cols },
            Shared::Basis { site } => DataId::Basis { site },
            Shared::Proj { site } => DataId::Proj { site },
        }
    }
}

/// The copies a spilled environment goes through: device → host (→ disk → host) → device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Stage {
    /// Downloaded to host memory.
    Host,
    /// Written to the scratch disk.
    Disk,
    /// Read back from disk into host memory.
    HostReturn,
    /// Uploaded back to the device, ready for the sketch.
    Device,
}

impl DataId {
    /// The tier a value of this name lives on.
    pub fn tier(&self) -> Tier {
        match self {
            DataId::Spilled {
                stage: Stage::Host | Stage::HostReturn,
                ..
            } => Tier::Host,
            DataId::Spilled {
                stage: Stage::Disk, ..
            } => Tier::Disk,
            _ => Tier::Device,
        }
    }
}

impl fmt::Display for DataId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataId::Core { layer, site, pass } => {
                let p = if *pass == Pass::LeftToRight {
                    "→"
                } else {
                    "←"
                };
                write!(f, "core[{layer}][{site}]{p}")
            }
            DataId::Env { site, cols } => write!(f, "C{site}[{cols}]"),
            DataId::Sketch { site, cols } => write!(f, "Y{site}[{cols}]"),
            DataId::Basis { site } => write!(f, "η{site}"),
            DataId::Proj { site } => write!(f, "S{site}"),
            DataId::Folded { site } => write!(f, "W{site}"),
            DataId::Stored { site } => write!(f, "stored{site}"),
            DataId::Draft { site } => write!(f, "draft{site}"),
            DataId::Carry { site } => write!(f, "carry{site}"),
            DataId::Rounded { site } => write!(f, "rounded{site}"),
            DataId::Spilled { site, cols, stage } => write!(f, "C{site}[{cols}]@{stage:?}"),
            DataId::Replica { of, device } => write!(f, "{}@device{device}", of.whole()),
            DataId::Part { of, device } => write!(f, "{}/part{device}", of.whole()),
        }
    }
}
