//! `Task`: one node of the sweep graph, with everything a scheduler needs to know about it.

use super::{Cols, DataId, Pass};
use serde::{Deserialize, Serialize};
use std::fmt;

/// What a task does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Op {
    /// Read one input core of `layer` for `pass`.
    ReadSite {
        /// Layer index (0 = top).
        layer: usize,
        /// Pass the core is read for.
        pass: Pass,
    },
    /// Build C_site from C_{site-1} (left-to-right pass).
    Env,
    /// Sketch Y_site from C_{site-1} and S_{site+1}.
    Sketch,
    /// Orthonormal basis η_site of the gathered Y_site.
    Qr,
    /// Project onto η_site: S_site from S_{site+1}.
    Project,
    /// The first output core η_0, absorbing the rest of the product.
    First,
    /// The exact two-site product, truncated by an SVD (n = 2 only).
    Exact,
    /// Hand one output core to the sink (memory or disk).
    WriteSite,
}

/// The lane (worker queue) a task runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Lane {
    /// Numerical kernels.
    Compute,
    /// Reading input cores and writing output cores.
    Io,
}

/// One node of the sweep graph.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Task {
    /// What it does.
    pub op: Op,
    /// The site it works on.
    pub site: usize,
    /// The sketch columns it covers (env and sketch tasks).
    pub cols: Option<Cols>,
    /// Values it reads, in the order the kernel takes them.
    pub inputs: Vec<DataId>,
    /// Values it writes.
    pub outputs: Vec<DataId>,
    /// Real floating-point operations.
    pub flops: f64,
    /// Bytes alive at its peak, inputs and outputs included.
    pub peak_bytes: u64,
    /// The lane it runs on.
    pub lane: Lane,
    /// Position in the sweep (left-to-right sites, then right-to-left sites): its priority.
    pub step: usize,
}

impl fmt::Display for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.op {
            Op::ReadSite {
                layer,
                pass: Pass::LeftToRight,
            } => format!("read[{layer}]→"),
            Op::ReadSite {
                layer,
                pass: Pass::RightToLeft,
            } => format!("read[{layer}]←"),
            Op::Env => "env".into(),
            Op::Sketch => "sketch".into(),
            Op::Qr => "qr".into(),
            Op::Project => "project".into(),
            Op::First => "first".into(),
            Op::Exact => "exact".into(),
            Op::WriteSite => "write".into(),
        };
        match self.cols {
            Some(cols) => write!(f, "{name}({}, {cols})", self.site),
            None => write!(f, "{name}({})", self.site),
        }
    }
}
