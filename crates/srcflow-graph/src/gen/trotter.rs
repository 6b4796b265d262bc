//! Time-evolution MPOs of spin-1/2 chains by a first-order Trotter step (bond 4).

use crate::ops::exact_product;
use crate::train::{Kind, Layer, Stack, Train};
use faer::Mat;
use srcflow_tensor::tensor::{Tensor, C64};

/// Which nearest-neighbour Hamiltonian to evolve under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    /// Transverse-field Ising: `Z Z + g X`, with g = 1.05 (near the critical point).
    Ising,
    /// Isotropic Heisenberg: `X X + Y Y + Z Z`.
    Heisenberg,
}

/// Pauli matrices I, X, Y, Z.
fn pauli(which: usize) -> Mat<C64> {
    let (o, i, z) = (C64::new(1.0, 0.0), C64::new(0.0, 1.0), C64::new(0.0, 0.0));
    let entries = [[o, z, z, o], [z, o, o, z], [z, -i, i, z], [o, z, z, -o]][which];
    Mat::from_fn(2, 2, |r, c| entries[2 * r + c])
}

/// Kronecker product of two 2×2 matrices.
fn kron(a: &Mat<C64>, b: &Mat<C64>) -> Mat<C64> {
    Mat::from_fn(4, 4, |r, c| a[(r / 2, c / 2)] * b[(r % 2, c % 2)])
}

/// The two-site Hamiltonian term of `model`.
fn bond_term(model: Model) -> Mat<C64> {
    match model {
        Model::Ising => {
            let g = C64::new(1.05 / 2.0, 0.0);
            kron(&pauli(3), &pauli(3))
                + (kron(&pauli(1), &pauli(0)) + kron(&pauli(0), &pauli(1))) * faer::Scale(g)
        }
        Model::Heisenberg => (1..4)
            .map(|p| kron(&pauli(p), &pauli(p)))
            .fold(Mat::zeros(4, 4), |acc, t| acc + t),
    }
}

/// `exp(a)` by scaling and squaring with a Taylor series (accurate for the small gates here).
fn expm(a: &Mat<C64>) -> Mat<C64> {
    let squarings = 8;
    let scaled = a * faer::Scale(C64::new(0.5f64.powi(squarings), 0.0));
    let mut term = Mat::<C64>::identity(4, 4);
    let mut sum = term.clone();
    for k in 1..20 {
        term = &term * &scaled * faer::Scale(C64::new(1.0 / k as f64, 0.0));
        sum += &term;
    }
    (0..squarings).fold(sum, |m, _| &m * &m)
}

/// A layer of two-site gates on bonds `(j, j+1)` with `j ≡ parity (mod 2)`, as an MPO.
fn gate_layer(gate: &Mat<C64>, sites: usize, parity: usize) -> Train {
    // gate[(s1 s2), (t1 t2)] regrouped as (s1 t1) × (s2 t2) and split by an SVD
    let regrouped = Mat::from_fn(4, 4, |r, c| {
        gate[(2 * (r / 2) + c / 2, 2 * (r % 2) + c % 2)]
    });
    let svd = regrouped.thin_svd().expect("4x4 SVD converges");
    let root = |k: usize| svd.S().column_vector()[k].re.sqrt();
    let identity = |l: usize, r: usize| {
        let mut t = Tensor::zeros(vec![l, r, 2, 2]);
        t.data_mut()[0] = C64::new(1.0, 0.0);
        t.data_mut()[3] = C64::new(1.0, 0.0);
        t
    };
    let mut cores = Vec::with_capacity(sites);
    let mut site = 0;
    while site < sites {
        if site % 2 == parity && site + 1 < sites {
            let left = (0..4)
                .flat_map(|k| (0..4).map(move |st| (k, st)))
                .map(|(k, st)| svd.U()[(st, k)] * root(k));
            let left: Vec<C64> = left.collect();
            let right: Vec<C64> = (0..4)
                .flat_map(|k| (0..4).map(move |st| (k, st)))
                .map(|(k, st)| svd.V()[(st, k)].conj() * root(k))
                .collect();
            cores.push(Tensor::new(vec![1, 4, 2, 2], left).expect("sizes"));
            cores.push(Tensor::new(vec![4, 1, 2, 2], right).expect("sizes"));
            site += 2;
        } else {
            cores.push(identity(1, 1));
            site += 1;
        }
    }
    Train::new(Kind::Mpo, cores).expect("consistent shapes")
}

/// One first-order Trotter step `exp(-i dt H_odd) exp(-i dt H_even)` of `model` as an MPO.
pub fn time_evolution(model: Model, sites: usize, dt: f64) -> Train {
    let gate = expm(&(bond_term(model) * faer::Scale(C64::new(0.0, -dt))));
    let layer = |parity| Layer {
        name: format!("gates{parity}"),
        train: gate_layer(&gate, sites, parity),
    };
    let stack = Stack::new(vec![layer(1), layer(0)]).expect("layers fit");
    exact_product(&stack).expect("product of valid layers")
}
