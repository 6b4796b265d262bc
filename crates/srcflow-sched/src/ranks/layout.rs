//! `RankLayout`: which rank a process is, and which devices each rank owns.

use srcflow_graph::graph::{share, Cols};
use srcflow_tensor::error::{Error, Result};

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
        if ranks == 0 {
            return Err(Error::Invalid(
                "a run needs at least one rank, found 0".into(),
            ));
        }
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

    /// The rank that owns `device` (one of `devices` in all).
    pub fn owner(&self, device: usize, devices: usize) -> usize {
        (0..self.ranks)
            .find(|&rank| {
                let own = self.devices_of(rank, devices);
                (own.start..own.end).contains(&device)
            })
            .expect("the ranks' shares cover every device")
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
