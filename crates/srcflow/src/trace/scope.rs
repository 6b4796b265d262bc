//! `TraceScope`: whose lanes a trace draws: a whole run (one process, or a simulation of
//! several ranks), or one rank's part of a run under MPI.

use srcflow_graph::graph::{Cols, LaneId, SweepGraph};
use srcflow_sched::ranks::RankLayout;

/// Flow arrows one rank's trace may hold; each rank's ids start at a multiple of it, so that
/// the ranks' traces join without clashes.
const FLOWS_PER_RANK: u64 = 1 << 32;

/// Whose lanes a trace draws.
#[derive(Clone, Copy, Debug)]
pub(super) struct TraceScope {
    /// The rank whose part it is (`None`: every rank of the graph).
    pub rank: Option<usize>,
    /// Ranks in the run.
    pub ranks: usize,
    /// The devices it draws.
    pub devices: Cols,
}

impl TraceScope {
    /// Every device and rank of `graph`.
    pub fn whole(graph: &SweepGraph) -> Self {
        TraceScope {
            rank: None,
            ranks: graph.ranks,
            devices: Cols {
                start: 0,
                end: graph.devices,
            },
        }
    }

    /// The part of `layout`'s rank in a run of `devices` devices under MPI.
    pub fn rank(layout: RankLayout, devices: usize) -> Self {
        TraceScope {
            rank: Some(layout.rank),
            ranks: layout.ranks,
            devices: layout.devices_of(layout.rank, devices),
        }
    }

    /// The rank whose lanes an event logged on `rank` ran on (a rank's own log says 0).
    pub fn rank_of(&self, rank: usize) -> usize {
        self.rank.unwrap_or(rank)
    }

    /// True when it draws `device`.
    pub fn draws(&self, device: usize) -> bool {
        (self.devices.start..self.devices.end).contains(&device)
    }

    /// The lanes it draws, of a run of `graph`.
    pub fn lanes(&self, graph: &SweepGraph) -> Vec<LaneId> {
        match self.rank {
            None => LaneId::all(graph.devices, graph.ranks),
            Some(rank) => LaneId::all(graph.devices, 1)
                .into_iter()
                .filter(|id| !id.lane.per_device() || self.draws(id.device))
                .map(|id| LaneId { rank, ..id })
                .collect(),
        }
    }

    /// The first id of its flow arrows.
    pub fn first_flow(&self) -> u64 {
        self.rank.unwrap_or(0) as u64 * FLOWS_PER_RANK
    }
}
