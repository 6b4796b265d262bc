//! Which kept values no resume can read any more: once the right-to-left pass has kept a
//! whole projected environment S_k and every output core from site k on, a resume starts at
//! site k − 1, and the environments from site k − 1 on and the S of later sites are dead
//! weight on the disk.

use crate::graph::{DataId, Shared};
use std::collections::HashMap;

/// The sites and devices of the sweep a checkpoint is of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SweepSize {
    /// Sites of the product.
    pub sites: usize,
    /// Devices the projected environments are split between (one part each, when several).
    pub devices: usize,
}

impl SweepSize {
    /// The lowest site `k` (at least 1) whose S_k is whole in `kept` (itself, or every
    /// device's part) with every output core from `k` on: where a resume picks up.
    pub fn resume_site<V>(&self, kept: &HashMap<DataId, V>) -> Option<usize> {
        let whole = |site| {
            kept.contains_key(&DataId::Proj { site })
                || (0..self.devices).all(|device| {
                    let of = Shared::Proj { site };
                    kept.contains_key(&DataId::Part { of, device })
                })
        };
        let cores_from =
            |site| (site..self.sites).all(|site| kept.contains_key(&DataId::Basis { site }));
        (1..self.sites).find(|&site| whole(site) && cores_from(site))
    }
}

/// The values of `kept` that a resume from site `k` does not read: the environments of sites
/// `k − 1` on, and the projected environments (whole or parts) of sites after `k`.
pub fn superseded<V>(kept: &HashMap<DataId, V>, k: usize) -> Vec<DataId> {
    let dead = |id: &DataId| match *id {
        DataId::Env { site, .. } => site + 1 >= k,
        DataId::Proj { site }
        | DataId::Part {
            of: Shared::Proj { site },
            ..
        } => site > k,
        _ => false,
    };
    kept.keys().filter(|id| dead(id)).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Cols;

    fn env(site: usize) -> DataId {
        let cols = Cols { start: 0, end: 4 };
        DataId::Env { site, cols }
    }

    #[test]
    fn a_resume_point_needs_a_whole_projection_and_every_core_after_it() {
        let size = SweepSize {
            sites: 6,
            devices: 2,
        };
        let mut kept: HashMap<DataId, ()> = (0..5).map(|site| (env(site), ())).collect();
        assert_eq!(size.resume_site(&kept), None);
        for site in [5, 4, 3] {
            kept.insert(DataId::Basis { site }, ());
        }
        let part = |site, device| DataId::Part {
            of: Shared::Proj { site },
            device,
        };
        kept.insert(part(4, 0), ());
        kept.insert(part(4, 1), ());
        kept.insert(part(3, 0), ());
        assert_eq!(size.resume_site(&kept), Some(4));
        let mut dead = superseded(&kept, 4);
        dead.sort_by_key(|id| id.to_string());
        assert_eq!(dead, [env(3), env(4)]);
        kept.insert(part(3, 1), ());
        assert_eq!(size.resume_site(&kept), Some(3));
        let dead = superseded(&kept, 3);
        assert_eq!(dead.len(), 5, "{dead:?}");
    }
}
