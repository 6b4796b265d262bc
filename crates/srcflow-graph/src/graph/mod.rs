//! The sweep graph: both passes of SRC as tasks joined by the data they exchange.

mod build;
mod checkpoint;
mod data;
mod devices;
mod export;
mod kernel;
mod left_edge_work;
mod op;
mod options;
mod placement;
mod sizes;
mod split;
mod task;
mod task_id;
mod tasks;
#[cfg(test)]
pub(crate) mod test_shapes;
mod unfold;

pub use checkpoint::Resumed;
pub use data::{Cols, DataId, Pass, Shared, Stage};
pub use devices::share;
pub use kernel::KernelValues;
pub use op::{DeviceMemory, Op, Profile, ReadAhead, Supply};
pub use options::{GraphOptions, MOST_DEVICES};
pub use task::{Lane, LaneId, Task};
pub use task_id::TaskId;
pub use tasks::Dependency;

use crate::train::{Kind, StackShape};
use petgraph::stable_graph::StableDiGraph;
use serde::{Deserialize, Serialize};
use srcflow_tensor::tensor::DType;
use std::sync::Arc;

/// The tasks of one SRC sweep and their data dependencies (edge `a → b`: `b` reads what `a` wrote).
///
/// Built from shapes alone ([`SweepGraph::build`]); later passes may rewrite, place or simulate
/// it. A stable graph keeps node indices valid when nodes are added or removed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SweepGraph {
    /// Tasks (nodes) and the data they pass (edges); read and rewritten through
    /// [`SweepGraph::tasks`], [`SweepGraph::dependencies`] and the other methods of `tasks.rs`.
    pub(crate) graph: StableDiGraph<Arc<Task>, DataId>,
    /// The stack the graph computes.
    pub stack: StackShape,
    /// Output bond cap χ̄: the one asked for, or the largest rank the product can have at
    /// any cut where that is smaller.
    pub chi_out: usize,
    /// The χ̄ asked for, when it was above the largest rank the product can have (and
    /// `chi_out` is that rank instead).
    #[serde(default)]
    pub chi_out_asked: Option<usize>,
    /// Number of sketch columns (at most the largest rank the product can have).
    pub sketch: usize,
    /// Relative singular-value cutoff (0: none).
    #[serde(default)]
    pub cutoff: f64,
    /// The element type every task computes in.
    #[serde(default)]
    pub dtype: DType,
    /// Output bond between site `j` and `j + 1`, for every cut, as the sweep writes it
    /// (before the left-edge trim, [`SweepGraph::left_edge`]).
    pub out_bonds: Vec<usize>,
    /// Devices the sweep is shared between.
    #[serde(default = "one")]
    pub devices: usize,
    /// Ranks (nodes) the devices are shared among, each with io, disk and network lanes of its
    /// own: 1 but in a simulation of several (`ranks::across_nodes` in srcflow-sched).
    #[serde(default = "one")]
    pub ranks: usize,
    /// The prefetch window (sweep steps) the planner placed the environments for, when it
    /// narrowed the policy's to fit the budgets; the scheduler fetches ahead no further.
    #[serde(default)]
    pub planned_fetch_window: Option<usize>,
    /// Whether the right-to-left pass may fold a site's cores into S once, for both its sketch
    /// and its projection, where that saves flops ([`SweepGraph::folds`]).
    #[serde(default)]
    pub fold: bool,
    /// Sites whose fold the memory governor undid ([`SweepGraph::unfold`]).
    #[serde(default)]
    pub unfolded: std::collections::BTreeSet<usize>,
}

/// The line that says χ̄ was capped at `chi_out` when `asked` was above any rank the product
/// can have (`None` when it was not).
pub fn capped_chi_out(chi_out: usize, asked: Option<usize>) -> Option<String> {
    asked.map(|asked| {
        format!("chi_out {asked} asked: capped at {chi_out}, the largest rank the product can have at any cut")
    })
}

/// The device (and rank) count of graphs saved before devices (and ranks) were counted.
fn one() -> usize {
    1
}

impl SweepGraph {
    /// Number of sites.
    pub fn sites(&self) -> usize {
        self.stack.sites()
    }

    /// The kind of the output train.
    pub fn output_kind(&self) -> Kind {
        self.stack.output_kind()
    }

    /// Task ids in a valid execution order (by sweep step, then creation).
    pub fn nodes_in_order(&self) -> Vec<TaskId> {
        let mut nodes: Vec<TaskId> = self.task_ids().collect();
        nodes.sort_by_key(|&n| (self[n].step, n.index()));
        nodes
    }

    /// Number of environments the left-to-right pass builds (none on the exact two-site path).
    pub fn environments(&self) -> usize {
        if self.sites() > 2 {
            self.sites() - 1
        } else {
            0
        }
    }

    /// The pass a task of `op` at sweep `step` belongs to (the exact two-site path counts as
    /// right-to-left, where the output is made).
    pub fn pass_of(&self, op: Op, step: usize) -> Pass {
        if step + 1 < self.sites() && op != Op::Exact {
            Pass::LeftToRight
        } else {
            Pass::RightToLeft
        }
    }

    /// True when the graph ends with an SVD rounding sweep: the sketch is wider than χ̄, or a
    /// cutoff must drop the product's singular values (a QR's R only knows the sketch's).
    pub fn rounds(&self) -> bool {
        self.sketch > self.chi_out || self.cutoff > 0.0
    }

    /// The output's bonds after any rounding and the trim of its left edge, per cut: at most
    /// χ̄, the physical dimensions on either side and the product of the input bonds.
    pub fn bond_caps(&self) -> Vec<usize> {
        self.stack.trimmed_bonds(self.chi_out)
    }

    /// The last site whose core the left-edge trim rewrites: the sites up to the last cut
    /// whose bond exceeds the physical dimensions to its left, a region that ends before
    /// those reach the sketch width (`None`: no such cut, a rounding sweep trims the output,
    /// or the exact two-site path made it).
    pub fn left_edge(&self) -> Option<usize> {
        let physical_left = (0..self.out_bonds.len()).scan(1usize, |left, cut| {
            *left = left.saturating_mul(self.stack.phys(cut));
            Some(*left)
        });
        let last_cut = physical_left
            .zip(&self.out_bonds)
            .enumerate()
            .filter(|(_, (left, &bond))| bond > *left)
            .map(|(cut, _)| cut)
            .last();
        let exact_path = self.sites() == 2;
        last_cut
            .filter(|_| !self.rounds() && !exact_path)
            .map(|cut| cut + 1)
    }

    /// Total real flops of all tasks.
    pub fn total_flops(&self) -> f64 {
        self.graph.node_weights().map(|t| t.flops).sum()
    }
}
