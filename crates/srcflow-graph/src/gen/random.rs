//! Random MPS and MPO with a decaying bond spectrum, and perturbed identities.

use crate::train::{Kind, Train};
use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use rand_pcg::Pcg64;
use srcflow_tensor::tensor::{Tensor, C64};

/// Bond right of `site` in an `n`-site train: `max_bond`, capped by the dimensions on each side.
fn bond(site: usize, n: usize, phys: usize, max_bond: usize) -> usize {
    let cap = |sites: usize| phys.checked_pow(sites as u32).unwrap_or(usize::MAX);
    max_bond.min(cap(site + 1)).min(cap(n - site - 1))
}

/// One random core `[l, r, u, d]`, right-bond slice `b` weighted by `decay^(b / (r - 1))`.
fn random_core(rng: &mut Pcg64, shape: [usize; 4], decay: f64) -> Tensor {
    let [l, r, u, d] = shape;
    let scale = 1.0 / ((2 * l * d) as f64).sqrt();
    let mut core = Tensor::zeros(shape.to_vec());
    for (index, z) in core.data_mut().iter_mut().enumerate() {
        let b = (index / (u * d)) % r;
        let weight = if r > 1 {
            decay.powf(b as f64 / (r - 1) as f64)
        } else {
            1.0
        };
        let (re, im): (f64, f64) = (rng.sample(StandardNormal), rng.sample(StandardNormal));
        *z = C64::new(re, im) * (scale * weight);
    }
    core
}

/// Shapes `[l, r, u, d]` of an `n`-site train with the given legs and bond cap.
fn shapes(n: usize, up: usize, down: usize, max_bond: usize) -> Vec<[usize; 4]> {
    let bonds: Vec<usize> = (0..n - 1)
        .map(|s| bond(s, n, up * down, max_bond))
        .collect();
    (0..n)
        .map(|s| {
            [
                if s == 0 { 1 } else { bonds[s - 1] },
                if s + 1 == n { 1 } else { bonds[s] },
                up,
                down,
            ]
        })
        .collect()
}

/// A random complex MPS: `sites` sites of dimension `phys`, bonds ≤ `bond`, spectrum decaying to `decay`.
pub fn random_mps(sites: usize, phys: usize, bond: usize, decay: f64, seed: u64) -> Train {
    let mut rng = Pcg64::seed_from_u64(seed);
    let cores = shapes(sites, phys, 1, bond)
        .into_iter()
        .map(|s| random_core(&mut rng, s, decay))
        .collect();
    Train::new(Kind::Mps, cores).expect("consistent shapes")
}

/// A random complex MPO with legs `up × down`, bonds ≤ `bond`, spectrum decaying to `decay`.
pub fn random_mpo(
    sites: usize,
    up: usize,
    down: usize,
    bond: usize,
    decay: f64,
    seed: u64,
) -> Train {
    let mut rng = Pcg64::seed_from_u64(seed);
    let cores = shapes(sites, up, down, bond)
        .into_iter()
        .map(|s| random_core(&mut rng, s, decay))
        .collect();
    Train::new(Kind::Mpo, cores).expect("consistent shapes")
}

/// The identity MPO plus `eps` times a random MPO of bond `bond` (bond `bond` overall).
pub fn perturbed_identity(sites: usize, phys: usize, bond: usize, eps: f64, seed: u64) -> Train {
    let mut rng = Pcg64::seed_from_u64(seed);
    let cores = shapes(sites, phys, phys, bond)
        .into_iter()
        .map(|shape| {
            let mut core = random_core(&mut rng, shape, 1.0);
            core.scale(C64::new(eps, 0.0));
            for p in 0..phys {
                core.data_mut()[p * phys + p] += C64::new(1.0, 0.0);
            }
            core
        })
        .collect();
    Train::new(Kind::Mpo, cores).expect("consistent shapes")
}
