//! Which kept values no resume can read any more: once the right-to-left pass has kept a
//! whole projected environment S_k and every output core from site k on, a resume starts at
//! site k − 1, and the environments from site k − 1 on and the S of later sites are dead
//! weight on the disk.

use srcflow_graph::graph::{DataId, Shared, SweepGraph};
use std::collections::HashMap;

/// The sites of the sweep a checkpoint is of, and which devices make a part of each site's S.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepSize {
    /// Sites of the product.
    pub sites: usize,
    /// The devices that make a part of S_site, by site (none where one task makes it whole).
    pub parts: Vec<Vec<usize>>,
}

impl SweepSize {
    /// The sites of `graph` and the parts its tasks make of each S.
    pub fn of(graph: &SweepGraph) -> Self {
        let mut parts = vec![vec![]; graph.sites()];
        for task in graph.tasks() {
            for id in &task.outputs {
                if let DataId::Part {
                    of: Shared::Proj { site },
                    device,
                } = *id
                {
                    if !parts[site].contains(&device) {
                        parts[site].push(device);
                    }
                }
            }
        }
        SweepSize {
            sites: graph.sites(),
            parts,
        }
    }

    /// The lowest site `k` (at least 1) whose S_k is whole in `kept` (itself, or every part
    /// the sweep makes of it) with every output core from `k` on: where a resume picks up.
    pub fn resume_site<V>(&self, kept: &HashMap<DataId, V>) -> Option<usize> {
        let whole = |site: usize| {
            let parts = &self.parts[site];
            kept.contains_key(&DataId::Proj { site })
                || (!parts.is_empty()
                    && parts.iter().all(|&device| {
                        let of = Shared::Proj { site };
                        kept.contains_key(&DataId::Part { of, device })
                    }))
        };
        let cores_from =
            |site| (site..self.sites).all(|site| kept.contains_key(&DataId::Basis { site }));
        (1..self.sites).find(|&site| whole(site) && cores_from(site))
    }
}

/// The values of `kept` that a resume from site `k` does not read: the environments of sites
/// `k − 1` on, and the projected environments (whole or parts) of sites after `k`.
pub(crate) fn superseded<V>(kept: &HashMap<DataId, V>, k: usize) -> Vec<DataId> {
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
    use srcflow_graph::graph::Cols;

    fn env(site: usize) -> DataId {
        let cols = Cols { start: 0, end: 4 };
        DataId::Env { site, cols }
    }

    #[test]
    fn the_parts_of_s_are_those_the_sweep_makes() {
        use srcflow_graph::gen::{generate, ProblemKind, ProblemSpec};
        use srcflow_graph::graph::{GraphOptions, SweepGraph};
        let spec = ProblemSpec {
            sites: 6,
            bond: 8,
            ..ProblemSpec::default()
        };
        let stack = generate(ProblemKind::Random, &spec).unwrap().shape();
        let mut options = GraphOptions::new(8);
        let one = SweepSize::of(&SweepGraph::build(&stack, &options).unwrap());
        assert_eq!((one.sites, one.parts), (6, vec![vec![]; 6]));
        options.devices = 2;
        let two = SweepSize::of(&SweepGraph::build(&stack, &options).unwrap());
        assert_eq!(two.parts[3], [0, 1]);
        assert!(two.parts[0].is_empty(), "site 0 makes no S");
    }

    #[test]
    fn a_resume_point_needs_a_whole_projection_and_every_core_after_it() {
        let size = SweepSize {
            sites: 6,
            parts: vec![vec![0, 1]; 6],
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
