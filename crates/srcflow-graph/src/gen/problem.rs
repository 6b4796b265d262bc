//! `generate`: the built-in problems behind `srcflow gen` and the default run.

use super::{perturbed_identity, random_mpo, random_mps, time_evolution, Model};
use crate::train::{Layer, Stack};
use srcflow_tensor::error::Result;

/// The built-in problem families.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    /// Random MPO · random MPS, both with a decaying bond spectrum.
    Random,
    /// Transverse-field Ising Trotter MPO (to the power `depth`) · random MPS.
    Ising,
    /// Heisenberg Trotter MPO (to the power `depth`) · random MPS.
    Heisenberg,
    /// (identity + ε·random MPO) · (identity + ε·random MPO): an MPO·MPO product.
    Identity,
}

/// Sizes and parameters of a generated problem (the options of `srcflow gen`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProblemSpec {
    /// Number of sites.
    pub sites: usize,
    /// Physical dimension (2 for the spin chains).
    pub phys: usize,
    /// Bond of the state (random, ising, heisenberg) or of the second MPO (identity).
    pub bond: usize,
    /// Bond of the random MPO(s).
    pub mpo_bond: usize,
    /// Number of time-evolution MPO layers (ising, heisenberg).
    pub depth: usize,
    /// Time step of the Trotter MPOs.
    pub dt: f64,
    /// Ratio of the smallest to the largest weight of the random bond spectra.
    pub decay: f64,
    /// Size of the perturbation of the identity problems.
    pub eps: f64,
    /// Seed of the random cores.
    pub seed: u64,
}

impl Default for ProblemSpec {
    /// The defaults of `srcflow gen`.
    fn default() -> Self {
        ProblemSpec {
            sites: 20,
            phys: 2,
            bond: 32,
            mpo_bond: 8,
            depth: 1,
            dt: 0.1,
            decay: 1e-2,
            eps: 0.1,
            seed: 1,
        }
    }
}

impl ProblemKind {
    /// Every family, with the name `srcflow gen` knows it by.
    pub const ALL: [(&'static str, ProblemKind); 4] = [
        ("random", ProblemKind::Random),
        ("ising", ProblemKind::Ising),
        ("heisenberg", ProblemKind::Heisenberg),
        ("identity", ProblemKind::Identity),
    ];
}

/// Builds the stack of a generated problem.
pub fn generate(kind: ProblemKind, spec: &ProblemSpec) -> Result<Stack> {
    spec.check(kind)?;
    let s = spec;
    let psi = || Layer {
        name: "psi".into(),
        train: random_mps(s.sites, s.phys, s.bond, s.decay, s.seed),
    };
    let evolution = |model| {
        let u = time_evolution(model, s.sites, s.dt);
        let mut layers: Vec<Layer> = (0..s.depth)
            .map(|i| Layer {
                name: format!("U{i}"),
                train: u.clone(),
            })
            .collect();
        layers.push(psi());
        layers
    };
    let layers = match kind {
        ProblemKind::Random => vec![
            Layer {
                name: "H".into(),
                train: random_mpo(
                    s.sites,
                    s.phys,
                    s.phys,
                    s.mpo_bond,
                    s.decay,
                    s.seed.wrapping_add(1),
                ),
            },
            psi(),
        ],
        ProblemKind::Ising => evolution(Model::Ising),
        ProblemKind::Heisenberg => evolution(Model::Heisenberg),
        ProblemKind::Identity => vec![
            Layer {
                name: "A".into(),
                train: perturbed_identity(s.sites, s.phys, s.mpo_bond, s.eps, s.seed),
            },
            Layer {
                name: "B".into(),
                train: perturbed_identity(s.sites, s.phys, s.bond, s.eps, s.seed.wrapping_add(1)),
            },
        ],
    };
    Stack::new(layers)
}
