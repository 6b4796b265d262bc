//! What several benches share: operands of random values on the CPU backend.

use rand::{Rng, SeedableRng};
use rand_distr::StandardNormal;
use rand_pcg::Pcg64;
use srcflow::backend::{Backend, CpuBackend, DeviceTensor};
use srcflow::tensor::{Tensor, C64};

/// A device tensor of `dims` filled with random values (normal real and imaginary parts). Random,
/// not patterned: a matrix of few distinct columns has low rank, and faer's QR of one runs
/// several times faster than of a full-rank matrix (a sketch has full rank).
pub fn filled(cpu: &CpuBackend, dims: Vec<usize>) -> DeviceTensor {
    let len = dims.iter().product::<usize>();
    let mut rng = Pcg64::seed_from_u64(len as u64);
    let data = (0..len)
        .map(|_| C64::new(rng.sample(StandardNormal), rng.sample(StandardNormal)))
        .collect();
    cpu.upload(&Tensor::new(dims, data).expect("dims match").into())
        .expect("the CPU backend uploads")
}
