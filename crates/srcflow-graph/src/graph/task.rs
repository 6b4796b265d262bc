//! `Task`: one node of the sweep graph, with everything a scheduler needs to know about it.

use super::{share, Cols, DataId, Op, Pass, Shared};
use serde::{Deserialize, Serialize};
use srcflow_tensor::kernels::Orders;
use srcflow_tensor::tensor::Work;
use std::fmt;

/// The lane (worker queue) a task runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Lane {
    /// Numerical kernels.
    Compute,
    /// Reading input cores and writing output cores.
    Io,
    /// Copies from the device to host memory.
    Download,
    /// Copies from host memory to the device.
    Upload,
    /// Writes to the scratch disk.
    DiskWrite,
    /// Reads from the scratch disk.
    DiskRead,
    /// Copies between devices (gathers, scatters and all-gathers).
    Collective,
    /// Values exchanged with other ranks (over MPI). Under MPI it runs many tasks at
    /// once, each waiting for its value to arrive; a simulation runs one message at a time.
    Network,
}

impl Lane {
    /// Every lane, in display order.
    pub const ALL: [Lane; 8] = [
        Lane::Compute,
        Lane::Io,
        Lane::Download,
        Lane::Upload,
        Lane::DiskWrite,
        Lane::DiskRead,
        Lane::Collective,
        Lane::Network,
    ];

    /// True for the lanes each device has its own of; the others (input and output files,
    /// the scratch disk) are the node's, shared by its devices.
    pub fn per_device(&self) -> bool {
        matches!(
            self,
            Lane::Compute | Lane::Download | Lane::Upload | Lane::Collective
        )
    }

    /// True for the lanes every machine model rates by bytes per second: all but compute
    /// (rated by flops) and the network (which only runs with several ranks).
    pub fn modelled(&self) -> bool {
        !matches!(self, Lane::Compute | Lane::Network)
    }

    /// A short name for reports and traces.
    pub fn name(&self) -> &'static str {
        match self {
            Lane::Compute => "compute",
            Lane::Io => "io",
            Lane::Download => "download",
            Lane::Upload => "upload",
            Lane::DiskWrite => "disk-write",
            Lane::DiskRead => "disk-read",
            Lane::Collective => "collective",
            Lane::Network => "network",
        }
    }
}

/// One worker queue: a lane of one device, or one of a rank's shared lanes (`device` 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LaneId {
    /// The rank (node) whose lane it is: 0 but in a simulation of several ranks.
    pub rank: usize,
    /// The device whose lane it is (0 for the node's shared lanes).
    pub device: usize,
    /// Which lane.
    pub lane: Lane,
}

impl LaneId {
    /// Every lane of `devices` devices shared among `ranks` ranks (each owning a contiguous
    /// share): each device's own lanes, then each rank's shared ones.
    pub fn all(devices: usize, ranks: usize) -> Vec<LaneId> {
        let rank_of = |device: usize| {
            (0..ranks)
                .find(|&rank| share(devices, ranks, rank).end > device)
                .unwrap_or(0)
        };
        let own = (0..devices).flat_map(move |device| {
            Lane::ALL
                .into_iter()
                .filter(Lane::per_device)
                .map(move |lane| LaneId {
                    rank: rank_of(device),
                    device,
                    lane,
                })
        });
        let shared = (0..ranks).flat_map(|rank| {
            Lane::ALL
                .into_iter()
                .filter(|l| !l.per_device())
                .map(move |lane| LaneId {
                    rank,
                    device: 0,
                    lane,
                })
        });
        own.chain(shared).collect()
    }
}

/// One node of the sweep graph.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Task {
    /// What it does.
    pub op: Op,
    /// The site it works on.
    pub site: usize,
    /// The sketch columns it covers (env and sketch tasks; for a half-batch project task, the
    /// rows of its basis).
    pub cols: Option<Cols>,
    /// For a half-batch node made by [`SweepGraph::split_in_halves`]: the columns of the whole
    /// output it writes a slice of (its `cols`) into.
    ///
    /// [`SweepGraph::split_in_halves`]: super::SweepGraph::split_in_halves
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<Cols>,
    /// Values it reads, in the order the kernel takes them.
    pub inputs: Vec<DataId>,
    /// Values it writes.
    pub outputs: Vec<DataId>,
    /// Real floating-point operations.
    pub flops: f64,
    /// Its work by kind of step (compute tasks), which performance models time.
    #[serde(default)]
    pub work: Work,
    /// Its kernel's contraction orders, chosen on its input shapes when the graph was built
    /// (compute tasks).
    #[serde(default, skip_serializing_if = "Orders::is_empty")]
    pub orders: Orders,
    /// Bytes alive at its peak, inputs and outputs included.
    pub peak_bytes: u64,
    /// Bytes it moves between tiers or files (read, write, spill and fetch tasks; 0 for compute).
    pub moved_bytes: u64,
    /// The lane it runs on.
    pub lane: Lane,
    /// The device it runs on, or whose value it moves (0 on a single device).
    #[serde(default)]
    pub device: usize,
    /// The rank of its device, whose shared lanes it runs on: 0 but in a simulation of
    /// several ranks (`ranks::across_nodes` in srcflow-sched).
    #[serde(default)]
    pub rank: usize,
    /// Position in the sweep (left-to-right sites, then right-to-left sites): its priority.
    /// Spills carry the step of the env they follow, fetches the step of the sketch they feed.
    pub step: usize,
}

impl Task {
    /// The worker queue it runs on: its device's lane, or its rank's shared one.
    pub fn lane_id(&self) -> LaneId {
        let device = if self.lane.per_device() {
            self.device
        } else {
            0
        };
        LaneId {
            rank: self.rank,
            device,
            lane: self.lane,
        }
    }

    /// True when it reads a folded site W (a sketch or projection from [`Op::Fold`]'s output).
    pub fn reads_folded(&self) -> bool {
        self.inputs
            .iter()
            .any(|id| matches!(id, DataId::Folded { .. }))
    }

    /// True when a half-batch node of this task reads only its rows of input `id` (the
    /// environment of env and sketch tasks, the basis of project tasks), cut along the first
    /// axis.
    pub fn slices_input(&self, id: &DataId) -> bool {
        match self.op {
            Op::Env | Op::Sketch => matches!(id, DataId::Env { .. } | DataId::Spilled { .. }),
            Op::Project => matches!(
                id,
                DataId::Basis { .. }
                    | DataId::Replica {
                        of: Shared::Basis { .. },
                        ..
                    }
            ),
            _ => false,
        }
    }
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
            op => op.name().to_string(),
        };
        match (self.cols, self.within) {
            (Some(cols), Some(within)) => write!(f, "{name}({}, {cols} of {within})", self.site)?,
            (Some(cols), None) => write!(f, "{name}({}, {cols})", self.site)?,
            _ => write!(f, "{name}({})", self.site)?,
        }
        if self.device > 0 {
            write!(f, " on device {}", self.device)?;
        }
        Ok(())
    }
}
