//! Ranks: one sweep graph run by several processes (MPI ranks), each owning a contiguous share
//! of the devices.
//!
//! Every rank builds the same graph from the same shapes and keeps the tasks of its own devices
//! ([`RankGraph`]). A value that a task of another rank reads leaves its rank through a send
//! task (on the producing device's download lane) and arrives through a receive task (on the
//! rank's network lane). The ranks exchange such values in collectives ([`Exchange`]), in one
//! order that every rank derives from the graph, so no rank can wait on a collective that
//! another rank has not reached for a value it has not made. A half-batch rewrite stays inside
//! its rank: it splits a node of one device, and its halves still make the one value that the
//! collective carries.

mod exchange_plan;
mod in_process;
mod localize;
mod network;
mod transport;
mod wire;

pub use exchange_plan::{Collective, Exchange};
pub use in_process::InProcessRanks;
pub use localize::RankGraph;
pub(crate) use network::{ExchangeLane, Post};
pub use transport::Transport;
pub use wire::{decode_tensors, encode_tensors};

use crate::error::{Error, Result};
use crate::graph::{share, Cols};

/// Which rank this process is and how many there are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RankLayout {
    /// This process's rank, from 0.
    pub rank: usize,
    /// Ranks in the run.
    pub ranks: usize,
}

impl RankLayout {
    /// The layout of a run of one process.
    pub fn single() -> Self {
        RankLayout { rank: 0, ranks: 1 }
    }

    /// The layout of rank `rank` of `ranks`, checked against the run's `devices` (every rank
    /// owns at least one).
    pub fn new(rank: usize, ranks: usize, devices: usize) -> Result<Self> {
        if rank >= ranks {
            return Err(Error::Invalid(format!(
                "rank {rank} is not one of the run's {ranks} rank(s)"
            )));
        }
        if devices < ranks {
            return Err(Error::Invalid(format!(
                "{ranks} ranks need at least {ranks} devices (one each), found {devices} \
                 (--devices counts the devices of all ranks)"
            )));
        }
        Ok(RankLayout { rank, ranks })
    }

    /// The devices rank `rank` owns, of `devices` in all.
    pub fn devices_of(&self, rank: usize, devices: usize) -> Cols {
        share(devices, self.ranks, rank)
    }

    /// The rank that owns `device`, of `devices` in all.
    pub fn owner(&self, device: usize, devices: usize) -> usize {
        (0..self.ranks)
            .find(|&rank| {
                let own = self.devices_of(rank, devices);
                (own.start..own.end).contains(&device)
            })
            .unwrap_or(self.ranks - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::RankLayout;

    #[test]
    fn every_device_has_one_owner_and_ranks_own_contiguous_shares() {
        let layout = RankLayout::new(0, 3, 5).unwrap();
        let owners: Vec<usize> = (0..5).map(|d| layout.owner(d, 5)).collect();
        assert_eq!(owners, [0, 0, 1, 1, 2]);
        let err = RankLayout::new(0, 3, 2).unwrap_err().to_string();
        assert!(err.contains("3 ranks need at least 3 devices"), "{err}");
        assert!(RankLayout::new(3, 3, 4).is_err());
    }
}
