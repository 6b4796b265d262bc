//! `RunIdentity`: what makes two runs the same run, so that one may resume from the other's
//! checkpoint: the problem's contents, the options, the seed, the devices and srcflow's version.

use crate::engine::CoreSource;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use srcflow_graph::graph::{Lane, SweepGraph};
use srcflow_graph::train::StackShape;
use srcflow_tensor::error::Result;
use std::collections::BTreeMap;
use xxhash_rust::xxh3::Xxh3;

/// What a checkpoint was made for, by name: two runs of equal identities compute the same
/// values, bit for bit.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunIdentity(BTreeMap<String, Value>);

impl RunIdentity {
    /// The identity of a run of `graph` (its whole sweep, before any checkpoint task) on the
    /// problem `source` serves, with sketches of `seed` over `ranks` ranks, by this build of
    /// srcflow, on `backend`: its name, what decides its kernels' last bits
    /// ([`srcflow_tensor::backend::Backend::arithmetic`]) and the kernel threads of each device (a
    /// GEMM's sums are split by thread). Reads every input core once, to fingerprint the
    /// problem's contents. (A float is kept as its shortest exact text, which JSON's numbers do
    /// not promise to give back.)
    pub fn of_run(
        graph: &SweepGraph,
        source: &dyn CoreSource,
        seed: u64,
        ranks: usize,
        backend: (&str, &str, &[usize]),
    ) -> Result<Self> {
        let mut identity = RunIdentity::default();
        identity.set("srcflow version", env!("CARGO_PKG_VERSION"));
        identity.set("srcflow build", super::build_id::build_id());
        identity.set("backend", backend.0);
        identity.set("kernels", backend.1);
        identity.set("threads per device", backend.2);
        identity.set("problem", problem_fingerprint(&graph.stack, source)?);
        identity.set("bra conjugated", source.conjugates_bra());
        identity.set("sites folded", graph.folded_sites());
        identity.set("chi_out", graph.chi_out);
        identity.set("sketch columns", graph.sketch);
        identity.set("cutoff", graph.cutoff.to_string());
        identity.set("element type", graph.dtype.to_string());
        identity.set("devices", graph.devices);
        identity.set("ranks", ranks);
        identity.set("seed", seed);
        identity.set("batch columns", batch_columns(graph));
        identity.set("sweep graph", compute_fingerprint(graph));
        Ok(identity)
    }

    /// Sets `name` to `value`.
    pub fn set(&mut self, name: &str, value: impl Serialize) {
        let value = serde_json::to_value(value).expect("identity values are plain data");
        self.0.insert(name.to_string(), value);
    }

    /// The widest batch of sketch columns of the run's environment tasks, when the identity
    /// names it.
    pub fn batch_columns(&self) -> Option<usize> {
        usize::try_from(self.0.get("batch columns")?.as_u64()?).ok()
    }

    /// The seed of the run, when the identity names one.
    pub fn seed(&self) -> Option<u64> {
        self.0.get("seed")?.as_u64()
    }

    /// What differs between this identity (a checkpoint's) and `here` (a run's), one phrase
    /// per name: "seed 3 there, 4 here".
    pub fn differences(&self, here: &RunIdentity) -> Vec<String> {
        let names = self.0.keys().chain(here.0.keys());
        let mut names: Vec<&String> = names.collect();
        names.sort();
        names.dedup();
        names
            .into_iter()
            .filter(|name| self.0.get(*name) != here.0.get(*name))
            .map(|name| {
                let shown = |identity: &RunIdentity| {
                    identity.0.get(name).map_or("none".into(), Value::to_string)
                };
                format!("{name} {} there, {} here", shown(self), shown(here))
            })
            .collect()
    }
}

/// The xxh3 hash, in hex, of every core of `stack` that `source` serves: its element type,
/// shape and bytes.
fn problem_fingerprint(stack: &StackShape, source: &dyn CoreSource) -> Result<String> {
    let mut hasher = Xxh3::new();
    hasher.update(serde_json::to_string(stack).unwrap_or_default().as_bytes());
    for (layer, shape) in stack.layers.iter().enumerate() {
        for site in 0..shape.cores.len() {
            let core = source.read(layer, site)?;
            hasher.update(core.dtype().to_string().as_bytes());
            for dim in core.shape() {
                hasher.update(&dim.to_le_bytes());
            }
            srcflow_tensor::with_array!(&core, a => hasher.update(bytemuck::cast_slice(a.data())));
        }
    }
    Ok(format!("{:032x}", hasher.digest128()))
}

/// The widest batch of sketch columns of `graph`'s environment tasks.
fn batch_columns(graph: &SweepGraph) -> usize {
    let envs = graph.tasks().filter_map(|t| t.cols);
    envs.map(|cols| cols.len()).max().unwrap_or(0)
}

/// The xxh3 hash, in hex, of what `graph`'s compute tasks are: their kernels, sites, columns
/// and devices in sweep order (what decides their values besides the problem and seed).
fn compute_fingerprint(graph: &SweepGraph) -> String {
    let mut hasher = Xxh3::new();
    for node in graph.nodes_in_order() {
        let task = &graph[node];
        if task.lane == Lane::Compute {
            let line = format!(
                "{} {} {:?} {:?} {}",
                task.op.name(),
                task.site,
                task.cols,
                task.within,
                task.device
            );
            hasher.update(line.as_bytes());
        }
    }
    format!("{:016x}", hasher.digest())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_name_each_setting_with_both_values() {
        let mut there = RunIdentity::default();
        there.set("seed", 3);
        there.set("chi_out", 32);
        there.set("devices", 1);
        let mut here = there.clone();
        assert!(there.differences(&here).is_empty());
        here.set("seed", 4);
        here.set("chi_out", 64);
        here.set("ranks", 2);
        assert_eq!(
            there.differences(&here),
            [
                "chi_out 32 there, 64 here",
                "ranks none there, 2 here",
                "seed 3 there, 4 here"
            ]
        );
    }
}
